#include "dispatch.h"

#include <omp.h>

#include <iterator>

#include <oneapi/dnnl/dnnl.hpp>

#include "ops/ops.h"

namespace sy_onednn {
namespace {

using Runner = void (*)(OpContext&);

constexpr Runner kRunners[] = {
    run_matmul,  // MATMUL
    run_unary,
    run_unary,
    run_unary,
    run_unary,
    run_unary,  // RELU GELU SIGMOID TANH EXP
    run_unary,
    run_unary,
    run_unary,
    run_unary,
    run_unary,  // LOG SQRT NEG ABS SIGN
    run_unary_backward,
    run_unary_backward,
    run_unary_backward,  // RELU/GELU/SIGMOID_BACKWARD
    run_unary_backward,  // TANH_BACKWARD
    run_binary,
    run_binary,
    run_binary,
    run_binary,
    run_binary,  // ADD SUB MUL DIV MAX
    run_binary,
    run_binary,
    run_binary,
    run_binary,  // MIN POW CMP_GT CMP_EQ
    run_reduce,
    run_reduce,
    run_reduce,
    run_argmax,  // SUM MEAN MAX ARGMAX
    run_softmax,
    run_softmax,  // SOFTMAX LOG_SOFTMAX
    run_softmax_backward,
    run_softmax_backward,  // their backward ops
    run_cross_entropy,
    run_cross_entropy_backward,  // CROSS_ENTROPY(_BACKWARD)
    run_conv2d,
    run_conv2d_backward_data,
    run_conv2d_backward_weight,
    run_pool2d,
    run_pool2d_backward,
    run_pool2d,
    run_pool2d_backward,  // MAX/AVG_POOL2D(_BWD)
    run_layer_norm,
    run_layer_norm_backward,  // LAYER_NORM(_BACKWARD)
    run_gather,
    run_scatter_add,  // GATHER SCATTER_ADD
    run_copy,
    run_fill,
    run_random,
    run_random,  // COPY FILL RANDOM_*
    run_sgd_update,
    run_adam_update,  // SGD_UPDATE ADAM_UPDATE
    run_lstm_cell,
    run_lstm_cell_backward,  // LSTM_CELL(_BACKWARD)
    run_conv2d,
    run_conv2d_backward_data,
    run_conv2d_backward_weight,  // CONV2D_GROUPED(_BACKWARD_DATA, _BACKWARD_WEIGHT)
    run_rnn_sequence,
    run_rnn_sequence,  // LSTM_SEQUENCE GRU_SEQUENCE
    run_conv2d_fused,  // CONV2D_FUSED
    run_attention,
    run_attention_backward,  // SCALED_DOT_PRODUCT_ATTENTION(_BACKWARD)
    run_rnn_sequence_backward,
    run_rnn_sequence_backward,  // LSTM_SEQUENCE_BACKWARD GRU_SEQUENCE_BACKWARD
};
// One runner per op: a new op must be added here (a short table would leave it a null pointer).
static_assert(std::size(kRunners) == SY_OP_COUNT);

TensorView resolve(const char* op, const sy_tensor_desc& desc, const char* kind, uint32_t index) {
  const size_t element_size = dtype_size(desc.dtype);
  if (element_size == 0)
    fail_invalid(cat(op, ": ", kind, " ", index, " has invalid dtype ", desc.dtype));
  if (desc.rank > SY_MAX_RANK) {
    fail_invalid(
        cat(op, ": ", kind, " ", index, " has rank ", desc.rank, " (at most ", SY_MAX_RANK, ")"));
  }
  if (desc.buffer == nullptr) fail_invalid(cat(op, ": ", kind, " ", index, " has no buffer"));
  TensorView view;
  view.dtype = desc.dtype;
  view.rank = static_cast<int>(desc.rank);
  int64_t last_offset = 0;
  bool empty = false;
  for (int d = 0; d < view.rank; ++d) {
    view.shape[d] = desc.shape[d];
    view.strides[d] = desc.strides[d];
    if (desc.shape[d] < 0 || desc.strides[d] < 0) {
      fail_invalid(cat(op, ": ", kind, " ", index, " has a negative size or stride: shape ",
                       shape_string(desc.shape, view.rank), " strides ",
                       shape_string(desc.strides, view.rank)));
    }
    empty = empty || desc.shape[d] == 0;
    if (desc.shape[d] > 0) last_offset += (desc.shape[d] - 1) * desc.strides[d];
  }
  if (desc.offset_bytes % element_size != 0) {
    fail_invalid(cat(op, ": ", kind, " ", index, " offset ", desc.offset_bytes,
                     " bytes is not a multiple of the ", dtype_name(desc.dtype), " element size"));
  }
  const uint64_t end = desc.offset_bytes + element_size * static_cast<uint64_t>(last_offset + 1);
  if (!empty && end > desc.buffer->size_bytes) {
    fail_invalid(cat(op, ": ", kind, " ", index, " (", describe(view), ", offset ",
                     desc.offset_bytes, " bytes) ends at byte ", end, " past its buffer of ",
                     desc.buffer->size_bytes, " bytes"));
  }
  view.data = static_cast<char*>(desc.buffer->data) + desc.offset_bytes;
  return view;
}

void check_output_strides(const char* op, const TensorView& view, uint32_t index) {
  for (int d = 0; d < view.rank; ++d) {
    if (view.shape[d] > 1 && view.strides[d] == 0) {
      fail_invalid(cat(op, ": output ", index, " (", describe(view), ") has stride 0 on axis ", d,
                       " of size ", view.shape[d]));
    }
  }
}

// Ops lower the calling thread's OpenMP thread count for small work (and a deterministic device
// turns dynamic adjustment off); this puts the caller's settings back afterwards, so that a host
// application's own OpenMP regions are not affected.
class OmpThreadsRestorer {
 public:
  OmpThreadsRestorer() : saved_(omp_get_max_threads()), saved_dynamic_(omp_get_dynamic()) {}
  ~OmpThreadsRestorer() {
    if (omp_get_max_threads() != saved_) omp_set_num_threads(saved_);
    if (omp_get_dynamic() != saved_dynamic_) omp_set_dynamic(saved_dynamic_);
  }
  OmpThreadsRestorer(const OmpThreadsRestorer&) = delete;
  OmpThreadsRestorer& operator=(const OmpThreadsRestorer&) = delete;

