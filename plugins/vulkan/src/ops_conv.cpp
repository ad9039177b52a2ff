// CONV2D, CONV2D_GROUPED, CONV2D_FUSED and the backward ops (NCHW activations, weights [O, C /
// groups, KH, KW]), implicit GEMMs; CONV2D_FUSED's residual and activation are applied as the
// shader stores each output (conv2d.comp). A grouped call is one dispatch per 65535 groups: the
// dispatch's z index is the group, and the shaders offset the channels by it (conv_common.glsl).
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

// Groups of this call: 1 for the CONV2D ops, conv2d_grouped.groups (checked against C and O) for
// CONV2D_GROUPED's.
Status read_groups(const OpContext& ctx, const ConvGeometry& g, int64_t* groups) {
  const uint32_t op = ctx.call.op;
  *groups = 1;
  if (op == SY_OP_CONV2D_GROUPED || op == SY_OP_CONV2D_GROUPED_BACKWARD_DATA ||
      op == SY_OP_CONV2D_GROUPED_BACKWARD_WEIGHT || op == SY_OP_CONV2D_FUSED) {
    *groups = ctx.call.params.conv2d_grouped.groups;
  }
  if (*groups < 1 || g.c % *groups != 0 || g.o % *groups != 0) {
    return invalid_argument(std::string(op_name(op)) + ": groups " + std::to_string(*groups) +
                            " must be >= 1 and divide the " + std::to_string(g.c) + " input and " +
                            std::to_string(g.o) + " output channels");
  }
  return ok_status();
}

// The geometry one group's GEMM sees: C / groups input and O / groups output channels.
ConvGeometry per_group(ConvGeometry g, int64_t groups) {
  g.c /= groups;
  g.o /= groups;
  return g;
}

// Runs the implicit GEMM `shader` (a rows x columns result per group) over all groups, the group
// in the dispatch's z index (u[13] the first one), in the form choose_gemm_kernel picks;
// `columns_fast` says that neighbouring columns of its B operand are neighbours in memory (the
// output pixels of an image row), which the cooperative-matrix form reads in that order.
Status run_groups(const OpContext& ctx, uint32_t dtype, const std::string& shader,
                  ParamBlock params, const std::vector<BufferBinding>& bindings, int64_t rows,
                  int64_t columns, int64_t groups, bool columns_fast = false, bool plain = false) {
  const GemmKernel kernel = plain ? GemmKernel{} : choose_gemm_kernel(ctx, dtype, rows, columns);
  if (kernel.cooperative && columns_fast) params.mode |= kColumnsFastB;
  constexpr int64_t kMaxZ = 65535;  // Vulkan's guaranteed maxComputeWorkGroupCount[2]
  for (int64_t first = 0; first < groups; first += kMaxZ) {
    params.u[13] = static_cast<uint32_t>(first);
    const auto z = static_cast<uint32_t>(std::min(groups - first, kMaxZ));
    SY_VK_RETURN_IF_ERROR(run_gemm(ctx, shader, kernel, params, bindings, rows, columns, z));
  }
  return ok_status();
}

}  // namespace

// CONV2D_FUSED's epilogue as conv2d.comp's MODE (activation | residual << 4) and clip bounds;
// 0 for the other ops.
Status read_epilogue(const OpContext& ctx, uint32_t* mode, ParamBlock* params) {
  *mode = 0;
  if (ctx.call.op != SY_OP_CONV2D_FUSED) return ok_status();
  const sy_conv2d_fused_params& f = ctx.call.params.conv2d_fused;
  if (f.has_residual > 1 || f.activation > SY_ACTIVATION_SILU ||
      (f.activation == SY_ACTIVATION_CLIP && !(f.low <= f.high))) {
    return invalid_argument(
        "CONV2D_FUSED: params.conv2d_fused needs has_residual 0 or 1, an activation 0-3 and, for "
        "CLIP, low <= high; got has_residual " +
        std::to_string(f.has_residual) + ", activation " + std::to_string(f.activation) + ", low " +
        std::to_string(f.low) + ", high " + std::to_string(f.high));
  }
  *mode = f.activation | (f.has_residual != 0 ? 0x10u : 0u);
  params->f[0] = f.low;
  params->f[1] = f.high;
  return ok_status();
}

