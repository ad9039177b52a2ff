// Matrix products, convolution, pooling and layer normalisation with their gradients.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "autograd/node.h"
#include "switchyard/device.h"
#include "switchyard/ops.h"
#include "switchyard/status.h"
#include "tensor/dispatch_internal.h"
#include "tensor/op_helpers.h"

namespace switchyard {

namespace {

using Grads = std::vector<Tensor>;

Shape matmul_shape(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  if (a.rank() < 2 || b.rank() < 2) {
    throw_error(invalid_argument("matmul: operands need rank >= 2, got " + a.shape().to_string() +
                                 " and " + b.shape().to_string()));
  }
  const int64_t m = ta ? a.dim(-1) : a.dim(-2);
  const int64_t ka = ta ? a.dim(-2) : a.dim(-1);
  const int64_t kb = tb ? b.dim(-1) : b.dim(-2);
  const int64_t n = tb ? b.dim(-2) : b.dim(-1);
  if (ka != kb) {
    throw_error(invalid_argument("matmul: inner dimensions differ: a " + a.shape().to_string() +
                                 (ta ? " (transposed)" : "") + " (K=" + std::to_string(ka) +
                                 ") vs b " + b.shape().to_string() + (tb ? " (transposed)" : "") +
                                 " (K=" + std::to_string(kb) + ")"));
  }
  Shape batch_a(std::vector<int64_t>(a.shape().begin(), a.shape().end() - 2));
  Shape batch_b(std::vector<int64_t>(b.shape().begin(), b.shape().end() - 2));
  Shape out = broadcast_shapes(batch_a, batch_b);
  out.push_back(m);
  out.push_back(n);
  return out;
}

// For a [..., M, K] (not transposed) against an unbatched b: the order of a's leading axes,
// outermost first, in which they fold into one dense index of rows at stride K (a contiguous a: 0,
// 1, ...; a batch-first sequence seen time-major, x.transpose(0, 1): 1, 0), or nothing when they do
// not.
std::optional<std::vector<int>> foldable_rows(const Tensor& a, const Tensor& b, bool ta) {
  if (ta || b.rank() != 2 || a.rank() < 3 || a.dim(-1) < 1 || a.strides()[a.rank() - 1] != 1) {
    return std::nullopt;
  }
  const int lead = a.rank() - 1;
  std::vector<int> order(static_cast<size_t>(lead));
  for (int i = 0; i < lead; ++i) order[static_cast<size_t>(i)] = i;
  const Shape& shape = a.shape();
  const Shape& strides = a.strides();
  std::stable_sort(order.begin(), order.end(),
                   [&](int i, int j) { return strides[i] > strides[j]; });
  int64_t expected = a.dim(-1);
  for (int i = lead - 1; i >= 0; --i) {
    const int axis = order[static_cast<size_t>(i)];
    if (shape[axis] == 1) continue;
    if (strides[axis] != expected) return std::nullopt;
    expected *= shape[axis];
  }
  return order;
}

Tensor run_matmul(const Tensor& a, const Tensor& b, const Tensor& bias, bool ta, bool tb,
                  const MatmulOptions& options);

// run_matmul of a batched a whose rows fold (foldable_rows) as one [rows, K] product, whatever
// the order of a's axes in memory: an LSTM's input projection of a batch-first [B, T, in] seen as
// [T, B, in] was a strided batched product at 165 GFLOP/s where the folded one runs at 220 (oneDNN
// 2.6, 2-core Zen 4). The output keeps a's order of axes in memory (a view of the [rows, N]
// result), so nothing is copied on either side.
Tensor run_folded_matmul(const Tensor& a, const Tensor& b, const Tensor& bias, bool tb,
                         const MatmulOptions& options, const std::vector<int>& order) {
  const int lead = a.rank() - 1;
  std::vector<int> axes = order;
  axes.push_back(lead);
  const Tensor ordered = a.detach().permute(axes);  // dense, rows outermost-first
  const Tensor rows = ordered.reshape(Shape{a.numel() / a.dim(-1), a.dim(-1)});
  const Tensor product =
      run_matmul(rows, b.detach(), bias.defined() ? bias.detach() : bias, false, tb, options);
  Shape ordered_out(std::vector<int64_t>(ordered.shape().begin(), ordered.shape().end() - 1));
  ordered_out.push_back(product.dim(1));
  std::vector<int> inverse(axes.size());
  for (size_t i = 0; i < axes.size(); ++i)
    inverse[static_cast<size_t>(axes[i])] = static_cast<int>(i);
  return product.reshape(ordered_out).permute(inverse);
}

Tensor run_matmul(const Tensor& a, const Tensor& b, const Tensor& bias, bool ta, bool tb,
                  const MatmulOptions& options) {
  require_float(a, "matmul");
  require_same_dtype(a, b, "matmul");
  if (const auto order = foldable_rows(a, b, ta)) {
    (void)matmul_shape(a, b, ta, tb);  // errors name the caller's shapes
    return run_folded_matmul(a, b, bias, tb, options, *order);
  }
  sy_op_params params{};
  params.matmul.transpose_a = ta ? 1 : 0;
  params.matmul.transpose_b = tb ? 1 : 0;
  params.matmul.has_bias = bias.defined() ? 1 : 0;
  Tensor out = empty_like_shape(a, matmul_shape(a, b, ta, tb));
  const uint32_t flags = options.constant_weight ? SY_CALL_CONSTANT_WEIGHTS : 0u;
  if (bias.defined()) {
    run_op(SY_OP_MATMUL, {a, b, bias}, {out}, params, flags);
  } else {
    run_op(SY_OP_MATMUL, {a, b}, {out}, params, flags);
  }
  return out;
}

// [..., rows, cols] -> [batch x rows, cols].
Tensor fold_batch(const Tensor& x) {
  return x.reshape(Shape{x.numel() / x.dim(-1), x.dim(-1)});
}

// The gradient of a matrix b that a batched a shares (a Linear's weight applied to [B, T, in]):
// one product over all batch x rows, instead of one per batch entry summed afterwards, which
// wrote a [batch, N, K] temporary and ran products with a short inner dimension.
Tensor shared_matrix_grad(const Tensor& g, const Tensor& a, bool tb) {
  const Tensor a2 = fold_batch(a), g2 = fold_batch(g);
  return tb ? matmul(g2, a2, true, false) : matmul(a2, g2, true, false);
}

// out = op(a) op(b) (+ bias); dA = g B^T and dB = A^T g, transposed back where a or b was.
Grads matmul_backward(const Tensor& g, const Node& node, const Tensor& a, const Tensor& b,
                      const Shape& bias_shape, bool ta, bool tb) {
  Tensor ga, gb, gbias;
  if (node.needs_grad(0)) {
    ga = ta ? matmul(b, g, tb, true) : matmul(g, b, false, !tb);
    ga = sum_to_shape(ga, a.shape());
  }
  if (node.needs_grad(1)) {
    if (b.rank() == 2 && a.rank() > 2 && !ta) {
      gb = shared_matrix_grad(g, a, tb);
    } else {
      gb = tb ? matmul(g, a, true, ta) : matmul(a, g, !ta, false);
      gb = sum_to_shape(gb, b.shape());
    }
  }
  if (node.inputs().size() > 2 && node.needs_grad(2)) gbias = sum_to_shape(g, bias_shape);
  return Grads{ga, gb, gbias};
}

Tensor matmul_recorded(const Tensor& a, const Tensor& b, const Tensor& bias, bool ta, bool tb,
                       const MatmulOptions& options) {
  Tensor out = run_matmul(a, b, bias, ta, tb, options);
  const Shape bias_shape = bias.defined() ? bias.shape() : Shape{};
  auto backward = [a_data = a.detach(), b_data = b.detach(), bias_shape, ta, tb](const Tensor& g,
                                                                                 const Node& node) {
    return matmul_backward(g, node, a_data, b_data, bias_shape, ta, tb);
  };
  if (bias.defined()) {
    record_op(out, "matmul", {a, b, bias}, backward);
  } else {
    record_op(out, "matmul", {a, b}, backward);
  }
  return out;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  return matmul(a, b, transpose_a, transpose_b, MatmulOptions{});
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  return linear(x, weight, bias, MatmulOptions{});
}

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b,
              const MatmulOptions& options) {
  return matmul_recorded(autocast_low(a), autocast_low(b), Tensor(), transpose_a, transpose_b,
                         options);
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias,
              const MatmulOptions& options) {
  return matmul_recorded(autocast_low(x), autocast_low(weight), autocast_low(bias), false, true,
                         options);
}

// ---- convolution --------------------------------------------------------------------------------

namespace {

int64_t conv_extent(int64_t in, int64_t kernel, int stride, int pad, int dilation) {
  return (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

sy_op_params conv_params(const Conv2dOptions& o, bool has_bias) {
  sy_op_params params{};
  params.conv2d = {o.stride_h,   o.stride_w,         o.pad_h, o.pad_w, o.dilation_h,
                   o.dilation_w, has_bias ? 1u : 0u, 0u};
  if (o.groups != 1) params.conv2d_grouped.groups = o.groups;
  return params;
}

// The op ids of one convolution: CONV2D's family for groups = 1, CONV2D_GROUPED's otherwise.
struct ConvOps {
  sy_op forward, backward_data, backward_weight;
};
ConvOps conv_ops(const Conv2dOptions& o) {
  if (o.groups == 1) {
    return {SY_OP_CONV2D, SY_OP_CONV2D_BACKWARD_DATA, SY_OP_CONV2D_BACKWARD_WEIGHT};
  }
  return {SY_OP_CONV2D_GROUPED, SY_OP_CONV2D_GROUPED_BACKWARD_DATA,
          SY_OP_CONV2D_GROUPED_BACKWARD_WEIGHT};
}

Grads conv2d_backward(const Tensor& g, const Node& node, const Tensor& x, const Tensor& w,
                      const Conv2dOptions& options) {
  const ConvOps ops = conv_ops(options);
  Tensor gx, gw, gb;
  if (node.needs_grad(0)) {
    gx = empty_like_shape(x, x.shape());
    run_op(ops.backward_data, {g, w}, {gx}, conv_params(options, false));
  }
  const bool want_bias = node.inputs().size() > 2 && node.needs_grad(2);
  if (node.needs_grad(1) || want_bias) {
    gw = empty_like_shape(w, w.shape());
    if (want_bias) {
      gb = empty_like_shape(w, Shape{w.dim(0)});
      run_op(ops.backward_weight, {g, x}, {gw, gb}, conv_params(options, true));
    } else {
      run_op(ops.backward_weight, {g, x}, {gw}, conv_params(options, false));
    }
  }
  return Grads{gx, node.needs_grad(1) ? gw : Tensor(), gb};
}

// y's shape [N, O, OH, OW] for x [N, C, H, W] and weight [O, C / groups, KH, KW].
Shape conv_out_shape(const Tensor& x, const Tensor& weight, const Conv2dOptions& options) {
  return Shape{
      x.dim(0), weight.dim(0),
      conv_extent(x.dim(2), weight.dim(2), options.stride_h, options.pad_h, options.dilation_h),
      conv_extent(x.dim(3), weight.dim(3), options.stride_w, options.pad_w, options.dilation_w)};
}

// One op (CONV2D, or CONV2D_GROUPED for groups > 1), recorded with its backward.
Tensor conv2d_op(const Tensor& x, const Tensor& weight, const Tensor& bias,
                 const Conv2dOptions& options) {
  const Shape out_shape = conv_out_shape(x, weight, options);
  Tensor out = empty_like_format(x, out_shape);
  const sy_op_params params = conv_params(options, bias.defined());
  const sy_op forward = conv_ops(options).forward;
  const char* name = options.groups == 1 ? "conv2d" : "conv2d_grouped";
  auto backward = [x_data = x.detach(), w_data = weight.detach(), options](const Tensor& g,
                                                                           const Node& node) {
    return conv2d_backward(g, node, x_data, w_data, options);
  };
  const uint32_t flags = options.constant_weight ? SY_CALL_CONSTANT_WEIGHTS : 0u;
  if (bias.defined()) {
    run_op(forward, {x, weight, bias}, {out}, params, flags);
    record_op(out, name, {x, weight, bias}, backward);
  } else {
    run_op(forward, {x, weight}, {out}, params, flags);
    record_op(out, name, {x, weight}, backward);
  }
  return out;
}

// The composed path: one CONV2D per group on slices of x, weight and bias, concatenated along
// the channels. Autograd flows through the slices, the convolutions and the concatenation.
Tensor conv2d_composed(const Tensor& x, const Tensor& weight, const Tensor& bias,
                       const Conv2dOptions& options) {
  Conv2dOptions single = options;
  single.groups = 1;
  single.constant_weight = false;  // the slices below are fresh copies at every call
  const int64_t in_per = x.dim(1) / options.groups, out_per = weight.dim(0) / options.groups;
  std::vector<Tensor> parts;
  parts.reserve(static_cast<size_t>(options.groups));
  for (int64_t g = 0; g < options.groups; ++g) {
    const Tensor b = bias.defined() ? bias.narrow(0, g * out_per, out_per).contiguous() : Tensor();
    parts.push_back(conv2d_op(x.narrow(1, g * in_per, in_per).contiguous(),
                              weight.narrow(0, g * out_per, out_per).contiguous(), b, single));
  }
  return concat(parts, 1);
}

bool use_grouped_op(const Tensor& x, const Conv2dOptions& options) {
  switch (options.path) {
    case ConvPath::kGroupedOp:
      return true;
    case ConvPath::kComposed:
      return false;
    case ConvPath::kAuto:
      break;
  }
  return x.device()->supports(SY_OP_CONV2D_GROUPED, to_sy_dtype(x.dtype()));
}

}  // namespace

namespace {

// conv2d's argument checks, naming `op`.
void check_conv_args(const Tensor& x, const Tensor& weight, const Conv2dOptions& options,
                     const char* op) {
  require_float(x, op);
  const int64_t groups = options.groups;
  if (x.rank() != 4 || weight.rank() != 4) {
    throw_error(invalid_argument(
        std::string(op) + ": needs x [N, C, H, W] and weight [O, C / groups, KH, KW], got x " +
        x.shape().to_string() + " and weight " + weight.shape().to_string()));
  }
  if (groups < 1 || x.dim(1) % groups != 0 || weight.dim(0) % groups != 0) {
    throw_error(invalid_argument(std::string(op) + ": groups " + std::to_string(groups) +
                                 " must be >= 1 and divide the input channels (" +
                                 std::to_string(x.dim(1)) + ") and the output channels (" +
                                 std::to_string(weight.dim(0)) + ")"));
  }
  if (weight.dim(1) * groups != x.dim(1)) {
    throw_error(invalid_argument(std::string(op) + ": weight " + weight.shape().to_string() +
                                 " needs C / groups = " + std::to_string(x.dim(1) / groups) +
                                 " in dim 1 for x " + x.shape().to_string() + " and groups " +
                                 std::to_string(groups)));
  }
}

uint32_t activation_id(ConvEpilogue::Activation activation) {
  switch (activation) {
    case ConvEpilogue::Activation::kRelu:
      return SY_ACTIVATION_RELU;
    case ConvEpilogue::Activation::kClip:
      return SY_ACTIVATION_CLIP;
    case ConvEpilogue::Activation::kSilu:
      return SY_ACTIVATION_SILU;
    case ConvEpilogue::Activation::kNone:
      break;
  }
  return SY_ACTIVATION_NONE;
}

}  // namespace

Tensor conv_epilogue(const Tensor& y_in, const ConvEpilogue& epilogue) {
  const Tensor y = epilogue.residual.defined() ? add(y_in, epilogue.residual) : y_in;
  switch (epilogue.activation) {
    case ConvEpilogue::Activation::kRelu:
      return relu(y);
    case ConvEpilogue::Activation::kClip:
      return minimum(maximum(y, static_cast<double>(epilogue.low)),
                     static_cast<double>(epilogue.high));
    case ConvEpilogue::Activation::kSilu:
      return mul(y, sigmoid(y));
    case ConvEpilogue::Activation::kNone:
      break;
  }
  return y;
}

Tensor conv2d(const Tensor& x_in, const Tensor& weight_in, const Tensor& bias_in,
              const Conv2dOptions& options) {
  const Tensor x = autocast_low(x_in);
  const Tensor weight = autocast_low(weight_in);
  const Tensor bias = autocast_low(bias_in);
  check_conv_args(x, weight, options, "conv2d");
  if (options.groups == 1 || use_grouped_op(x, options)) return conv2d_op(x, weight, bias, options);
  return conv2d_composed(x, weight, bias, options);
}

Tensor conv2d_fused(const Tensor& x_in, const Tensor& weight_in, const Tensor& bias_in,
                    const Conv2dOptions& options, const ConvEpilogue& epilogue) {
  const Tensor x = autocast_low(x_in);
  const Tensor weight = autocast_low(weight_in);
  const Tensor bias = autocast_low(bias_in);
  const Tensor residual = autocast_low(epilogue.residual);
  check_conv_args(x, weight, options, "conv2d_fused");
  if (epilogue.activation == ConvEpilogue::Activation::kClip && !(epilogue.low <= epilogue.high)) {
    throw_error(invalid_argument("conv2d_fused: clip bounds " + std::to_string(epilogue.low) +
                                 " > " + std::to_string(epilogue.high)));
  }
  const Shape out_shape = conv_out_shape(x, weight, options);
  const sy_dtype dtype = to_sy_dtype(x.dtype());
  // A residual that broadcasts (a [C, 1, 1] shift, say) is added by ADD's own rules.
  const bool fuse =
      !any_needs_grad({x, weight, bias, residual}) &&
      x.device()->supports(SY_OP_CONV2D_FUSED, dtype) &&
      (!residual.defined() || (residual.dtype() == x.dtype() && residual.shape() == out_shape &&
                               residual.device() == x.device()));
  if (!fuse) {
    ConvEpilogue composed = epilogue;
    composed.residual = residual;
    return conv_epilogue(conv2d(x, weight, bias, options), composed);
  }
  Tensor out = empty_like_format(x, out_shape);
  sy_op_params params = conv_params(options, bias.defined());
  params.conv2d_grouped.groups = options.groups;
  params.conv2d_fused.activation = activation_id(epilogue.activation);
  params.conv2d_fused.has_residual = residual.defined() ? 1u : 0u;
  if (epilogue.activation == ConvEpilogue::Activation::kClip) {
    params.conv2d_fused.low = epilogue.low;
    params.conv2d_fused.high = epilogue.high;
  }
  const uint32_t flags = options.constant_weight ? SY_CALL_CONSTANT_WEIGHTS : 0u;
  if (bias.defined() && residual.defined()) {
    run_op(SY_OP_CONV2D_FUSED, {x, weight, bias, residual}, {out}, params, flags);
  } else if (bias.defined()) {
    run_op(SY_OP_CONV2D_FUSED, {x, weight, bias}, {out}, params, flags);
  } else if (residual.defined()) {
    run_op(SY_OP_CONV2D_FUSED, {x, weight, residual}, {out}, params, flags);
  } else {
    run_op(SY_OP_CONV2D_FUSED, {x, weight}, {out}, params, flags);
  }
  return out;
}

// ---- pooling ------------------------------------------------------------------------------------

namespace {

sy_op_params pool_params(const Pool2dOptions& o) {
  sy_op_params params{};
  params.pool2d = {o.kernel_h,
                   o.kernel_w,
                   o.stride_h,
                   o.stride_w,
                   o.pad_h,
                   o.pad_w,
                   o.count_include_pad ? 1u : 0u,
                   0u};
  return params;
}

Shape pool_shape(const Tensor& x, const Pool2dOptions& o, const char* op) {
  if (x.rank() != 4) {
    throw_error(
        invalid_argument(std::string(op) + ": needs x [N, C, H, W], got " + x.shape().to_string()));
  }
  return Shape{x.dim(0), x.dim(1), (x.dim(2) + 2 * o.pad_h - o.kernel_h) / o.stride_h + 1,
               (x.dim(3) + 2 * o.pad_w - o.kernel_w) / o.stride_w + 1};
}

}  // namespace

Tensor max_pool2d(const Tensor& x, const Pool2dOptions& options) {
  require_float(x, "max_pool2d");
  const sy_op_params params = pool_params(options);
  Tensor out = empty_like_format(x, pool_shape(x, options, "max_pool2d"));
  run_op(SY_OP_MAX_POOL2D, {x}, {out}, params);
  record_op(out, "max_pool2d", {x}, [x_data = x.detach(), params](const Tensor& g, const Node&) {
    Tensor gx = empty_like_shape(x_data, x_data.shape());
    run_op(SY_OP_MAX_POOL2D_BACKWARD, {g, x_data}, {gx}, params);
    return Grads{gx};
  });
  return out;
}

Tensor avg_pool2d(const Tensor& x, const Pool2dOptions& options) {
  require_float(x, "avg_pool2d");
  const sy_op_params params = pool_params(options);
  Tensor out = empty_like_format(x, pool_shape(x, options, "avg_pool2d"));
  run_op(SY_OP_AVG_POOL2D, {x}, {out}, params);
  record_op(out, "avg_pool2d", {x}, [shape = x.shape(), params](const Tensor& g, const Node&) {
    Tensor gx = empty_like_shape(g, shape);
    run_op(SY_OP_AVG_POOL2D_BACKWARD, {g}, {gx}, params);
    return Grads{gx};
  });
  return out;
}

// ---- layer normalisation ------------------------------------------------------------------------

Tensor layer_norm(const Tensor& x_in, const Tensor& gamma_in, const Tensor& beta_in,
                  int normalized_rank, double epsilon) {
  const Tensor x = autocast_f32(x_in);
  const Tensor gamma = autocast_f32(gamma_in);
  const Tensor beta = autocast_f32(beta_in);
  require_float(x, "layer_norm");
  if (normalized_rank < 1 || normalized_rank > x.rank()) {
    throw_error(invalid_argument("layer_norm: normalized_rank " + std::to_string(normalized_rank) +
                                 " for x " + x.shape().to_string()));
  }
  const int lead = x.rank() - normalized_rank;
  Shape row_shape(std::vector<int64_t>(x.shape().begin(), x.shape().begin() + lead));
  sy_op_params params{};
  params.layer_norm.normalized_rank = static_cast<uint32_t>(normalized_rank);
  params.layer_norm.epsilon = epsilon;
  Tensor y = empty_like_shape(x, x.shape());
  Tensor row_mean = empty_like_shape(x, row_shape, DType::kF32);
  Tensor row_rstd = empty_like_shape(x, row_shape, DType::kF32);
  run_op(SY_OP_LAYER_NORM, {x, gamma, beta}, {y, row_mean, row_rstd}, params);
  record_op(y, "layer_norm", {x, gamma, beta},
            [x_data = x.detach(), gamma_data = gamma.detach(), row_mean, row_rstd, params](
                const Tensor& g, const Node&) {
              Tensor gx = empty_like_shape(x_data, x_data.shape());
              Tensor ggamma = empty_like_shape(gamma_data, gamma_data.shape());
              Tensor gbeta = empty_like_shape(gamma_data, gamma_data.shape());
              run_op(SY_OP_LAYER_NORM_BACKWARD, {g, x_data, row_mean, row_rstd, gamma_data},
                     {gx, ggamma, gbeta}, params);
              return Grads{gx, ggamma, gbeta};
            });
  return y;
}

}  // namespace switchyard
