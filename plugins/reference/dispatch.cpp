#include "dispatch.h"

#include <array>
#include <string>
#include <utility>

#include "device.h"
#include "error.h"
#include "ops.h"

namespace sy_reference {
namespace {

using OpFunction = void (*)(const OpContext&);

constexpr std::array<OpFunction, SY_OP_COUNT> kOpTable = {run_matmul,  // 0
                                                          run_unary,
                                                          run_unary,
                                                          run_unary,
                                                          run_unary,
                                                          run_unary,  // 1-5
                                                          run_unary,
                                                          run_unary,
                                                          run_unary,
                                                          run_unary,
                                                          run_unary,  // 6-10
                                                          run_unary_backward,
                                                          run_unary_backward,
                                                          run_unary_backward,  // 11-13
                                                          run_unary_backward,  // 14
                                                          run_binary,
                                                          run_binary,
                                                          run_binary,
                                                          run_binary,
                                                          run_binary,  // 15-19
                                                          run_binary,
                                                          run_binary,
                                                          run_binary,
                                                          run_binary,  // 20-23
                                                          run_reduce,
                                                          run_reduce,
                                                          run_reduce,
                                                          run_argmax,  // 24-27
                                                          run_softmax_family,
                                                          run_softmax_family,
                                                          run_softmax_family,  // 28-30
                                                          run_softmax_family,  // 31
                                                          run_cross_entropy,
                                                          run_cross_entropy_backward,  // 32-33
                                                          run_conv2d,
                                                          run_conv2d_backward_data,
                                                          run_conv2d_backward_weight,  // 34-36
                                                          run_max_pool2d,
                                                          run_max_pool2d_backward,  // 37-38
                                                          run_avg_pool2d,
                                                          run_avg_pool2d_backward,  // 39-40
                                                          run_layer_norm,
                                                          run_layer_norm_backward,  // 41-42
                                                          run_gather,
                                                          run_scatter_add,  // 43-44
                                                          run_copy,
                                                          run_fill,
                                                          run_random,
                                                          run_random,  // 45-48
                                                          run_sgd_update,
                                                          run_adam_update,  // 49-50
                                                          run_lstm_cell,
                                                          run_lstm_cell_backward,  // 51-52
                                                          run_conv2d,
                                                          run_conv2d_backward_data,
                                                          run_conv2d_backward_weight,  // 53-55
                                                          run_lstm_sequence,
                                                          run_gru_sequence,  // 56-57
                                                          run_conv2d_fused,  // 58
                                                          run_attention,
                                                          run_attention_backward,  // 59-60
                                                          run_lstm_sequence_backward,
                                                          run_gru_sequence_backward};  // 61-62

std::string tensor_role(bool is_output, uint32_t index) {
  return std::string(is_output ? "output " : "input ") + std::to_string(index);
}

// Bounds, dtype and layout checks that every op needs, before the op looks at its tensors.
void validate_desc(const OpContext& ctx, sy_device device, const sy_tensor_desc& desc,
                   const std::string& role) {
  if (desc.dtype >= SY_DTYPE_COUNT)
    fail(ctx, role + " has invalid dtype " + std::to_string(desc.dtype));
  if (desc.rank > SY_MAX_RANK) {
    fail(ctx, role + " has rank " + std::to_string(desc.rank) + " (the maximum is " +
                  std::to_string(SY_MAX_RANK) + ")");
  }
  const TensorRef tensor = tensor_from_desc(desc);
  int64_t last_element = 0;
  for (uint32_t axis = 0; axis < desc.rank; ++axis) {
    if (desc.shape[axis] < 0 || desc.strides[axis] < 0) {
      fail(ctx, role + " " + tensor.shape.to_string() + " has a negative size or stride on axis " +
                    std::to_string(axis));
    }
    if (desc.shape[axis] > 0) last_element += (desc.shape[axis] - 1) * desc.strides[axis];
  }
  if (tensor.shape.count() == 0) return;
  if (desc.buffer == nullptr || !device->pool.owns(desc.buffer)) {
    fail(ctx, role + " " + tensor.shape.to_string() +
                  " does not name a live buffer of this reference device");
  }
  const uint64_t element_bytes = dtype_size_bytes(tensor.dtype);
  const uint64_t end_bytes =
      desc.offset_bytes + element_bytes * (static_cast<uint64_t>(last_element) + 1);
  if (desc.offset_bytes % element_bytes != 0 || end_bytes > desc.buffer->size_bytes) {
    fail(ctx, role + " " + dtype_name(tensor.dtype) + " " + tensor.shape.to_string() +
                  " at offset " + std::to_string(desc.offset_bytes) + " needs bytes up to " +
                  std::to_string(end_bytes) + " (aligned to its element size) but the buffer has " +
                  std::to_string(desc.buffer->size_bytes));
  }
}

}  // namespace

// A sufficient test that no two elements of a written tensor share memory: with the axes sorted
// by stride, each stride must exceed the extent covered by all the smaller ones.
void require_no_self_overlap(const OpContext& ctx, const sy_tensor_desc& desc,
                             const std::string& role) {
  std::array<std::pair<int64_t, int64_t>, SY_MAX_RANK> axes{};  // (stride, size)
  uint32_t count = 0;
  for (uint32_t axis = 0; axis < desc.rank; ++axis) {
    if (desc.shape[axis] > 1) axes[count++] = {desc.strides[axis], desc.shape[axis]};
  }
  // Insertion sort: at most 8 entries (and std::sort here trips a GCC 12 -Warray-bounds bug).
  for (uint32_t i = 1; i < count; ++i) {
    for (uint32_t k = i; k > 0 && axes[k] < axes[k - 1]; --k) std::swap(axes[k], axes[k - 1]);
  }
  int64_t covered = 0;
  for (uint32_t i = 0; i < count; ++i) {
    if (axes[i].first <= covered) {
      fail(ctx, role + " is written but its strides make elements overlap (stride " +
                    std::to_string(axes[i].first) + " on an axis of size " +
                    std::to_string(axes[i].second) + ")");
    }
    covered += axes[i].first * (axes[i].second - 1);
  }
}

bool reference_supports_op(uint32_t op, uint32_t dtype) {
  if (op >= SY_OP_COUNT || dtype >= SY_DTYPE_COUNT) return false;
  switch (op) {
    case SY_OP_COPY:
    case SY_OP_FILL:
    case SY_OP_GATHER:
    case SY_OP_SCATTER_ADD:
      return true;
    default:
      return is_float_dtype(static_cast<sy_dtype>(dtype));
  }
}

void dispatch_op(sy_device device, const sy_op_call& call) {
  if (call.op >= SY_OP_COUNT) {
    raise(SY_STATUS_UNIMPLEMENTED, "reference: op " + std::to_string(call.op) +
                                       " is not in this op set (0.." +
                                       std::to_string(SY_OP_COUNT - 1) + ")");
  }
  const OpContext ctx{call, static_cast<sy_op>(call.op), op_name(call.op)};
  if (call.num_inputs > SY_MAX_OP_INPUTS || call.num_outputs > SY_MAX_OP_OUTPUTS) {
    fail(ctx, "too many tensors: " + std::to_string(call.num_inputs) + " inputs, " +
                  std::to_string(call.num_outputs) + " outputs");
  }
  for (uint32_t i = 0; i < call.num_inputs; ++i) {
    validate_desc(ctx, device, call.inputs[i], tensor_role(false, i));
  }
  for (uint32_t i = 0; i < call.num_outputs; ++i) {
    validate_desc(ctx, device, call.outputs[i], tensor_role(true, i));
    require_no_self_overlap(ctx, call.outputs[i], tensor_role(true, i));
  }
  kOpTable[call.op](ctx);
}

}  // namespace sy_reference
