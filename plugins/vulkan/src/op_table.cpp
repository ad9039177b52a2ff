#include "device.h"
#include "ops.h"

namespace sy_vk {
namespace {

using OpFunction = Status (*)(const OpContext&);

OpFunction function_for(uint32_t op) {
  if (op >= SY_OP_RELU && op <= SY_OP_SIGN) return run_unary;
  if (op >= SY_OP_RELU_BACKWARD && op <= SY_OP_TANH_BACKWARD) return run_unary_backward;
  if (op >= SY_OP_ADD && op <= SY_OP_CMP_EQ) return run_binary;
  if (op >= SY_OP_REDUCE_SUM && op <= SY_OP_REDUCE_MAX) return run_reduce;
  if (op >= SY_OP_SOFTMAX && op <= SY_OP_LOG_SOFTMAX_BACKWARD) return run_softmax;
  switch (op) {
    case SY_OP_MATMUL:
      return run_matmul;
    case SY_OP_ARGMAX:
      return run_argmax;
    case SY_OP_CROSS_ENTROPY:
      return run_cross_entropy;
    case SY_OP_CROSS_ENTROPY_BACKWARD:
      return run_cross_entropy_backward;
    case SY_OP_CONV2D:
    case SY_OP_CONV2D_GROUPED:
    case SY_OP_CONV2D_FUSED:
      return run_conv2d;
    case SY_OP_CONV2D_BACKWARD_DATA:
    case SY_OP_CONV2D_GROUPED_BACKWARD_DATA:
      return run_conv2d_backward_data;
    case SY_OP_CONV2D_BACKWARD_WEIGHT:
    case SY_OP_CONV2D_GROUPED_BACKWARD_WEIGHT:
      return run_conv2d_backward_weight;
    case SY_OP_MAX_POOL2D:
    case SY_OP_AVG_POOL2D:
      return run_pool2d;
    case SY_OP_MAX_POOL2D_BACKWARD:
    case SY_OP_AVG_POOL2D_BACKWARD:
      return run_pool2d_backward;
    case SY_OP_LAYER_NORM:
      return run_layer_norm;
    case SY_OP_LAYER_NORM_BACKWARD:
      return run_layer_norm_backward;
    case SY_OP_GATHER:
      return run_gather;
    case SY_OP_SCATTER_ADD:
      return run_scatter_add;
    case SY_OP_COPY:
      return run_copy;
    case SY_OP_FILL:
      return run_fill;
    case SY_OP_RANDOM_UNIFORM:
    case SY_OP_RANDOM_NORMAL:
      return run_random;
    case SY_OP_SGD_UPDATE:
      return run_sgd_update;
    case SY_OP_ADAM_UPDATE:
      return run_adam_update;
    case SY_OP_LSTM_CELL:
      return run_lstm_cell;
    case SY_OP_LSTM_CELL_BACKWARD:
      return run_lstm_cell_backward;
    case SY_OP_LSTM_SEQUENCE:
    case SY_OP_GRU_SEQUENCE:
      return run_rnn_sequence;
    case SY_OP_LSTM_SEQUENCE_BACKWARD:
    case SY_OP_GRU_SEQUENCE_BACKWARD:
      return run_rnn_sequence_backward;
    case SY_OP_SCALED_DOT_PRODUCT_ATTENTION:
      return run_attention;
    case SY_OP_SCALED_DOT_PRODUCT_ATTENTION_BACKWARD:
      return run_attention_backward;
    default:
      return nullptr;
  }
}

bool float_supported(const VulkanDevice& device, uint32_t dtype) {
  switch (dtype) {
    case SY_DTYPE_F32:
      return true;
    case SY_DTYPE_F16:
      return device.supports_f16();
    case SY_DTYPE_BF16:
      return device.supports_bf16();
    default:
      return false;
  }
}

}  // namespace

Status dispatch_op(const OpContext& ctx) {
  const OpFunction function = function_for(ctx.call.op);
  if (function == nullptr) {
    return unimplemented("vulkan: op " + std::to_string(ctx.call.op) +
                         " is not in the op set this plugin implements");
  }
  if (ctx.call.num_inputs > SY_MAX_OP_INPUTS || ctx.call.num_outputs > SY_MAX_OP_OUTPUTS) {
    return invalid_argument(
        std::string(op_name(ctx.call.op)) + ": " + std::to_string(ctx.call.num_inputs) +
        " inputs and " + std::to_string(ctx.call.num_outputs) + " outputs exceed the ABI limits");
  }
  return function(ctx);
}

bool op_supported(const VulkanDevice& device, uint32_t op, uint32_t dtype) {
  if (function_for(op) == nullptr) return false;
  switch (op) {
    case SY_OP_COPY:
    case SY_OP_FILL:
    case SY_OP_GATHER:
    case SY_OP_SCATTER_ADD:
      // Integer data needs no 16-bit storage; the float types follow the device.
      return dtype == SY_DTYPE_I32 || dtype == SY_DTYPE_I64 || float_supported(device, dtype);
    default:
      return float_supported(device, dtype);
  }
}

}  // namespace sy_vk