Status run_conv2d(const OpContext& ctx) {
  const bool fused = ctx.call.op == SY_OP_CONV2D_FUSED;
  const bool has_bias = ctx.call.params.conv2d.has_bias != 0;
  const bool has_residual = fused && ctx.call.params.conv2d_fused.has_residual != 0;
  ParamBlock params;
  uint32_t mode = 0;
  SY_VK_RETURN_IF_ERROR(read_epilogue(ctx, &mode, &params));
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, 2 + (has_bias ? 1 : 0) + (has_residual ? 1 : 0), 1));
  const sy_tensor_desc& x = ctx.call.inputs[0];
  const sy_tensor_desc& w = ctx.call.inputs[1];
  const sy_tensor_desc& bias = has_bias ? ctx.call.inputs[2] : w;
  const sy_tensor_desc& y = ctx.call.outputs[0];
  const sy_tensor_desc& residual = has_residual ? ctx.call.inputs[has_bias ? 3 : 2] : y;
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, x.dtype, "x"));
  SY_VK_RETURN_IF_ERROR(
      check_same_dtype(ctx, {&x, &w, &bias, &y, &residual}, {"x", "w", "bias", "y", "residual"}));
  SY_VK_RETURN_IF_ERROR(check_rank4(ctx, x, "x", "[N, C, H, W]"));
  SY_VK_RETURN_IF_ERROR(check_rank4(ctx, w, "w", "[O, C, KH, KW]"));
  SY_VK_RETURN_IF_ERROR(check_rank4(ctx, y, "y", "[N, O, OH, OW]"));
  ConvGeometry g;
  SY_VK_RETURN_IF_ERROR(read_conv_params(ctx, &g));
  set_sizes(&g, x.shape, w.shape);
  int64_t groups = 1;
  SY_VK_RETURN_IF_ERROR(read_groups(ctx, g, &groups));
  if (w.shape[1] * groups != g.c) {
    return invalid_argument(std::string(op_name(ctx.call.op)) + ": w " + shape_text(w) + " has " +
                            std::to_string(w.shape[1]) + " input channels per group but x " +
                            shape_text(x) + " has " + std::to_string(g.c) + " in " +
                            std::to_string(groups) + " group(s)");
  }
  if (has_bias && (bias.rank != 1 || bias.shape[0] != g.o)) {
    return invalid_argument(std::string(op_name(ctx.call.op)) + ": bias " + shape_text(bias) +
                            " should be [" + std::to_string(g.o) + "]");
  }
  SY_VK_RETURN_IF_ERROR(check_geometry(ctx, g));
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, y, "y", {g.n, g.o, g.oh, g.ow}));
  if (has_residual) {
    SY_VK_RETURN_IF_ERROR(check_rank4(ctx, residual, "residual", "[N, O, OH, OW]"));
    SY_VK_RETURN_IF_ERROR(check_shape(ctx, residual, "residual", {g.n, g.o, g.oh, g.ow}));
  }
  if (fused && g.c == 0) {
    return invalid_argument("CONV2D_FUSED needs at least one input channel (x " + shape_text(x) +
                            ")");
  }
  std::vector<BufferBinding> bindings;
  SY_VK_RETURN_IF_ERROR(bind_all(ctx, {&x, &w, &bias, &y, &residual},
                                 {"x", "w", "bias", "y", "residual"}, &bindings, &params));
  const int64_t count = element_count(y);
  if (count == 0) return ok_status();
  const ConvGeometry one = per_group(g, groups);
  encode_geometry(one, has_bias, &params);
  params.count = static_cast<uint32_t>(count);
  params.mode = mode;
  return run_groups(ctx, x.dtype, std::string("conv2d.") + float_variant(x.dtype), params, bindings,
                    one.o, g.n * g.oh * g.ow, groups, /*columns_fast=*/true);
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
  int64_t groups = 1;
  SY_VK_RETURN_IF_ERROR(read_groups(ctx, g, &groups));
  SY_VK_RETURN_IF_ERROR(check_geometry(ctx, g));
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, w, "w", {g.o, g.c / groups, g.kh, g.kw}));
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, grad_y, "grad_y", {g.n, g.o, g.oh, g.ow}));
  ParamBlock params;
  std::vector<BufferBinding> bindings;
  SY_VK_RETURN_IF_ERROR(
      bind_all(ctx, {&grad_y, &w, &grad_x}, {"grad_y", "w", "grad_x"}, &bindings, &params));
  const int64_t count = element_count(grad_x);
  if (count == 0) return ok_status();
  const ConvGeometry one = per_group(g, groups);
  encode_geometry(one, false, &params);
  params.count = static_cast<uint32_t>(count);
  return run_groups(ctx, w.dtype, std::string("conv2d_backward_data.") + float_variant(w.dtype),
                    params, bindings, one.c, g.n * g.h * g.w, groups, /*columns_fast=*/true);
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
  int64_t groups = 1;
  SY_VK_RETURN_IF_ERROR(read_groups(ctx, g, &groups));
  SY_VK_RETURN_IF_ERROR(check_geometry(ctx, g));
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, grad_w, "grad_w", {g.o, g.c / groups, g.kh, g.kw}));
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, grad_y, "grad_y", {g.n, g.o, g.oh, g.ow}));
  if (has_bias && (grad_bias.rank != 1 || grad_bias.shape[0] != g.o)) {
    return invalid_argument(std::string(op_name(ctx.call.op)) + ": grad_bias " +
                            shape_text(grad_bias) + " should be [" + std::to_string(g.o) + "]");
  }
  ParamBlock params;
  std::vector<BufferBinding> bindings;
  SY_VK_RETURN_IF_ERROR(bind_all(ctx, {&grad_y, &x, &grad_w, &grad_bias},
                                 {"grad_y", "x", "grad_w", "grad_bias"}, &bindings, &params));
  const ConvGeometry one = per_group(g, groups);
  encode_geometry(one, has_bias, &params);
  const std::string module = std::string("conv2d_backward_weight.") + float_variant(x.dtype);
  const int64_t weights = element_count(grad_w);
  if (weights > 0) {
    params.count = static_cast<uint32_t>(weights);
    params.mode = 0;
    SY_VK_RETURN_IF_ERROR(
        run_groups(ctx, x.dtype, module, params, bindings, one.o, one.c * g.kh * g.kw, groups));
  }
  if (has_bias && g.o > 0) {
    params.count = static_cast<uint32_t>(g.o);
    params.mode = 1;
    // The bias gradient: one column of sums, on the 64-wide tiles.
    SY_VK_RETURN_IF_ERROR(run_groups(ctx, x.dtype, module, params, bindings, one.o, 1, groups,
                                     /*columns_fast=*/false, /*plain=*/true));
  }
  return ok_status();
}

}  // namespace sy_vk
