// The op families of the Vulkan plugin. Each function checks its call (counts, dtypes, shapes,
// params, as docs/ops.md defines them) and records its dispatches on ctx.queue.
#pragma once

#include <vector>

#include "op_context.h"

namespace sy_vk {

Status run_matmul(const OpContext& ctx);
Status run_unary(const OpContext& ctx);           // RELU .. SIGN
Status run_unary_backward(const OpContext& ctx);  // RELU_BACKWARD .. TANH_BACKWARD
Status run_binary(const OpContext& ctx);          // ADD .. CMP_EQ
Status run_reduce(const OpContext& ctx);          // REDUCE_SUM, REDUCE_MEAN, REDUCE_MAX
Status run_argmax(const OpContext& ctx);
Status run_softmax(const OpContext& ctx);  // the four softmax-family ops
Status run_cross_entropy(const OpContext& ctx);
Status run_cross_entropy_backward(const OpContext& ctx);
Status run_conv2d(const OpContext& ctx);
Status run_conv2d_backward_data(const OpContext& ctx);
Status run_conv2d_backward_weight(const OpContext& ctx);
Status run_pool2d(const OpContext& ctx);           // MAX_POOL2D, AVG_POOL2D
Status run_pool2d_backward(const OpContext& ctx);  // their backward ops
Status run_layer_norm(const OpContext& ctx);
Status run_layer_norm_backward(const OpContext& ctx);
Status run_gather(const OpContext& ctx);
Status run_scatter_add(const OpContext& ctx);
Status run_copy(const OpContext& ctx);
Status run_fill(const OpContext& ctx);
Status run_random(const OpContext& ctx);  // RANDOM_UNIFORM, RANDOM_NORMAL
Status run_sgd_update(const OpContext& ctx);
Status run_adam_update(const OpContext& ctx);
Status run_lstm_cell(const OpContext& ctx);
Status run_lstm_cell_backward(const OpContext& ctx);
Status run_rnn_sequence(const OpContext& ctx);  // LSTM_SEQUENCE, GRU_SEQUENCE
// LSTM_SEQUENCE_BACKWARD, GRU_SEQUENCE_BACKWARD
Status run_rnn_sequence_backward(const OpContext& ctx);
Status run_attention(const OpContext& ctx);  // SCALED_DOT_PRODUCT_ATTENTION
Status run_attention_backward(const OpContext& ctx);

// Binds `tensors` (inputs first, output last; all of one shape) after merging axes and dispatches
// `family`.<dtype of the last> over every element, with mode = the call's op.
Status run_elementwise(const OpContext& ctx, const char* family,
                       std::vector<sy_tensor_desc> tensors, std::vector<const char*> roles,
                       ParamBlock params);

// Routes a call to its family; UNIMPLEMENTED for an op outside the op set.
Status dispatch_op(const OpContext& ctx);
// The answer to supports_op: whether `op` runs with key dtype `dtype` on this device.
bool op_supported(const VulkanDevice& device, uint32_t op, uint32_t dtype);

}  // namespace sy_vk
