// CONV2D and its backward ops (34-36), MAX/AVG pooling and their backward ops (37-40).
#include "ops.h"

namespace sy_cuda {
namespace {

int64_t conv_extent(int64_t in, int32_t pad, int32_t dilation, int64_t kernel, int32_t stride) {
  return (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

std::string dims(int64_t a, int64_t b, int64_t c, int64_t d) {
  const int64_t shape[4] = {a, b, c, d};
  return shape_text(4, shape);
}

Status expect_4d(const OpContext& ctx, const sy_tensor_desc& t, const char* role, int64_t n,
                 int64_t c, int64_t h, int64_t w) {
  if (t.rank == 4 && t.shape[0] == n && t.shape[1] == c && t.shape[2] == h && t.shape[3] == w) {
    return ok_status();
  }
  return invalid_argument(std::string(ctx.name) + ": " + role + " " + shape_text(t) +
                          " should be " + dims(n, c, h, w));
}

Status check_conv_params(const OpContext& ctx) {
  const sy_conv2d_params& p = ctx.call.params.conv2d;
  if (p.stride_h < 1 || p.stride_w < 1 || p.pad_h < 0 || p.pad_w < 0 || p.dilation_h < 1 ||
      p.dilation_w < 1) {
    return invalid_argument(std::string(ctx.name) + ": stride " + std::to_string(p.stride_h) + "x" +
                            std::to_string(p.stride_w) + ", pad " + std::to_string(p.pad_h) + "x" +
                            std::to_string(p.pad_w) + ", dilation " + std::to_string(p.dilation_h) +
                            "x" + std::to_string(p.dilation_w) +
                            " (strides and dilations must be >= 1, pads >= 0)");
  }
  for (uint32_t i = 0; i < ctx.call.num_inputs; ++i) {
    if (ctx.in(i).rank != 4 && !(i == 2 && ctx.in(i).rank == 1)) {
      return invalid_argument(std::string(ctx.name) + ": input " + std::to_string(i) + " " +
                              shape_text(ctx.in(i)) + " must have rank 4");
    }
  }
  return ok_status();
}

// x [N, C, H, W] and w [O, C, KH, KW] give y [N, O, OH, OW]; checks y (or grad_y) against them.
Status check_conv_shapes(const OpContext& ctx, const sy_tensor_desc& x, const sy_tensor_desc& w,
                         const sy_tensor_desc& y, const char* y_role) {
  const sy_conv2d_params& p = ctx.call.params.conv2d;
  if (x.rank != 4 || w.rank != 4 || x.shape[1] != w.shape[1]) {
    return invalid_argument(std::string(ctx.name) + ": x " + shape_text(x) + " and w " +
                            shape_text(w) + " must be [N, C, H, W] and [O, C, KH, KW]");
  }
  const int64_t oh = conv_extent(x.shape[2], p.pad_h, p.dilation_h, w.shape[2], p.stride_h);
  const int64_t ow = conv_extent(x.shape[3], p.pad_w, p.dilation_w, w.shape[3], p.stride_w);
  if (oh < 1 || ow < 1) {
    return invalid_argument(std::string(ctx.name) + ": x " + shape_text(x) + " with w " +
                            shape_text(w) + " gives an empty output (" + std::to_string(oh) + "x" +
                            std::to_string(ow) + ")");
  }
  return expect_4d(ctx, y, y_role, x.shape[0], w.shape[0], oh, ow);
}

SyConvArgs conv_args(const OpContext& ctx, const sy_tensor_desc& in0, const sy_tensor_desc& in1,
                     const sy_tensor_desc& out) {
  const sy_conv2d_params& p = ctx.call.params.conv2d;
  SyConvArgs a{};
  a.in0 = tensor_arg(ctx.address(in0), in0);
  a.in1 = tensor_arg(ctx.address(in1), in1);
  a.out = tensor_arg(ctx.address(out), out);
  a.stride_h = p.stride_h;
  a.stride_w = p.stride_w;
  a.pad_h = p.pad_h;
  a.pad_w = p.pad_w;
  a.dilation_h = p.dilation_h;
  a.dilation_w = p.dilation_w;
  return a;
}

Status enqueue_bias_grad(const OpContext& ctx, const sy_tensor_desc& grad_y,
                         const sy_tensor_desc& grad_bias) {
  if (grad_bias.rank != 1 || grad_bias.shape[0] != grad_y.shape[1]) {
    return invalid_argument("CONV2D_BACKWARD_WEIGHT: grad_bias " + shape_text(grad_bias) +
                            " should be [" + std::to_string(grad_y.shape[1]) + "]");
  }
  const int kept[1] = {1};
  const int reduced[3] = {0, 2, 3};
  const int out_axes[1] = {0};
  SyReduceArgs r{};
  r.in_kept = axes_view(ctx.address(grad_y), grad_y, kept, 1);
  r.out_kept = axes_view(ctx.address(grad_bias), grad_bias, out_axes, 1);
  r.in_reduced = axes_view(0, grad_y, reduced, 3);
  r.kept_count = grad_y.shape[1];
  r.reduced_count = grad_y.shape[0] * grad_y.shape[2] * grad_y.shape[3];
  r.op = SY_OP_REDUCE_SUM;
  r.group_size = 256;
  LaunchShape shape = ctx.linear(r.kept_count, 1);
  shape.block = 256;
  return ctx.launch(Kernel::sy_reduce, shape, r);
}

Status run_conv_backward_weight(const OpContext& ctx) {
  const bool has_bias = ctx.call.params.conv2d.has_bias != 0;
  SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, 2, has_bias ? 2 : 1));
  const sy_tensor_desc& grad_y = ctx.in(0);
  const sy_tensor_desc& x = ctx.in(1);
  const sy_tensor_desc& grad_w = ctx.out(0);
  SY_CUDA_RETURN_IF_ERROR(expect_float_same(ctx, {&grad_y, &x, &grad_w}));
  if (has_bias) SY_CUDA_RETURN_IF_ERROR(expect_float_same(ctx, {&grad_y, &ctx.out(1)}));
  if (grad_w.rank != 4 || grad_w.shape[1] != x.shape[1]) {
    return invalid_argument("CONV2D_BACKWARD_WEIGHT: grad_w " + shape_text(grad_w) +
                            " should be [O, C, KH, KW] with C = " + std::to_string(x.shape[1]));
  }
  SY_CUDA_RETURN_IF_ERROR(check_conv_shapes(ctx, x, grad_w, grad_y, "grad_y"));
  SyConvArgs a = conv_args(ctx, grad_y, x, grad_w);
  const int64_t terms = grad_y.shape[0] * grad_y.shape[2] * grad_y.shape[3];
  a.group_size = terms >= 4096 ? 256 : 32;
  if (numel(grad_w) > 0) {
    LaunchShape shape = ctx.linear((numel(grad_w) * a.group_size + 255) / 256, 1);
    shape.block = 256;
    SY_CUDA_RETURN_IF_ERROR(ctx.launch(Kernel::sy_conv2d_backward_weight, shape, a));
  }
  return has_bias ? enqueue_bias_grad(ctx, grad_y, ctx.out(1)) : ok_status();
}

}  // namespace

Status run_conv(const OpContext& ctx) {
  SY_CUDA_RETURN_IF_ERROR(check_conv_params(ctx));
  if (ctx.call.op == SY_OP_CONV2D_BACKWARD_WEIGHT) return run_conv_backward_weight(ctx);
  if (ctx.call.op == SY_OP_CONV2D) {
    const bool has_bias = ctx.call.params.conv2d.has_bias != 0;
    SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, has_bias ? 3 : 2, 1));
    SY_CUDA_RETURN_IF_ERROR(expect_float_same(ctx, {&ctx.in(0), &ctx.in(1), &ctx.out(0)}));
    SY_CUDA_RETURN_IF_ERROR(check_conv_shapes(ctx, ctx.in(0), ctx.in(1), ctx.out(0), "y"));
    SyConvArgs a = conv_args(ctx, ctx.in(0), ctx.in(1), ctx.out(0));
    if (has_bias) {
      const sy_tensor_desc& bias = ctx.in(2);
      SY_CUDA_RETURN_IF_ERROR(expect_float_same(ctx, {&ctx.in(0), &bias}));
      if (bias.rank != 1 || bias.shape[0] != ctx.in(1).shape[0]) {
        return invalid_argument("CONV2D: bias " + shape_text(bias) + " should be [" +
                                std::to_string(ctx.in(1).shape[0]) + "]");
      }
      a.bias = tensor_arg(ctx.address(bias), bias);
      a.has_bias = 1;
    }
    if (numel(ctx.out(0)) == 0) return ok_status();
    return ctx.launch(Kernel::sy_conv2d_forward, ctx.linear(numel(ctx.out(0))), a);
  }
  SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, 2, 1));  // CONV2D_BACKWARD_DATA
  SY_CUDA_RETURN_IF_ERROR(expect_float_same(ctx, {&ctx.in(0), &ctx.in(1), &ctx.out(0)}));
  SY_CUDA_RETURN_IF_ERROR(check_conv_shapes(ctx, ctx.out(0), ctx.in(1), ctx.in(0), "grad_y"));
  if (numel(ctx.out(0)) == 0) return ok_status();
  return ctx.launch(Kernel::sy_conv2d_backward_data, ctx.linear(numel(ctx.out(0))),
                    conv_args(ctx, ctx.in(0), ctx.in(1), ctx.out(0)));
}