 private:
  int saved_;
  int saved_dynamic_;
};

std::string describe_call(const OpContext& ctx) {
  std::string text = "inputs (";
  for (int i = 0; i < ctx.num_inputs; ++i) text += (i ? "; " : "") + describe(ctx.in[i]);
  text += "), outputs (";
  for (int i = 0; i < ctx.num_outputs; ++i) text += (i ? "; " : "") + describe(ctx.out[i]);
  return text + ")";
}

sy_status status_of(const dnnl::error& e) {
  if (e.status == dnnl_unimplemented) return SY_STATUS_UNIMPLEMENTED;
  if (e.status == dnnl_out_of_memory) return SY_STATUS_RESOURCE_EXHAUSTED;
  return SY_STATUS_INTERNAL;
}

// The inputs SY_CALL_CONSTANT_WEIGHTS promises constant for the call's op (plugin_abi.h): w_ih and
// w_hh of the sequence ops, input 1 (w, or MATMUL's b) of the others.
void mark_constant_inputs(const sy_op_call& call, OpContext& ctx) {
  uint32_t first = 1, count = 1;
  sy_constant_weight_inputs(call.op, &first, &count);
  for (uint32_t i = first; i < first + count && i < call.num_inputs; ++i) {
    if (call.inputs[i].buffer != nullptr) ctx.constant_buffer[i] = call.inputs[i].buffer->id;
  }
}

}  // namespace

void dispatch_call(sy_device_s& device, sy_queue_s& queue, const sy_op_call& call) {
  if (call.op >= SY_OP_COUNT) fail_invalid(cat("onednn dispatch: unknown op ", call.op));
  const char* name = op_name(call.op);
  if (call.num_inputs > SY_MAX_OP_INPUTS || call.num_outputs > SY_MAX_OP_OUTPUTS) {
    fail_invalid(cat(name, ": ", call.num_inputs, " inputs and ", call.num_outputs,
                     " outputs exceed the ABI maximum"));
  }
  OpContext ctx(device, queue, call.op, call.params);
  ctx.num_inputs = static_cast<int>(call.num_inputs);
  ctx.num_outputs = static_cast<int>(call.num_outputs);
  for (uint32_t i = 0; i < call.num_inputs; ++i)
    ctx.in[i] = resolve(name, call.inputs[i], "input", i);
  if ((call.flags & SY_CALL_CONSTANT_WEIGHTS) != 0) mark_constant_inputs(call, ctx);
  for (uint32_t i = 0; i < call.num_outputs; ++i) {
    ctx.out[i] = resolve(name, call.outputs[i], "output", i);
    check_output_strides(name, ctx.out[i], i);
  }
  queue.workspace.reset();
  OmpThreadsRestorer restore_threads;
  // With OMP_DYNAMIC=true a region may get fewer threads than asked for, and oneDNN splits its
  // sums by the threads it gets: a deterministic device always gets exactly what it asks for.
  if (device.deterministic && omp_get_dynamic()) omp_set_dynamic(0);
  try {
    kRunners[call.op](ctx);
  } catch (const dnnl::error& e) {
    fail(status_of(e), cat(name, ": oneDNN failed: ", e.what(), "; ", describe_call(ctx)));
  }
}

int supports_op_dtype(uint32_t op, uint32_t dtype) {
  if (op >= SY_OP_COUNT || dtype >= SY_DTYPE_COUNT) return 0;
  switch (op) {
    case SY_OP_COPY:
    case SY_OP_FILL:
    case SY_OP_GATHER:
    case SY_OP_SCATTER_ADD:
      return 1;
    default:
      return is_float_dtype(dtype) ? 1 : 0;
  }
}

}  // namespace sy_onednn
