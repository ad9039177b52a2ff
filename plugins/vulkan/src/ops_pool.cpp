// MAX_POOL2D / AVG_POOL2D and their backward ops (NCHW, no dilation, no ceil mode).
#include <vector>

#include "conv_geometry.h"
#include "ops.h"

namespace sy_vk {
namespace {

// Geometry from the params and an input [N, C, H, W]; checks the params' ranges and OH, OW.
Status pool_geometry(const OpContext& ctx, const sy_tensor_desc& input, ConvGeometry* g) {
  const sy_pool2d_params& p = ctx.call.params.pool2d;
  const std::string op = op_name(ctx.call.op);
  if (p.kernel_h < 1 || p.kernel_w < 1 || p.stride_h < 1 || p.stride_w < 1 || p.pad_h < 0 ||
      p.pad_w < 0 || p.pad_h > p.kernel_h / 2 || p.pad_w > p.kernel_w / 2) {
    return invalid_argument(op + ": kernel " + std::to_string(p.kernel_h) + "x" +
                            std::to_string(p.kernel_w) + ", stride " + std::to_string(p.stride_h) +
                            "x" + std::to_string(p.stride_w) + ", pad " + std::to_string(p.pad_h) +
                            "x" + std::to_string(p.pad_w) +
                            ": kernel and stride must be >= 1 and 0 <= pad <= kernel / 2");
  }
  g->n = input.shape[0];
  g->c = input.shape[1];
  g->h = input.shape[2];
  g->w = input.shape[3];
  g->kh = p.kernel_h;
  g->kw = p.kernel_w;
  g->stride_h = p.stride_h;
  g->stride_w = p.stride_w;
  g->pad_h = p.pad_h;
  g->pad_w = p.pad_w;
  g->oh = conv_output_size(g->h, g->kh, g->stride_h, g->pad_h, 1);
  g->ow = conv_output_size(g->w, g->kw, g->stride_w, g->pad_w, 1);
  return check_geometry(ctx, *g);
}

Status expect_pooled(const OpContext& ctx, const sy_tensor_desc& t, const char* role,
                     const ConvGeometry& g) {
  if (t.shape[0] == g.n && t.shape[1] == g.c && t.shape[2] == g.oh && t.shape[3] == g.ow) {
    return ok_status();
  }
  return invalid_argument(std::string(op_name(ctx.call.op)) + ": " + role + " " + shape_text(t) +
                          " should be " + dims_text(g.n, g.c, g.oh, g.ow));
}

}  // namespace

Status run_pool2d(const OpContext& ctx) {
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, 1, 1));
  const sy_tensor_desc& x = ctx.call.inputs[0];
  const sy_tensor_desc& y = ctx.call.outputs[0];
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, x.dtype, "x"));
  SY_VK_RETURN_IF_ERROR(check_same_dtype(ctx, {&x, &y}, {"x", "y"}));
  SY_VK_RETURN_IF_ERROR(check_rank4(ctx, x, "x", "[N, C, H, W]"));
  SY_VK_RETURN_IF_ERROR(check_rank4(ctx, y, "y", "[N, C, OH, OW]"));
  ConvGeometry g;
  SY_VK_RETURN_IF_ERROR(pool_geometry(ctx, x, &g));
  SY_VK_RETURN_IF_ERROR(expect_pooled(ctx, y, "y", g));
  ParamBlock params;
  std::vector<BufferBinding> bindings(2);
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, x, "x", &bindings[0], &params.t[0]));
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, y, "y", &bindings[1], &params.t[1]));
  const int64_t count = element_count(y);
  if (count == 0) return ok_status();
  encode_geometry(g, ctx.call.params.pool2d.count_include_pad != 0, &params);
  params.count = static_cast<uint32_t>(count);
  params.mode = ctx.call.op;
  return run_shader(ctx, std::string("pool2d.") + float_variant(x.dtype), params, bindings,
                    groups_for(static_cast<uint64_t>(count)));
}

Status run_pool2d_backward(const OpContext& ctx) {
  const bool is_max = ctx.call.op == SY_OP_MAX_POOL2D_BACKWARD;
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, is_max ? 2 : 1, 1));
  const sy_tensor_desc& grad_y = ctx.call.inputs[0];
  const sy_tensor_desc& x = is_max ? ctx.call.inputs[1] : grad_y;
  const sy_tensor_desc& grad_x = ctx.call.outputs[0];
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, grad_y.dtype, "grad_y"));
  SY_VK_RETURN_IF_ERROR(check_same_dtype(ctx, {&grad_y, &x, &grad_x}, {"grad_y", "x", "grad_x"}));
  SY_VK_RETURN_IF_ERROR(check_rank4(ctx, grad_y, "grad_y", "[N, C, OH, OW]"));
  SY_VK_RETURN_IF_ERROR(check_rank4(ctx, grad_x, "grad_x", "[N, C, H, W]"));
  if (is_max) {
    SY_VK_RETURN_IF_ERROR(check_rank4(ctx, x, "x", "[N, C, H, W]"));
    SY_VK_RETURN_IF_ERROR(check_same_shape(ctx, x, "x", grad_x, "grad_x"));
  }
  ConvGeometry g;
  SY_VK_RETURN_IF_ERROR(pool_geometry(ctx, grad_x, &g));
  SY_VK_RETURN_IF_ERROR(expect_pooled(ctx, grad_y, "grad_y", g));
  ParamBlock params;
  std::vector<BufferBinding> bindings(3);
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, grad_y, "grad_y", &bindings[0], &params.t[0]));
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, x, is_max ? "x" : "grad_y", &bindings[1], &params.t[1]));
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, grad_x, "grad_x", &bindings[2], &params.t[2]));
  const int64_t count = element_count(grad_x);
  if (count == 0) return ok_status();
  encode_geometry(g, ctx.call.params.pool2d.count_include_pad != 0, &params);
  params.count = static_cast<uint32_t>(count);
  params.mode = ctx.call.op;
  return run_shader(ctx, std::string("pool2d_backward.") + float_variant(grad_y.dtype), params,
                    bindings, groups_for(static_cast<uint64_t>(count)));
}

}  // namespace sy_vk