namespace {

Status check_pool(const OpContext& ctx, const sy_tensor_desc& x, const sy_tensor_desc& y,
                  const char* y_role) {
  const sy_pool2d_params& p = ctx.call.params.pool2d;
  if (p.kernel_h < 1 || p.kernel_w < 1 || p.stride_h < 1 || p.stride_w < 1 || p.pad_h < 0 ||
      p.pad_w < 0 || p.pad_h > p.kernel_h / 2 || p.pad_w > p.kernel_w / 2) {
    return invalid_argument(std::string(ctx.name) + ": kernel " + std::to_string(p.kernel_h) + "x" +
                            std::to_string(p.kernel_w) + ", stride " + std::to_string(p.stride_h) +
                            "x" + std::to_string(p.stride_w) + ", pad " + std::to_string(p.pad_h) +
                            "x" + std::to_string(p.pad_w) +
                            " (kernel, stride >= 1; 0 <= pad <= kernel / 2)");
  }
  if (x.rank != 4) {
    return invalid_argument(std::string(ctx.name) + ": x " + shape_text(x) +
                            " must be [N, C, H, W]");
  }
  const int64_t oh = (x.shape[2] + 2 * p.pad_h - p.kernel_h) / p.stride_h + 1;
  const int64_t ow = (x.shape[3] + 2 * p.pad_w - p.kernel_w) / p.stride_w + 1;
  if (oh < 1 || ow < 1) {
    return invalid_argument(std::string(ctx.name) + ": x " + shape_text(x) +
                            " is smaller than the pooling window");
  }
  return expect_4d(ctx, y, y_role, x.shape[0], x.shape[1], oh, ow);
}

}  // namespace

