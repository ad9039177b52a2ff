// supports_op and dispatch: which op/dtype pairs the device runs, and the checks every call gets
// before its family's code runs (tensor layouts inside their buffers, stream ordering of buffers).
#include "dispatch.h"

#include <algorithm>
#include <vector>

namespace sy_cuda {
namespace {

using OpFunction = Status (*)(const OpContext&);

// Which family runs an op; nullptr for the ops this plugin does not implement: GRU_SEQUENCE (57),
// which supports() answers 0 for, so the core composes it from matmuls and elementwise ops.
// LSTM_SEQUENCE runs in f32 only (f16 and bf16 compose from matmuls and LSTM_CELL steps).
OpFunction family_of(uint32_t op) {
  if (op == SY_OP_MATMUL) return run_matmul;
  if (op <= SY_OP_CMP_EQ) return run_elementwise;
  if (op <= SY_OP_ARGMAX) return run_reduce;
  if (op <= SY_OP_LOG_SOFTMAX_BACKWARD) return run_softmax;
  if (op <= SY_OP_CROSS_ENTROPY_BACKWARD) return run_cross_entropy;
  if (op <= SY_OP_CONV2D_BACKWARD_WEIGHT) return run_conv;
  if (op <= SY_OP_AVG_POOL2D_BACKWARD) return run_pool;
  if (op <= SY_OP_LAYER_NORM_BACKWARD) return run_layer_norm;
  if (op <= SY_OP_SCATTER_ADD) return run_index;
  if (op == SY_OP_COPY) return run_copy;
  if (op == SY_OP_FILL) return run_fill;
  if (op <= SY_OP_RANDOM_NORMAL) return run_random;
  if (op <= SY_OP_ADAM_UPDATE) return run_optimizer;
  if (op <= SY_OP_LSTM_CELL_BACKWARD) return run_lstm_cell;
  if (op <= SY_OP_CONV2D_GROUPED_BACKWARD_WEIGHT) return run_conv;
  if (op == SY_OP_LSTM_SEQUENCE) return run_lstm_sequence;
  if (op == SY_OP_CONV2D_FUSED) return run_conv;
  return nullptr;
}

Status check_tensors(const sy_op_call& call, const char* name) {
  if (call.num_inputs > SY_MAX_OP_INPUTS || call.num_outputs > SY_MAX_OP_OUTPUTS) {
    return invalid_argument(std::string(name) + ": " + std::to_string(call.num_inputs) +
                            " inputs and " + std::to_string(call.num_outputs) +
                            " outputs exceed the ABI's " + std::to_string(SY_MAX_OP_INPUTS) +
                            " and " + std::to_string(SY_MAX_OP_OUTPUTS));
  }
  for (uint32_t i = 0; i < call.num_inputs + call.num_outputs; ++i) {
    const bool is_output = i >= call.num_inputs;
    const sy_tensor_desc& t = is_output ? call.outputs[i - call.num_inputs] : call.inputs[i];
    const std::string role =
        (is_output ? "output " : "input ") + std::to_string(is_output ? i - call.num_inputs : i);
    const uint64_t size = t.buffer != nullptr ? OpContext::buffer_of(t)->size_bytes : 0;
    SY_CUDA_RETURN_IF_ERROR(check_tensor(name, role.c_str(), t, size, is_output));
  }
  return ok_status();
}

// Every buffer of the call is ordered after its pool predecessor's work on other streams (while
// the queue captures: noted, and ordered at each launch of the graph instead).
Status order_buffers(const OpContext& ctx) {
  const sy_op_call& call = ctx.call;
  std::vector<CudaBuffer*> seen;
  for (uint32_t i = 0; i < call.num_inputs + call.num_outputs; ++i) {
    const sy_tensor_desc& t =
        i < call.num_inputs ? call.inputs[i] : call.outputs[i - call.num_inputs];
    CudaBuffer* buffer = OpContext::buffer_of(t);
    if (std::find(seen.begin(), seen.end(), buffer) != seen.end()) continue;
    seen.push_back(buffer);
    SY_CUDA_RETURN_IF_ERROR(ctx.use(buffer));
  }
  return ok_status();
}

Status run_family(const OpContext& ctx) {
  SY_CUDA_RETURN_IF_ERROR(order_buffers(ctx));
  const OpFunction family = family_of(ctx.call.op);
  if (family == nullptr) {
    return unimplemented(std::string(ctx.name) + ": not implemented by the cuda plugin (the " +
                         "core composes it from other ops; supports_op says 0)");
  }
  return family(ctx);
}

}  // namespace

bool supports(uint32_t op, uint32_t dtype) {
  if (op >= SY_OP_COUNT || family_of(op) == nullptr || dtype >= SY_DTYPE_COUNT) return false;
  if (op == SY_OP_LSTM_SEQUENCE) return dtype == SY_DTYPE_F32;
  if (is_float_dtype(dtype)) return true;
  // Integer data: index ops and data movement only (docs/ops.md section 1).
  return op == SY_OP_GATHER || op == SY_OP_SCATTER_ADD || op == SY_OP_COPY || op == SY_OP_FILL;
}

Status dispatch(CudaDevice& device, CudaQueue& queue, const sy_op_call& call) {
  if (call.op >= SY_OP_COUNT) {
    return invalid_argument("dispatch: unknown op " + std::to_string(call.op) + " (ABI 1 has " +
                            std::to_string(SY_OP_COUNT) + " ops)");
  }
  const char* name = op_name(call.op);
  const OpContext ctx{device, queue, call, name};
  if (queue.capture == nullptr) {
    SY_CUDA_RETURN_IF_ERROR(check_tensors(call, name));
    return run_family(ctx);
  }
  // Capturing: the call's kernels become graph nodes; a call that fails spoils the capture.
  CaptureRecorder& recorder = *queue.capture;
  const size_t first_launch = recorder.launches.size();
  Status status = check_tensors(call, name);
  if (status.ok()) status = run_family(ctx);
  recorder.calls.push_back(
      CapturedCall{call, first_launch, recorder.launches.size() - first_launch});
  if (!status.ok() && recorder.failure.ok()) recorder.failure = status;
  return status;
}

}  // namespace sy_cuda
