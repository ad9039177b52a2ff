// LAYER_NORM and LAYER_NORM_BACKWARD over the last `normalized_rank` axes.
#include <algorithm>
#include <vector>

#include "ops.h"
#include "tensor_layout.h"

namespace sy_vk {
namespace {

struct NormShape {
  uint32_t r = 0;               // normalised rank
  int64_t rows = 1;             // product of the leading axes
  int64_t width = 1;            // D, product of the normalised axes
  sy_tensor_desc leading{};     // shape of mean / rstd
  sy_tensor_desc normalized{};  // shape of gamma / beta
};

Status norm_shape(const OpContext& ctx, const sy_tensor_desc& x, NormShape* s) {
  const std::string op = op_name(ctx.call.op);
  const sy_layer_norm_params& p = ctx.call.params.layer_norm;
  if (p.normalized_rank < 1 || p.normalized_rank > x.rank) {
    return invalid_argument(op + ": normalized_rank " + std::to_string(p.normalized_rank) +
                            " must be in [1, " + std::to_string(x.rank) + "] for x " +
                            shape_text(x));
  }
  s->r = p.normalized_rank;
  s->leading = x;
  s->leading.rank = x.rank - s->r;
  s->normalized = x;
  s->normalized.rank = s->r;
  for (uint32_t d = 0; d < x.rank; ++d) {
    if (d < s->leading.rank) {
      s->rows *= x.shape[d];
    } else {
      s->normalized.shape[d - s->leading.rank] = x.shape[d];
      s->width *= x.shape[d];
    }
  }
  if (s->width < 1) {
    return invalid_argument(op + ": x " + shape_text(x) + " has no elements to normalise (D = 0)");
  }
  return ok_status();
}

// mean and rstd: [L...], both of the data dtype or both f32. Returns the module suffix.
Status check_stats(const OpContext& ctx, const sy_tensor_desc& x, const NormShape& s,
                   const sy_tensor_desc& mean, const sy_tensor_desc& rstd, std::string* suffix) {
  SY_VK_RETURN_IF_ERROR(check_same_shape(ctx, mean, "mean", s.leading, "x's leading axes"));
  SY_VK_RETURN_IF_ERROR(check_same_shape(ctx, rstd, "rstd", s.leading, "x's leading axes"));
  SY_VK_RETURN_IF_ERROR(check_same_dtype(ctx, {&mean, &rstd}, {"mean", "rstd"}));
  if (mean.dtype != x.dtype && mean.dtype != SY_DTYPE_F32) {
    return invalid_argument(std::string(op_name(ctx.call.op)) + ": mean and rstd must be " +
                            dtype_name(x.dtype) + " or f32, got " + dtype_name(mean.dtype));
  }
  *suffix = std::string(float_variant(x.dtype)) + (mean.dtype != x.dtype ? ".s32" : "");
  return ok_status();
}

// Binds each tensor after merging its own axes (its row-major order is what the shaders index).
Status bind_each(const OpContext& ctx, std::vector<sy_tensor_desc> tensors,
                 const std::vector<const char*>& roles, std::vector<BufferBinding>* bindings,
                 ParamBlock* params) {
  bindings->resize(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, tensors[i], roles[i], &(*bindings)[i], &params->t[i]));
    sy_tensor_desc* one[] = {&tensors[i]};
    if (element_count(tensors[i]) > 0) coalesce_axes(one);
    SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, tensors[i], roles[i], &(*bindings)[i], &params->t[i]));
  }
  return ok_status();
}

}  // namespace