Status run_pool(const OpContext& ctx) {
  const uint32_t op = ctx.call.op;
  const sy_pool2d_params& p = ctx.call.params.pool2d;
  SyPoolArgs a{};
  a.kernel_h = p.kernel_h;
  a.kernel_w = p.kernel_w;
  a.stride_h = p.stride_h;
  a.stride_w = p.stride_w;
  a.pad_h = p.pad_h;
  a.pad_w = p.pad_w;
  a.count_include_pad = p.count_include_pad != 0;
  a.op = static_cast<int32_t>(op);
  const sy_tensor_desc& out = ctx.out(0);
  if (op == SY_OP_MAX_POOL2D || op == SY_OP_AVG_POOL2D) {
    SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, 1, 1));
    SY_CUDA_RETURN_IF_ERROR(expect_float_same(ctx, {&ctx.in(0), &out}));
    SY_CUDA_RETURN_IF_ERROR(check_pool(ctx, ctx.in(0), out, "y"));
    a.in0 = tensor_arg(ctx.address(ctx.in(0)), ctx.in(0));
    a.out = tensor_arg(ctx.address(out), out);
    if (numel(out) == 0) return ok_status();
    return ctx.launch(Kernel::sy_pool2d_forward, ctx.linear(numel(out)), a);
  }
  const bool max = op == SY_OP_MAX_POOL2D_BACKWARD;
  SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, max ? 2 : 1, 1));
  SY_CUDA_RETURN_IF_ERROR(expect_float_same(ctx, {&ctx.in(0), &out}));
  if (max) {
    SY_CUDA_RETURN_IF_ERROR(expect_float_same(ctx, {&ctx.in(0), &ctx.in(1)}));
    SY_CUDA_RETURN_IF_ERROR(expect_same_shape(ctx, ctx.in(1), "x", out, "grad_x"));
    a.in1 = tensor_arg(ctx.address(ctx.in(1)), ctx.in(1));
  }
  SY_CUDA_RETURN_IF_ERROR(check_pool(ctx, out, ctx.in(0), "grad_y"));
  a.in0 = tensor_arg(ctx.address(ctx.in(0)), ctx.in(0));
  a.out = tensor_arg(ctx.address(out), out);
  if (numel(out) == 0) return ok_status();
  return ctx.launch(Kernel::sy_pool2d_backward, ctx.linear(numel(out)), a);
}

}  // namespace sy_cuda
