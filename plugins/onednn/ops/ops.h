// The op families. Each run_* validates its call (counts, dtypes, shapes, params) and executes it
// synchronously. See docs/ops.md for the definitions; each file says which parts use oneDNN.
#pragma once

#include "op_context.h"

namespace sy_onednn {

void run_matmul(OpContext& ctx);
void run_unary(OpContext& ctx);
void run_unary_backward(OpContext& ctx);
void run_binary(OpContext& ctx);
void run_reduce(OpContext& ctx);
void run_argmax(OpContext& ctx);
void run_softmax(OpContext& ctx);
void run_softmax_backward(OpContext& ctx);
void run_cross_entropy(OpContext& ctx);
void run_cross_entropy_backward(OpContext& ctx);
void run_conv2d(OpContext& ctx);
void run_conv2d_fused(OpContext& ctx);  // CONV2D_FUSED: post-ops on conv_forward
void run_conv2d_backward_data(OpContext& ctx);
void run_conv2d_backward_weight(OpContext& ctx);
void run_pool2d(OpContext& ctx);
void run_pool2d_backward(OpContext& ctx);
void run_layer_norm(OpContext& ctx);
void run_layer_norm_backward(OpContext& ctx);
void run_gather(OpContext& ctx);
void run_scatter_add(OpContext& ctx);
void run_copy(OpContext& ctx);
void run_fill(OpContext& ctx);
void run_random(OpContext& ctx);
void run_sgd_update(OpContext& ctx);
void run_adam_update(OpContext& ctx);
void run_lstm_cell(OpContext& ctx);
void run_lstm_cell_backward(OpContext& ctx);
void run_rnn_sequence(OpContext& ctx);  // LSTM_SEQUENCE and GRU_SEQUENCE
void run_attention(OpContext& ctx);     // SCALED_DOT_PRODUCT_ATTENTION
void run_attention_backward(OpContext& ctx);
// LSTM_SEQUENCE_BACKWARD and GRU_SEQUENCE_BACKWARD (rnn_training.cpp)
void run_rnn_sequence_backward(OpContext& ctx);

// SOFTMAX or LOG_SOFTMAX (`op`) of x into y along `axis` with oneDNN, for ops built on softmax
// (cross-entropy). x and y are f32 or bf16 of one shape.
void softmax_views(OpContext& ctx, uint32_t op, const TensorView& x, const TensorView& y, int axis);

// Copies src into dst (same shape) converting dtypes as COPY defines; used by COPY itself and to
// stage operands. `threads` as from OpContext::threads_for.
void copy_view(const TensorView& src, const TensorView& dst, int threads);

// Writes zero into every element of `view` (any dtype, any strides).
void fill_zero(const TensorView& view, int threads);

// oneDNN's row-major sgemm, c = alpha op(a) op(b) + beta c, on this thread's OpenMP threads (see
// OpContext::use_threads); nothing for an empty m or n. INVALID_ARGUMENT naming the call's op and
// the sizes where oneDNN refuses the product.
void sgemm(const OpContext& ctx, char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha,
           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
           int64_t ldc);

// A dense scratch copy of `view` in dtype `dtype` (the view itself when it already is dense and of
// that dtype).
TensorView dense_copy(OpContext& ctx, const TensorView& view, uint32_t dtype);

// Runs `runner` on a copy of the call in which every tensor of `dtype` is replaced by an f32
// scratch tensor (inputs converted before, outputs rounded back once after). With
// keep_broadcast, an input's stride-0 axes are copied once and read with stride 0 again (a
// runner that takes such strides: a [B, 1, 1, Tk] mask expanded to [B, H, Tq, Tk] stays B x Tk
// floats); otherwise every input copy is dense.
void run_through_f32(OpContext& ctx, void (*runner)(OpContext&), uint32_t dtype,
                     bool keep_broadcast = false);

// Runs a oneDNN-backed op family in the call's dtype (that of input 0) where oneDNN has kernels
// for it, else through f32: always for f16 (oneDNN 2.6 has f16 kernels only on AVX512-FP16
// CPUs), and for bf16 once oneDNN has reported it unimplemented for this op (CPUs without
// AVX-512), remembered per device so the probe happens once.
void run_dnnl_backed(OpContext& ctx, void (*runner)(OpContext&));

}  // namespace sy_onednn
