// f16 and bf16 through f32 for the oneDNN-backed ops. Converting to f32, computing and rounding
// the results back once is exactly the storage-type semantics of docs/ops.md (compute in f32,
// round once), so staging changes speed, never results beyond f32 rounding.
#include <oneapi/dnnl/dnnl.hpp>

#include "ops/ops.h"

namespace sy_onednn {

namespace {

// An f32 copy of `view` whose stride-0 axes are copied once and read with stride 0 again.
TensorView broadcast_copy_f32(OpContext& ctx, const TensorView& view) {
  TensorView source = view;
  for (int d = 0; d < view.rank; ++d) {
    if (view.strides[d] == 0) source.shape[d] = 1;
  }
  TensorView copy = dense_copy(ctx, source, SY_DTYPE_F32);
  for (int d = 0; d < view.rank; ++d) {
    if (source.shape[d] != view.shape[d]) {
      copy.shape[d] = view.shape[d];
      copy.strides[d] = 0;
    }
  }
  return copy;
}

}  // namespace

void run_through_f32(OpContext& ctx, void (*runner)(OpContext&), uint32_t dtype,
                     bool keep_broadcast) {
  OpContext staged(ctx.device, ctx.queue, ctx.op, ctx.params);
  staged.num_inputs = ctx.num_inputs;
  staged.num_outputs = ctx.num_outputs;
  for (int i = 0; i < ctx.num_inputs; ++i) {
    const TensorView& in = ctx.in[i];
    if (in.dtype != dtype) {
      staged.in[i] = in;
    } else {
      staged.in[i] =
          keep_broadcast ? broadcast_copy_f32(ctx, in) : dense_copy(ctx, in, SY_DTYPE_F32);
    }
  }
  for (int i = 0; i < ctx.num_outputs; ++i) {
    const TensorView& out = ctx.out[i];
    staged.out[i] = out.dtype == dtype ? ctx.scratch_view(SY_DTYPE_F32, out.rank, out.shape) : out;
  }
  runner(staged);
  for (int i = 0; i < ctx.num_outputs; ++i) {
    if (ctx.out[i].dtype == dtype) {
      copy_view(staged.out[i], ctx.out[i], ctx.threads_for(ctx.out[i].numel()));
    }
  }
}

void run_dnnl_backed(OpContext& ctx, void (*runner)(OpContext&)) {
  const uint32_t dtype = ctx.in[0].dtype;
  if (dtype == SY_DTYPE_F16) return run_through_f32(ctx, runner, dtype);
  if (dtype != SY_DTYPE_BF16) return runner(ctx);
  std::atomic<bool>& staged = ctx.device.bf16_through_f32[ctx.op];
  if (staged.load(std::memory_order_relaxed)) return run_through_f32(ctx, runner, dtype);
  try {
    runner(ctx);  // a missing kernel fails while the primitive is created, before any output write
  } catch (const dnnl::error& e) {
    if (e.status != dnnl_unimplemented) throw;
    staged.store(true, std::memory_order_relaxed);
    run_through_f32(ctx, runner, dtype);
  }
}

void sgemm(const OpContext& ctx, char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha,
           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
           int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (dnnl_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) != dnnl_success) {
    fail_invalid(cat(ctx.name(), ": oneDNN's sgemm refused a ", m, " x ", k, " x ", n, " product"));
  }
}

}  // namespace sy_onednn
