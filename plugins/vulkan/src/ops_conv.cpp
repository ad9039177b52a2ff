// CONV2D and its backward ops (NCHW activations, OIHW weights, groups = 1), direct method.
#include <algorithm>
#include <vector>

#include "conv_geometry.h"
#include "ops.h"

namespace sy_vk {
namespace {

// Reads the params into `g` (everything but the tensor sizes) and checks their ranges.
Status read_conv_params(const OpContext& ctx, ConvGeometry* g) {
  const sy_conv2d_params& p = ctx.call.params.conv2d;
  if (p.stride_h < 1 || p.stride_w < 1 || p.pad_h < 0 || p.pad_w < 0 || p.dilation_h < 1 ||
      p.dilation_w < 1) {
    return invalid_argument(
        std::string(op_name(ctx.call.op)) + ": stride " + std::to_string(p.stride_h) + "x" +
        std::to_string(p.stride_w) + ", pad " + std::to_string(p.pad_h) + "x" +
        std::to_string(p.pad_w) + ", dilation " + std::to_string(p.dilation_h) + "x" +
        std::to_string(p.dilation_w) + ": strides and dilations must be >= 1, paddings >= 0");
  }
  g->stride_h = p.stride_h;
  g->stride_w = p.stride_w;
  g->pad_h = p.pad_h;
  g->pad_w = p.pad_w;
  g->dilation_h = p.dilation_h;
  g->dilation_w = p.dilation_w;
  return ok_status();
}

// Fills the sizes from x-like [N, C, H, W] and w-like [O, C, KH, KW] shapes and derives OH, OW.
void set_sizes(ConvGeometry* g, const int64_t* x_shape, const int64_t* w_shape) {
  g->n = x_shape[0];
  g->c = x_shape[1];
  g->h = x_shape[2];
  g->w = x_shape[3];
  g->o = w_shape[0];
  g->kh = w_shape[2];
  g->kw = w_shape[3];
  g->oh = conv_output_size(g->h, g->kh, g->stride_h, g->pad_h, g->dilation_h);
  g->ow = conv_output_size(g->w, g->kw, g->stride_w, g->pad_w, g->dilation_w);
}

Status expect_shape(const OpContext& ctx, const sy_tensor_desc& t, const char* role, int64_t a,
                    int64_t b, int64_t c, int64_t d) {
  if (t.shape[0] == a && t.shape[1] == b && t.shape[2] == c && t.shape[3] == d) return ok_status();
  return invalid_argument(std::string(op_name(ctx.call.op)) + ": " + role + " " + shape_text(t) +
                          " should be " + dims_text(a, b, c, d));
}

Status bind_all(const OpContext& ctx, std::initializer_list<const sy_tensor_desc*> tensors,
                std::initializer_list<const char*> roles, std::vector<BufferBinding>* bindings,
                ParamBlock* params) {
  bindings->resize(tensors.size());
  auto role = roles.begin();
  size_t i = 0;
  for (const sy_tensor_desc* t : tensors) {
    SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, *t, *role++, &(*bindings)[i], &params->t[i]));
    ++i;
  }
  return ok_status();
}

}  // namespace

Status run_conv2d(const OpContext& ctx) {
  const bool has_bias = ctx.call.params.conv2d.has_bias != 0;
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, has_bias ? 3 : 2, 1));
  const sy_tensor_desc& x = ctx.call.inputs[0];
  const sy_tensor_desc& w = ctx.call.inputs[1];
  const sy_tensor_desc& bias = has_bias ? ctx.call.inputs[2] : w;
  const sy_tensor_desc& y = ctx.call.outputs[0];
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, x.dtype, "x"));
  SY_VK_RETURN_IF_ERROR(check_same_dtype(ctx, {&x, &w, &bias, &y}, {"x", "w", "bias", "y"}));
  SY_VK_RETURN_IF_ERROR(check_rank4(ctx, x, "x", "[N, C, H, W]"));
  SY_VK_RETURN_IF_ERROR(check_rank4(ctx, w, "w", "[O, C, KH, KW]"));
  SY_VK_RETURN_IF_ERROR(check_rank4(ctx, y, "y", "[N, O, OH, OW]"));
  ConvGeometry g;
  SY_VK_RETURN_IF_ERROR(read_conv_params(ctx, &g));
  set_sizes(&g, x.shape, w.shape);
  if (w.shape[1] != g.c) {
    return invalid_argument("CONV2D: w " + shape_text(w) + " has " + std::to_string(w.shape[1]) +
                            " input channels but x " + shape_text(x) + " has " +
                            std::to_string(g.c));
  }
  if (has_bias && (bias.rank != 1 || bias.shape[0] != g.o)) {
    return invalid_argument("CONV2D: bias " + shape_text(bias) + " should be [" +
                            std::to_string(g.o) + "]");
  }
  SY_VK_RETURN_IF_ERROR(check_geometry(ctx, g));
  SY_VK_RETURN_IF_ERROR(expect_shape(ctx, y, "y", g.n, g.o, g.oh, g.ow));
  ParamBlock params;
  std::vector<BufferBinding> bindings;
  SY_VK_RETURN_IF_ERROR(
      bind_all(ctx, {&x, &w, &bias, &y}, {"x", "w", "bias", "y"}, &bindings, &params));
  const int64_t count = element_count(y);
  if (count == 0) return ok_status();
  encode_geometry(g, has_bias, &params);
  params.count = static_cast<uint32_t>(count);
  return run_shader(ctx, std::string("conv2d.") + float_variant(x.dtype), params, bindings,
                    gemm_groups(g.n * g.oh * g.ow), gemm_groups(g.o));
}