Status run_layer_norm(const OpContext& ctx) {
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, 3, 3));
  const sy_tensor_desc& x = ctx.call.inputs[0];
  const sy_tensor_desc& gamma = ctx.call.inputs[1];
  const sy_tensor_desc& beta = ctx.call.inputs[2];
  const sy_tensor_desc& y = ctx.call.outputs[0];
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, x.dtype, "x"));
  SY_VK_RETURN_IF_ERROR(
      check_same_dtype(ctx, {&x, &gamma, &beta, &y}, {"x", "gamma", "beta", "y"}));
  if (!(ctx.call.params.layer_norm.epsilon > 0.0)) {
    return invalid_argument("LAYER_NORM: epsilon must be > 0, got " +
                            std::to_string(ctx.call.params.layer_norm.epsilon));
  }
  NormShape s;
  SY_VK_RETURN_IF_ERROR(norm_shape(ctx, x, &s));
  SY_VK_RETURN_IF_ERROR(check_same_shape(ctx, gamma, "gamma", s.normalized, "x's normalised axes"));
  SY_VK_RETURN_IF_ERROR(check_same_shape(ctx, beta, "beta", s.normalized, "x's normalised axes"));
  SY_VK_RETURN_IF_ERROR(check_same_shape(ctx, y, "y", x, "x"));
  std::string suffix;
  SY_VK_RETURN_IF_ERROR(check_stats(ctx, x, s, ctx.call.outputs[1], ctx.call.outputs[2], &suffix));
  ParamBlock params;
  std::vector<BufferBinding> bindings;
  SY_VK_RETURN_IF_ERROR(bind_each(ctx,
                                  {x, gamma, beta, y, ctx.call.outputs[1], ctx.call.outputs[2]},
                                  {"x", "gamma", "beta", "y", "mean", "rstd"}, &bindings, &params));
  if (s.rows == 0) return ok_status();
  params.count = static_cast<uint32_t>(s.rows);
  params.u[0] = static_cast<uint32_t>(s.width);
  params.f[0] = static_cast<float>(ctx.call.params.layer_norm.epsilon);
  const uint32_t groups = choose_row_strategy(s.rows, s.width, &params);
  return run_shader(ctx, "layer_norm." + suffix, params, bindings, groups);
}

Status run_layer_norm_backward(const OpContext& ctx) {
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, 5, 3));
  const sy_tensor_desc& grad_y = ctx.call.inputs[0];
  const sy_tensor_desc& x = ctx.call.inputs[1];
  const sy_tensor_desc& mean = ctx.call.inputs[2];
  const sy_tensor_desc& rstd = ctx.call.inputs[3];
  const sy_tensor_desc& gamma = ctx.call.inputs[4];
  const sy_tensor_desc& grad_x = ctx.call.outputs[0];
  const sy_tensor_desc& grad_gamma = ctx.call.outputs[1];
  const sy_tensor_desc& grad_beta = ctx.call.outputs[2];
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, x.dtype, "x"));
  SY_VK_RETURN_IF_ERROR(
      check_same_dtype(ctx, {&x, &grad_y, &gamma, &grad_x, &grad_gamma, &grad_beta},
                       {"x", "grad_y", "gamma", "grad_x", "grad_gamma", "grad_beta"}));
  NormShape s;
  SY_VK_RETURN_IF_ERROR(norm_shape(ctx, x, &s));
  SY_VK_RETURN_IF_ERROR(check_same_shape(ctx, grad_y, "grad_y", x, "x"));
  SY_VK_RETURN_IF_ERROR(check_same_shape(ctx, grad_x, "grad_x", x, "x"));
  for (const auto& [t, role] : {std::pair{&gamma, "gamma"}, std::pair{&grad_gamma, "grad_gamma"},
                                std::pair{&grad_beta, "grad_beta"}}) {
    SY_VK_RETURN_IF_ERROR(check_same_shape(ctx, *t, role, s.normalized, "x's normalised axes"));
  }
  std::string suffix;
  SY_VK_RETURN_IF_ERROR(check_stats(ctx, x, s, mean, rstd, &suffix));
  ParamBlock params;
  std::vector<BufferBinding> bindings;
  SY_VK_RETURN_IF_ERROR(bind_each(ctx, {grad_y, x, mean, rstd, gamma, grad_x},
                                  {"grad_y", "x", "mean", "rstd", "gamma", "grad_x"}, &bindings,
                                  &params));
  params.u[0] = static_cast<uint32_t>(s.width);
  params.u[1] = static_cast<uint32_t>(s.rows);
  if (s.rows > 0) {
    params.count = static_cast<uint32_t>(s.rows);
    const uint32_t groups = choose_row_strategy(s.rows, s.width, &params);
    SY_VK_RETURN_IF_ERROR(
        run_shader(ctx, "layer_norm_backward_x." + suffix, params, bindings, groups));
  }
  SY_VK_RETURN_IF_ERROR(bind_each(ctx, {grad_y, x, mean, rstd, grad_gamma, grad_beta},
                                  {"grad_y", "x", "mean", "rstd", "grad_gamma", "grad_beta"},
                                  &bindings, &params));
  params.count = static_cast<uint32_t>(s.width);
  // Here a "row" is one normalised position, summed over the rows of x.
  const uint32_t groups = choose_row_strategy(s.width, s.rows, &params);
  return run_shader(ctx, "layer_norm_backward_params." + suffix, params, bindings, groups);
}

}  // namespace sy_vk
