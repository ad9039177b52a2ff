// LAYER_NORM (41) and LAYER_NORM_BACKWARD (42) over the trailing `normalized_rank` axes.
#include <algorithm>

#include "ops.h"

namespace sy_cuda {
namespace {

struct Split {
  int lead[SY_MAX_RANK], norm[SY_MAX_RANK], all[SY_MAX_RANK];
  int lead_count = 0, norm_count = 0;
  int64_t rows = 1, row_length = 1;
};

Status split_axes(const OpContext& ctx, const sy_tensor_desc& x, Split* s) {
  const uint32_t r = ctx.call.params.layer_norm.normalized_rank;
  if (r < 1 || r > x.rank) {
    return invalid_argument(std::string(ctx.name) + ": normalized_rank " + std::to_string(r) +
                            " must be in [1, " + std::to_string(x.rank) + "] for x " +
                            shape_text(x));
  }
  if (!(ctx.call.params.layer_norm.epsilon > 0.0)) {
    return invalid_argument(std::string(ctx.name) + ": epsilon " +
                            std::to_string(ctx.call.params.layer_norm.epsilon) + " must be > 0");
  }
  for (int d = 0; d < static_cast<int>(x.rank); ++d) {
    s->all[d] = d;
    if (d < static_cast<int>(x.rank - r)) {
      s->lead[s->lead_count++] = d;
      s->rows *= x.shape[d];
    } else {
      s->norm[s->norm_count++] = d;
      s->row_length *= x.shape[d];
    }
  }
  if (s->row_length < 1) {
    return invalid_argument(std::string(ctx.name) + ": x " + shape_text(x) +
                            " has an empty normalised extent");
  }
  return ok_status();
}

// `t` must have exactly the extents of x's axes `axes` (gamma: the normalised ones; mean: the
// lead).
Status expect_axes(const OpContext& ctx, const sy_tensor_desc& t, const char* role,
                   const sy_tensor_desc& x, const int* axes, int count) {
  bool ok = t.rank == static_cast<uint32_t>(count);
  for (int i = 0; ok && i < count; ++i) ok = t.shape[i] == x.shape[axes[i]];
  if (ok) return ok_status();
  int64_t expected[SY_MAX_RANK];
  for (int i = 0; i < count; ++i) expected[i] = x.shape[axes[i]];
  return invalid_argument(std::string(ctx.name) + ": " + role + " " + shape_text(t) +
                          " should be " + shape_text(static_cast<uint32_t>(count), expected) +
                          " for x " + shape_text(x));
}

Status expect_stats_dtype(const OpContext& ctx, const sy_tensor_desc& t, const sy_tensor_desc& x) {
  if (t.dtype == x.dtype || t.dtype == SY_DTYPE_F32) return ok_status();
  return invalid_argument(std::string(ctx.name) + ": mean/rstd must be f32 or x's dtype " +
                          dtype_name(x.dtype) + ", got " + describe(t));
}

SyTensorArg whole(const OpContext& ctx, const sy_tensor_desc& t) {
  int axes[SY_MAX_RANK];
  for (int d = 0; d < static_cast<int>(t.rank); ++d) axes[d] = d;
  return axes_view(ctx.address(t), t, axes, static_cast<int>(t.rank));
}

Status check_forward(const OpContext& ctx, const Split& s) {
  const sy_tensor_desc& x = ctx.in(0);
  SY_CUDA_RETURN_IF_ERROR(expect_float_same(ctx, {&x, &ctx.in(1), &ctx.in(2), &ctx.out(0)}));
  SY_CUDA_RETURN_IF_ERROR(expect_same_shape(ctx, x, "x", ctx.out(0), "y"));
  SY_CUDA_RETURN_IF_ERROR(expect_axes(ctx, ctx.in(1), "gamma", x, s.norm, s.norm_count));
  SY_CUDA_RETURN_IF_ERROR(expect_axes(ctx, ctx.in(2), "beta", x, s.norm, s.norm_count));
  for (uint32_t i = 1; i < 3; ++i) {
    SY_CUDA_RETURN_IF_ERROR(expect_stats_dtype(ctx, ctx.out(i), x));
    SY_CUDA_RETURN_IF_ERROR(
        expect_axes(ctx, ctx.out(i), i == 1 ? "mean" : "rstd", x, s.lead, s.lead_count));
  }
  return ok_status();
}

Status check_backward(const OpContext& ctx, const Split& s) {
  const sy_tensor_desc& x = ctx.in(1);
  SY_CUDA_RETURN_IF_ERROR(
      expect_float_same(ctx, {&x, &ctx.in(0), &ctx.in(4), &ctx.out(0), &ctx.out(1), &ctx.out(2)}));
  SY_CUDA_RETURN_IF_ERROR(expect_same_shape(ctx, x, "x", ctx.in(0), "grad_y"));
  SY_CUDA_RETURN_IF_ERROR(expect_same_shape(ctx, x, "x", ctx.out(0), "grad_x"));
  SY_CUDA_RETURN_IF_ERROR(expect_axes(ctx, ctx.in(4), "gamma", x, s.norm, s.norm_count));
  SY_CUDA_RETURN_IF_ERROR(expect_axes(ctx, ctx.out(1), "grad_gamma", x, s.norm, s.norm_count));
  SY_CUDA_RETURN_IF_ERROR(expect_axes(ctx, ctx.out(2), "grad_beta", x, s.norm, s.norm_count));
  for (uint32_t i = 2; i < 4; ++i) {
    SY_CUDA_RETURN_IF_ERROR(expect_stats_dtype(ctx, ctx.in(i), x));
    SY_CUDA_RETURN_IF_ERROR(
        expect_axes(ctx, ctx.in(i), i == 2 ? "mean" : "rstd", x, s.lead, s.lead_count));
  }
  return ok_status();
}

LaunchShape row_groups(const OpContext& ctx, int64_t rows, int group_size) {
  const uint32_t threads = static_cast<uint32_t>(std::max(group_size, 256));
  const int64_t per_block = threads / group_size;
  LaunchShape shape = ctx.linear((rows + per_block - 1) / per_block, 1);
  shape.block = threads;
  return shape;
}

}  // namespace

Status run_layer_norm(const OpContext& ctx) {
  const bool backward = ctx.call.op == SY_OP_LAYER_NORM_BACKWARD;
  SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, backward ? 5 : 3, 3));
  const sy_tensor_desc& x = backward ? ctx.in(1) : ctx.in(0);
  Split s;
  SY_CUDA_RETURN_IF_ERROR(split_axes(ctx, x, &s));
  SY_CUDA_RETURN_IF_ERROR(backward ? check_backward(ctx, s) : check_forward(ctx, s));
  SyLayerNormArgs a{};
  a.x_lead = axes_view(ctx.address(x), x, s.lead, s.lead_count);
  a.x_norm = axes_view(0, x, s.norm, s.norm_count);
  const sy_tensor_desc& out = ctx.out(0);
  a.out_lead = axes_view(ctx.address(out), out, s.lead, s.lead_count);
  a.out_norm = axes_view(0, out, s.norm, s.norm_count);
  a.gamma = whole(ctx, backward ? ctx.in(4) : ctx.in(1));
  a.mean = whole(ctx, backward ? ctx.in(2) : ctx.out(1));
  a.rstd = whole(ctx, backward ? ctx.in(3) : ctx.out(2));
  a.rows = s.rows;
  a.row_length = s.row_length;
  a.epsilon = static_cast<float>(ctx.call.params.layer_norm.epsilon);
  a.group_size = group_size_for(s.row_length);
  if (!backward) {
    a.beta = whole(ctx, ctx.in(2));
    if (s.rows == 0) return ok_status();
    return ctx.launch(Kernel::sy_layer_norm, row_groups(ctx, s.rows, a.group_size), a);
  }
  const sy_tensor_desc& g = ctx.in(0);
  a.g_lead = axes_view(ctx.address(g), g, s.lead, s.lead_count);
  a.g_norm = axes_view(0, g, s.norm, s.norm_count);
  if (s.rows > 0) {
    SY_CUDA_RETURN_IF_ERROR(
        ctx.launch(Kernel::sy_layer_norm, row_groups(ctx, s.rows, a.group_size), a));
  }
  SyLayerNormParamArgs p{};
  p.x_lead = a.x_lead;
  p.x_norm = a.x_norm;
  p.g_lead = a.g_lead;
  p.g_norm = a.g_norm;
  p.mean = a.mean;
  p.rstd = a.rstd;
  p.grad_gamma = whole(ctx, ctx.out(1));
  p.grad_beta = whole(ctx, ctx.out(2));
  p.rows = s.rows;
  p.row_length = s.row_length;
  // 32 positions per block of 1024 threads (kParamThreads in layer_norm.cu).
  LaunchShape shape;
  shape.block = 1024;
  shape.grid_x = static_cast<uint32_t>(std::clamp<int64_t>(
      (s.row_length + 31) / 32, 1, static_cast<int64_t>(ctx.device.max_blocks())));
  return ctx.launch(Kernel::sy_layer_norm_params, shape, p);
}

}  // namespace sy_cuda
