// Reductions, softmax and the losses.
#include <algorithm>

#include "autograd/node.h"
#include "switchyard/ops.h"
#include "switchyard/status.h"
#include "tensor/dispatch_internal.h"
#include "tensor/op_helpers.h"

namespace switchyard {

namespace {

using Grads = std::vector<Tensor>;

// A gradient of a reduction's output, shaped back to the input with stride-0 broadcasting.
Tensor expand_reduced(const Tensor& grad, const Shape& input_shape, uint32_t mask) {
  return grad.reshape(reduced_shape(input_shape, mask, true)).expand(input_shape);
}

int64_t reduced_count(const Shape& shape, uint32_t mask) {
  int64_t count = 1;
  for (int i = 0; i < shape.rank(); ++i) {
    if ((mask & (1u << i)) != 0) count *= shape[i];
  }
  return count;
}

}  // namespace

Tensor sum(const Tensor& x_in, const std::vector<int>& axes, bool keep_dims) {
  const Tensor x = autocast_f32(x_in);  // reductions accumulate and return f32 under autocast
  require_float(x, "sum");
  const uint32_t mask = axes_mask(axes, x.rank(), "sum");
  Tensor out = run_reduce(SY_OP_REDUCE_SUM, x, mask, keep_dims);
  record_op(out, "sum", {x}, [shape = x.shape(), mask](const Tensor& g, const Node&) {
    return Grads{expand_reduced(g, shape, mask)};
  });
  return out;
}

Tensor mean(const Tensor& x_in, const std::vector<int>& axes, bool keep_dims) {
  const Tensor x = autocast_f32(x_in);  // reductions accumulate and return f32 under autocast
  require_float(x, "mean");
  const uint32_t mask = axes_mask(axes, x.rank(), "mean");
  Tensor out = run_reduce(SY_OP_REDUCE_MEAN, x, mask, keep_dims);
  record_op(out, "mean", {x}, [shape = x.shape(), mask](const Tensor& g, const Node&) {
    const double count = static_cast<double>(std::max<int64_t>(reduced_count(shape, mask), 1));
    return Grads{expand_reduced(div(g, count), shape, mask)};
  });
  return out;
}

Tensor amax(const Tensor& x, const std::vector<int>& axes, bool keep_dims) {
  require_float(x, "amax");
  const uint32_t mask = axes_mask(axes, x.rank(), "amax");
  Tensor out = run_reduce(SY_OP_REDUCE_MAX, x, mask, keep_dims);
  record_op(out, "amax", {x},
            [x_data = x.detach(), y = out.detach(), mask](const Tensor& g, const Node&) {
              // Ties share the gradient evenly, as in PyTorch.
              const Tensor hits = equal(x_data, expand_reduced(y, x_data.shape(), mask));
              const Tensor ties = run_reduce(SY_OP_REDUCE_SUM, hits, mask, true);
              const Tensor share = div(expand_reduced(g, x_data.shape(), mask), ties);
              return Grads{mul(share, hits)};
            });
  return out;
}

Tensor argmax(const Tensor& x, int axis, bool keep_dims, DType index_dtype) {
  require_float(x, "argmax");
  if (index_dtype != DType::kI32 && index_dtype != DType::kI64) {
    throw_error(invalid_argument(std::string("argmax: the index dtype must be i32 or i64, not ") +
                                 dtype_name(index_dtype)));
  }
  const uint32_t mask = 1u << normalize_axis(axis, x.rank());
  sy_op_params params{};
  params.reduce.axes_mask = mask;
  params.reduce.keep_dims = keep_dims ? 1 : 0;
  Tensor out = empty_like_shape(x, reduced_shape(x.shape(), mask, keep_dims), index_dtype);
  run_op(SY_OP_ARGMAX, {x}, {out}, params);
  return out;
}

namespace {

Tensor softmax_family(sy_op op, sy_op backward_op, const char* name, const Tensor& x_in, int axis) {
  const Tensor x = autocast_f32(x_in);
  require_float(x, name);
  sy_op_params params{};
  params.softmax.axis = normalize_axis(axis, x.rank());
  Tensor out = empty_like_shape(x, x.shape());
  run_op(op, {x}, {out}, params);
  record_op(out, name, {x}, [backward_op, params, y = out.detach()](const Tensor& g, const Node&) {
    Tensor grad_in = empty_like_shape(y, y.shape());
    run_op(backward_op, {g, y}, {grad_in}, params);
    return Grads{grad_in};
  });
  return out;
}

}  // namespace

Tensor softmax(const Tensor& x, int axis) {
  return softmax_family(SY_OP_SOFTMAX, SY_OP_SOFTMAX_BACKWARD, "softmax", x, axis);
}

Tensor log_softmax(const Tensor& x, int axis) {
  return softmax_family(SY_OP_LOG_SOFTMAX, SY_OP_LOG_SOFTMAX_BACKWARD, "log_softmax", x, axis);
}

Tensor cross_entropy(const Tensor& logits_in, const Tensor& labels, Reduction reduction) {
  const Tensor logits = autocast_f32(logits_in);
  require_float(logits, "cross_entropy");
  require_index(labels, "cross_entropy");
  if (logits.rank() != 2 || labels.rank() != 1 || labels.dim(0) != logits.dim(0)) {
    throw_error(invalid_argument("cross_entropy: needs logits [N, C] and labels [N], got logits " +
                                 logits.shape().to_string() + " and labels " +
                                 labels.shape().to_string()));
  }
  sy_op_params params{};
  params.cross_entropy.reduction = reduction == Reduction::kSum ? 1 : 0;
  Tensor loss = empty_like_shape(logits, Shape{});
  run_op(SY_OP_CROSS_ENTROPY, {logits, labels}, {loss}, params);
  record_op(loss, "cross_entropy", {logits, labels},
            [params, x = logits.detach(), y = labels](const Tensor& g, const Node&) {
              Tensor grad_logits = empty_like_shape(x, x.shape());
              run_op(SY_OP_CROSS_ENTROPY_BACKWARD, {x, y, g}, {grad_logits}, params);
              return Grads{grad_logits, Tensor()};
            });
  return loss;
}

Tensor mse_loss(const Tensor& prediction_in, const Tensor& target_in, Reduction reduction) {
  const Tensor prediction = autocast_f32(prediction_in);
  const Tensor target = autocast_f32(target_in);
  require_float(prediction, "mse_loss");
  if (prediction.shape() != target.shape()) {
    throw_error(invalid_argument("mse_loss: prediction " + prediction.shape().to_string() +
                                 " and target " + target.shape().to_string() + " differ"));
  }
  const Tensor diff = sub(prediction, target);
  const Tensor squared = mul(diff, diff);
  return reduction == Reduction::kSum ? sum(squared) : mean(squared);
}

double accuracy(const Tensor& logits, const Tensor& labels) {
  require_index(labels, "accuracy");
  const std::vector<int64_t> predicted = argmax(logits, -1).to_host_int64();
  const std::vector<int64_t> expected = labels.to_host_int64();
  if (predicted.size() != expected.size()) {
    throw_error(invalid_argument("accuracy: " + std::to_string(predicted.size()) +
                                 " predictions for " + std::to_string(expected.size()) +
                                 " labels"));
  }
  if (predicted.empty()) return 0.0;
  int64_t correct = 0;
  for (size_t i = 0; i < predicted.size(); ++i) correct += predicted[i] == expected[i] ? 1 : 0;
  return static_cast<double>(correct) / static_cast<double>(predicted.size());
}

}  // namespace switchyard
