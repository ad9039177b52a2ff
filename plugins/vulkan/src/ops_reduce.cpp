// REDUCE_SUM / REDUCE_MEAN / REDUCE_MAX over an axis mask, and ARGMAX over one axis.
#include <algorithm>
#include <vector>

#include "ops.h"
#include "tensor_layout.h"

namespace sy_vk {
namespace {

// The views a reduction works with: x over the kept axes, x over the reduced axes, and out over
// the kept axes. Also checks the output's shape.
struct ReduceViews {
  sy_tensor_desc x_kept{}, x_reduced{}, out_kept{};
  int64_t reduced_count = 1;
};

Status reduce_views(const OpContext& ctx, const sy_tensor_desc& x, const sy_tensor_desc& out,
                    uint32_t mask, bool keep_dims, ReduceViews* views) {
  const std::string op = op_name(ctx.call.op);
  if (x.rank > SY_MAX_RANK || (x.rank < 32 && (mask >> x.rank) != 0)) {
    return invalid_argument(op + ": axes_mask " + std::to_string(mask) +
                            " names an axis beyond the rank of x " + shape_text(x));
  }
  sy_tensor_desc expected = out;
  expected.rank = 0;
  views->x_kept = x;
  views->x_reduced = x;
  views->x_kept.rank = 0;
  views->x_reduced.rank = 0;
  for (uint32_t d = 0; d < x.rank; ++d) {
    const bool reduced = (mask >> d) & 1u;
    sy_tensor_desc& part = reduced ? views->x_reduced : views->x_kept;
    part.shape[part.rank] = x.shape[d];
    part.strides[part.rank] = x.strides[d];
    ++part.rank;
    if (reduced) views->reduced_count *= x.shape[d];
    if (!reduced || keep_dims) expected.shape[expected.rank++] = reduced ? 1 : x.shape[d];
  }
  SY_VK_RETURN_IF_ERROR(check_same_shape(ctx, out, "out", expected, "the reduced shape"));
  views->out_kept = out;
  views->out_kept.rank = 0;
  for (uint32_t d = 0, o = 0; d < x.rank; ++d) {
    const bool reduced = (mask >> d) & 1u;
    if (!reduced) {
      views->out_kept.shape[views->out_kept.rank] = out.shape[o];
      views->out_kept.strides[views->out_kept.rank++] = out.strides[o];
    }
    if (!reduced || keep_dims) ++o;
  }
  sy_tensor_desc* kept[] = {&views->x_kept, &views->out_kept};
  coalesce_axes(kept);
  sy_tensor_desc* reduced[] = {&views->x_reduced};
  coalesce_axes(reduced);
  return ok_status();
}

}  // namespace

Status run_reduce(const OpContext& ctx) {
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, 1, 1));
  const sy_tensor_desc& x = ctx.call.inputs[0];
  const sy_tensor_desc& out = ctx.call.outputs[0];
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, x.dtype, "x"));
  SY_VK_RETURN_IF_ERROR(check_same_dtype(ctx, {&x, &out}, {"x", "out"}));
  ParamBlock params;
  std::vector<BufferBinding> bindings(2);
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, x, "x", &bindings[0], &params.t[0]));
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, out, "out", &bindings[1], &params.t[2]));
  ReduceViews views;
  SY_VK_RETURN_IF_ERROR(reduce_views(ctx, x, out, ctx.call.params.reduce.axes_mask,
                                     ctx.call.params.reduce.keep_dims != 0, &views));
  const int64_t outputs = element_count(out);
  if (outputs == 0) return ok_status();
  if (views.reduced_count == 0 && ctx.call.op == SY_OP_REDUCE_MAX) {
    return invalid_argument("REDUCE_MAX: x " + shape_text(x) +
                            " has an empty extent on the reduced axes");
  }
  BufferBinding unused;
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, views.x_kept, "x", &bindings[0], &params.t[0]));
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, views.x_reduced, "x", &unused, &params.t[1]));
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, views.out_kept, "out", &bindings[1], &params.t[2]));
  params.count = static_cast<uint32_t>(outputs);
  params.mode = ctx.call.op;
  params.u[0] = static_cast<uint32_t>(views.reduced_count);
  const uint32_t groups = choose_row_strategy(outputs, views.reduced_count, &params);
  return run_shader(ctx, std::string("reduce.") + float_variant(x.dtype), params, bindings, groups);
}

Status run_argmax(const OpContext& ctx) {
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, 1, 1));
  const sy_tensor_desc& x = ctx.call.inputs[0];
  const sy_tensor_desc& out = ctx.call.outputs[0];
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, x.dtype, "x"));
  if (out.dtype != SY_DTYPE_I32 && out.dtype != SY_DTYPE_I64) {
    return invalid_argument(std::string("ARGMAX: out must be i32 or i64, got ") +
                            dtype_name(out.dtype));
  }
  const uint32_t mask = ctx.call.params.reduce.axes_mask;
  if (__builtin_popcount(mask) != 1) {
    return invalid_argument("ARGMAX: axes_mask must have exactly one bit, got " +
                            std::to_string(mask));
  }
  ParamBlock params;
  std::vector<BufferBinding> bindings(2);
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, x, "x", &bindings[0], &params.t[0]));
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, out, "out", &bindings[1], &params.t[2]));
  ReduceViews views;
  SY_VK_RETURN_IF_ERROR(
      reduce_views(ctx, x, out, mask, ctx.call.params.reduce.keep_dims != 0, &views));
  const int64_t outputs = element_count(out);
  if (outputs == 0) return ok_status();
  const int axis = __builtin_ctz(mask);
  if (x.shape[axis] == 0) {
    return invalid_argument("ARGMAX: x " + shape_text(x) + " has size 0 on axis " +
                            std::to_string(axis));
  }
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, views.x_kept, "x", &bindings[0], &params.t[0]));
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, views.out_kept, "out", &bindings[1], &params.t[2]));
  params.count = static_cast<uint32_t>(outputs);
  params.u[0] = static_cast<uint32_t>(x.shape[axis]);
  params.u[1] = static_cast<uint32_t>(x.strides[axis]);
  params.u[2] = out.dtype == SY_DTYPE_I64 ? 1u : 0u;
  const uint32_t groups = choose_row_strategy(outputs, x.shape[axis], &params);
  return run_shader(ctx, std::string("argmax.") + float_variant(x.dtype), params, bindings, groups);
}

}  // namespace sy_vk
