#include "conformance/op_names.h"

#include <array>

namespace switchyard::conformance {
namespace {

constexpr std::array<const char*, SY_OP_COUNT> kOpLabels = {
    "matmul",
    "relu",
    "gelu",
    "sigmoid",
    "tanh",
    "exp",
    "log",
    "sqrt",
    "neg",
    "abs",
    "sign",
    "relu_backward",
    "gelu_backward",
    "sigmoid_backward",
    "tanh_backward",
    "add",
    "sub",
    "mul",
    "div",
    "max",
    "min",
    "pow",
    "cmp_gt",
    "cmp_eq",
    "reduce_sum",
    "reduce_mean",
    "reduce_max",
    "argmax",
    "softmax",
    "log_softmax",
    "softmax_backward",
    "log_softmax_backward",
    "cross_entropy",
    "cross_entropy_backward",
    "conv2d",
    "conv2d_backward_data",
    "conv2d_backward_weight",
    "max_pool2d",
    "max_pool2d_backward",
    "avg_pool2d",
    "avg_pool2d_backward",
    "layer_norm",
    "layer_norm_backward",
    "gather",
    "scatter_add",
    "copy",
    "fill",
    "random_uniform",
    "random_normal",
    "sgd_update",
    "adam_update",
};
// A missing label would leave a null entry at the end of the table.
static_assert(kOpLabels.back() != nullptr, "every sy_op needs a label");

}  // namespace

std::string op_label(sy_op op) {
  const auto index = static_cast<size_t>(op);
  if (index < kOpLabels.size()) return kOpLabels[index];
  return "op" + std::to_string(index);
}

}  // namespace switchyard::conformance