Status run_conv2d_backward_data(const OpContext& ctx) {
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, 2, 1));
  const sy_tensor_desc& grad_y = ctx.call.inputs[0];
  const sy_tensor_desc& w = ctx.call.inputs[1];
  const sy_tensor_desc& grad_x = ctx.call.outputs[0];
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, grad_y.dtype, "grad_y"));
  SY_VK_RETURN_IF_ERROR(check_same_dtype(ctx, {&grad_y, &w, &grad_x}, {"grad_y", "w", "grad_x"}));
  SY_VK_RETURN_IF_ERROR(check_rank4(ctx, grad_y, "grad_y", "[N, O, OH, OW]"));
  SY_VK_RETURN_IF_ERROR(check_rank4(ctx, w, "w", "[O, C, KH, KW]"));
  SY_VK_RETURN_IF_ERROR(check_rank4(ctx, grad_x, "grad_x", "[N, C, H, W]"));
  ConvGeometry g;
  SY_VK_RETURN_IF_ERROR(read_conv_params(ctx, &g));
  set_sizes(&g, grad_x.shape, w.shape);
  SY_VK_RETURN_IF_ERROR(check_geometry(ctx, g));
  SY_VK_RETURN_IF_ERROR(expect_shape(ctx, w, "w", g.o, g.c, g.kh, g.kw));
  SY_VK_RETURN_IF_ERROR(expect_shape(ctx, grad_y, "grad_y", g.n, g.o, g.oh, g.ow));
  ParamBlock params;
  std::vector<BufferBinding> bindings;
  SY_VK_RETURN_IF_ERROR(
      bind_all(ctx, {&grad_y, &w, &grad_x}, {"grad_y", "w", "grad_x"}, &bindings, &params));
  const int64_t count = element_count(grad_x);
  if (count == 0) return ok_status();
  encode_geometry(g, false, &params);
  params.count = static_cast<uint32_t>(count);
  return run_shader(ctx, std::string("conv2d_backward_data.") + float_variant(w.dtype), params,
                    bindings, gemm_groups(g.n * g.h * g.w), gemm_groups(g.c));
}

Status run_conv2d_backward_weight(const OpContext& ctx) {
  const bool has_bias = ctx.call.params.conv2d.has_bias != 0;
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, 2, has_bias ? 2 : 1));
  const sy_tensor_desc& grad_y = ctx.call.inputs[0];
  const sy_tensor_desc& x = ctx.call.inputs[1];
  const sy_tensor_desc& grad_w = ctx.call.outputs[0];
  const sy_tensor_desc& grad_bias = has_bias ? ctx.call.outputs[1] : grad_w;
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, grad_y.dtype, "grad_y"));
  SY_VK_RETURN_IF_ERROR(check_same_dtype(ctx, {&grad_y, &x, &grad_w, &grad_bias},
                                         {"grad_y", "x", "grad_w", "grad_bias"}));
  SY_VK_RETURN_IF_ERROR(check_rank4(ctx, grad_y, "grad_y", "[N, O, OH, OW]"));
  SY_VK_RETURN_IF_ERROR(check_rank4(ctx, x, "x", "[N, C, H, W]"));
  SY_VK_RETURN_IF_ERROR(check_rank4(ctx, grad_w, "grad_w", "[O, C, KH, KW]"));
  ConvGeometry g;
  SY_VK_RETURN_IF_ERROR(read_conv_params(ctx, &g));
  set_sizes(&g, x.shape, grad_w.shape);
  SY_VK_RETURN_IF_ERROR(check_geometry(ctx, g));
  SY_VK_RETURN_IF_ERROR(expect_shape(ctx, grad_w, "grad_w", g.o, g.c, g.kh, g.kw));
  SY_VK_RETURN_IF_ERROR(expect_shape(ctx, grad_y, "grad_y", g.n, g.o, g.oh, g.ow));
  if (has_bias && (grad_bias.rank != 1 || grad_bias.shape[0] != g.o)) {
    return invalid_argument("CONV2D_BACKWARD_WEIGHT: grad_bias " + shape_text(grad_bias) +
                            " should be [" + std::to_string(g.o) + "]");
  }
  ParamBlock params;
  std::vector<BufferBinding> bindings;
  SY_VK_RETURN_IF_ERROR(bind_all(ctx, {&grad_y, &x, &grad_w, &grad_bias},
                                 {"grad_y", "x", "grad_w", "grad_bias"}, &bindings, &params));
  encode_geometry(g, has_bias, &params);
  const std::string module = std::string("conv2d_backward_weight.") + float_variant(x.dtype);
  const int64_t weights = element_count(grad_w);
  if (weights > 0) {
    params.count = static_cast<uint32_t>(weights);
    params.mode = 0;
    SY_VK_RETURN_IF_ERROR(run_shader(ctx, module, params, bindings, gemm_groups(g.c * g.kh * g.kw),
                                     gemm_groups(g.o)));
  }
  if (has_bias && g.o > 0) {
    params.count = static_cast<uint32_t>(g.o);
    params.mode = 1;
    SY_VK_RETURN_IF_ERROR(run_shader(ctx, module, params, bindings, 1, gemm_groups(g.o)));
  }
  return ok_status();
}

}  // namespace sy_vk
