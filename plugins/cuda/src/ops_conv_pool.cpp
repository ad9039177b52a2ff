// CONV2D and its backward ops (34-36), the CONV2D_GROUPED family (53-55), CONV2D_FUSED (58),
// MAX/AVG pooling and their backward ops (37-40).
#include <algorithm>

#include "ops.h"

namespace sy_cuda {
namespace {

int64_t conv_extent(int64_t in, int32_t pad, int32_t dilation, int64_t kernel, int32_t stride) {
  return (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
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

// 1 for CONV2D and its backward ops; params.conv2d_grouped.groups for the CONV2D_GROUPED family and
// CONV2D_FUSED (whose params begin with the grouped ones).
int32_t groups_of(const OpContext& ctx) {
  return ctx.call.op >= SY_OP_CONV2D_GROUPED ? ctx.call.params.conv2d_grouped.groups : 1;
}

// x [N, C, H, W] and w [O, C/G, KH, KW] give y [N, O, OH, OW]; checks y (or grad_y) against them.
Status check_conv_shapes(const OpContext& ctx, const sy_tensor_desc& x, const sy_tensor_desc& w,
                         const sy_tensor_desc& y, const char* y_role) {
  const sy_conv2d_params& p = ctx.call.params.conv2d;
  const int32_t groups = groups_of(ctx);
  if (x.rank != 4 || w.rank != 4) {
    return invalid_argument(std::string(ctx.name) + ": x " + shape_text(x) + " and w " +
                            shape_text(w) + " must be [N, C, H, W] and [O, C/groups, KH, KW]");
  }
  if (groups < 1 || x.shape[1] % groups != 0 || w.shape[0] % groups != 0) {
    return invalid_argument(std::string(ctx.name) + ": groups " + std::to_string(groups) +
                            " must be >= 1 and divide the input channels (" +
                            std::to_string(x.shape[1]) + ") and the output channels (" +
                            std::to_string(w.shape[0]) + ")");
  }
  if (x.shape[1] != w.shape[1] * groups) {
    return invalid_argument(
        std::string(ctx.name) + ": x " + shape_text(x) + " and w " + shape_text(w) + " with " +
        std::to_string(groups) +
        " group(s): w must be [O, C/groups = " + std::to_string(x.shape[1] / groups) + ", KH, KW]");
  }
  const int64_t oh = conv_extent(x.shape[2], p.pad_h, p.dilation_h, w.shape[2], p.stride_h);
  const int64_t ow = conv_extent(x.shape[3], p.pad_w, p.dilation_w, w.shape[3], p.stride_w);
  if (oh < 1 || ow < 1) {
    return invalid_argument(std::string(ctx.name) + ": x " + shape_text(x) + " with w " +
                            shape_text(w) + " gives an empty output (" + std::to_string(oh) + "x" +
                            std::to_string(ow) + ")");
  }
  return expect_shape(ctx, y, y_role, {x.shape[0], w.shape[0], oh, ow});
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
  a.groups = groups_of(ctx);
  return a;
}

Status enqueue_bias_grad(const OpContext& ctx, const sy_tensor_desc& grad_y,
                         const sy_tensor_desc& grad_bias) {
  if (grad_bias.rank != 1 || grad_bias.shape[0] != grad_y.shape[1]) {
    return invalid_argument(std::string(ctx.name) + ": grad_bias " + shape_text(grad_bias) +
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

// The GEMM form of a forward convolution holds its im2col patches in chunks of images of at most
// this size (at least one image).
constexpr uint64_t kColumnBytes = 256ull << 20;

bool dense(const sy_tensor_desc& t) {
  int64_t stride = 1;
  for (int d = static_cast<int>(t.rank) - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != stride) return false;
    stride *= t.shape[d];
  }
  return true;
}

// groups 1 in f32 with dense w and y: the convolution is a product, w [O, C*KH*KW] times the
// patches of each image [C*KH*KW, OH*OW], which cuBLASLt (or the tiled matmul kernel) runs far
// faster than the direct kernel's gather. Other dtypes keep the direct kernel, whose one rounding
// of the sum (bias included) is the op's definition.
bool gemm_form(const OpContext& ctx, const sy_tensor_desc& x, const sy_tensor_desc& w,
               const sy_tensor_desc& y) {
  return groups_of(ctx) == 1 && x.dtype == SY_DTYPE_F32 && dense(w) && dense(y) && numel(y) > 0 &&
         ctx.device.options.conv_gemm;
}

// y[n] = w [O, K] x col[n] [K, P] per chunk of images through run_matmul (a 1x1 stride-1 unpadded
// convolution reads x itself as [C, H*W]), then the epilogue pass where there is one.
Status run_conv_forward_gemm(const OpContext& ctx, SyConvArgs a, const sy_tensor_desc& x,
                             const sy_tensor_desc& w, const sy_tensor_desc& y) {
  const sy_conv2d_params& p = ctx.call.params.conv2d;
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t O = w.shape[0], KH = w.shape[2], KW = w.shape[3];
  const int64_t OH = y.shape[2], OW = y.shape[3], P = OH * OW, K = C * KH * KW;
  const bool pointwise = KH == 1 && KW == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_h == 0 &&
                         p.pad_w == 0 && x.strides[3] == 1 && x.strides[2] == W &&
                         x.strides[1] == H * W;
  int64_t chunk = N;
  CudaBuffer* col = nullptr;
  const uint64_t per_image = static_cast<uint64_t>(K * P) * sizeof(float);
  if (!pointwise) {
    chunk = std::max<int64_t>(1, std::min<int64_t>(N, kColumnBytes / per_image));
    SY_CUDA_RETURN_IF_ERROR(ctx.scratch(chunk * per_image, &col));
  }
  const sy_tensor_desc w_matrix = dense_desc(w.buffer, w.offset_bytes, w.dtype, {O, K});
  Status status = ok_status();
  for (int64_t n0 = 0; n0 < N && status.ok(); n0 += chunk) {
    const int64_t n = std::min(chunk, N - n0);
    sy_tensor_desc patches;  // [n, K, P]
    if (pointwise) {
      patches = dense_desc(x.buffer, x.offset_bytes + n0 * x.strides[0] * sizeof(float), x.dtype,
                           {n, C, P});
      patches.strides[0] = x.strides[0];
    } else {
      SyIm2colArgs im{};
      im.x = tensor_arg(ctx.address(x) + n0 * x.strides[0] * sizeof(float), x);
      im.col = col->ptr;
      im.images = n;
      im.channels = C;
      im.kernel_h = KH;
      im.kernel_w = KW;
      im.out_h = OH;
      im.out_w = OW;
      im.stride_h = p.stride_h;
      im.stride_w = p.stride_w;
      im.pad_h = p.pad_h;
      im.pad_w = p.pad_w;
      im.dilation_h = p.dilation_h;
      im.dilation_w = p.dilation_w;
      status = ctx.launch(Kernel::sy_conv2d_im2col, ctx.linear(n * K * P), im);
      if (!status.ok()) break;
      patches = dense_desc(reinterpret_cast<sy_buffer>(col), 0, x.dtype, {n, K, P});
    }
    const sy_tensor_desc out =
        dense_desc(y.buffer, y.offset_bytes + n0 * O * P * sizeof(float), y.dtype, {n, O, P});
    status = run_product(ctx, w_matrix, patches, out, false, "CONV2D (as MATMUL)");
  }
  if (col != nullptr) ctx.release(col);
  SY_CUDA_RETURN_IF_ERROR(status);
  if (!a.has_bias && !a.has_residual && a.activation == 0) return ok_status();
  return ctx.launch(Kernel::sy_conv2d_epilogue, ctx.linear(numel(y)), a);
}

// CONV2D, CONV2D_GROUPED and CONV2D_FUSED: x, w [, bias] [, residual] -> y.
Status run_conv_forward(const OpContext& ctx) {
  const bool has_bias = ctx.call.params.conv2d.has_bias != 0;
  const sy_conv2d_fused_params* fused =
      ctx.call.op == SY_OP_CONV2D_FUSED ? &ctx.call.params.conv2d_fused : nullptr;
  if (fused != nullptr &&
      (fused->has_residual > 1 || fused->activation > SY_ACTIVATION_SILU ||
       (fused->activation == SY_ACTIVATION_CLIP && !(fused->low <= fused->high)))) {
    return invalid_argument(
        std::string(ctx.name) +
        ": params.conv2d_fused needs has_residual 0 or 1, an activation 0-3 and, for CLIP, "
        "low <= high; got has_residual " +
        std::to_string(fused->has_residual) + ", activation " + std::to_string(fused->activation) +
        ", low " + std::to_string(fused->low) + ", high " + std::to_string(fused->high));
  }
  const bool has_residual = fused != nullptr && fused->has_residual != 0;
  const uint32_t inputs = 2 + (has_bias ? 1 : 0) + (has_residual ? 1 : 0);
  SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, inputs, 1));
  const sy_tensor_desc& x = ctx.in(0);
  const sy_tensor_desc& w = ctx.in(1);
  const sy_tensor_desc& y = ctx.out(0);
  SY_CUDA_RETURN_IF_ERROR(expect_float_same(ctx, {&x, &w, &y}));
  SY_CUDA_RETURN_IF_ERROR(check_conv_shapes(ctx, x, w, y, "y"));
  SyConvArgs a = conv_args(ctx, x, w, y);
  if (has_bias) {
    const sy_tensor_desc& bias = ctx.in(2);
    SY_CUDA_RETURN_IF_ERROR(expect_float_same(ctx, {&x, &bias}));
    if (bias.rank != 1 || bias.shape[0] != w.shape[0]) {
      return invalid_argument(std::string(ctx.name) + ": bias " + shape_text(bias) +
                              " should be [" + std::to_string(w.shape[0]) + "]");
    }
    a.bias = tensor_arg(ctx.address(bias), bias);
    a.has_bias = 1;
  }
  if (has_residual) {
    const sy_tensor_desc& residual = ctx.in(inputs - 1);
    SY_CUDA_RETURN_IF_ERROR(expect_float_same(ctx, {&x, &residual}));
    SY_CUDA_RETURN_IF_ERROR(expect_same_shape(ctx, residual, "residual", y, "y"));
    a.residual = tensor_arg(ctx.address(residual), residual);
    a.has_residual = 1;
  }
  if (fused != nullptr) {
    a.activation = static_cast<int32_t>(fused->activation);
    a.low = fused->low;
    a.high = fused->high;
  }
  if (numel(y) == 0) return ok_status();
  if (gemm_form(ctx, x, w, y)) return run_conv_forward_gemm(ctx, a, x, w, y);
  const Kernel direct =
      x.dtype == SY_DTYPE_F32 ? Kernel::sy_conv2d_forward_f32 : Kernel::sy_conv2d_forward;
  return ctx.launch(direct, ctx.linear(numel(y)), a);
}

}  // namespace

Status run_conv(const OpContext& ctx) {
  SY_CUDA_RETURN_IF_ERROR(check_conv_params(ctx));
  switch (ctx.call.op) {
    case SY_OP_CONV2D:
    case SY_OP_CONV2D_GROUPED:
    case SY_OP_CONV2D_FUSED:
      return run_conv_forward(ctx);
    case SY_OP_CONV2D_BACKWARD_WEIGHT:
    case SY_OP_CONV2D_GROUPED_BACKWARD_WEIGHT:
      return run_conv_backward_weight(ctx);
    default:  // CONV2D_BACKWARD_DATA, CONV2D_GROUPED_BACKWARD_DATA
      break;
  }
  SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, 2, 1));
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
  return expect_shape(ctx, y, y_role, {x.shape[0], x.shape[1], oh, ow});
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
