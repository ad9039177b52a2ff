// Fused optimizer updates, in place on their inputs: SGD_UPDATE and ADAM_UPDATE.
#include <cmath>
#include <vector>

#include "ops.h"

namespace sy_vk {
namespace {

// Every tensor shares the first one's shape and dtype; the updated ones must not broadcast.
Status check_update_tensors(const OpContext& ctx, const std::vector<const char*>& roles) {
  const sy_tensor_desc& param = ctx.call.inputs[0];
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, param.dtype, "param"));
  for (size_t i = 1; i < roles.size(); ++i) {
    const sy_tensor_desc& t = ctx.call.inputs[i];
    SY_VK_RETURN_IF_ERROR(check_same_dtype(ctx, {&param, &t}, {"param", roles[i]}));
    SY_VK_RETURN_IF_ERROR(check_same_shape(ctx, param, "param", t, roles[i]));
  }
  for (size_t i = 0; i < roles.size(); ++i) {
    if (i == 1) continue;  // grad may broadcast
    const sy_tensor_desc& t = ctx.call.inputs[i];
    for (uint32_t d = 0; d < t.rank; ++d) {
      if (t.shape[d] > 1 && t.strides[d] == 0) {
        return invalid_argument(std::string(op_name(ctx.call.op)) + ": " + roles[i] +
                                " is updated in place and must not have stride 0 (axis " +
                                std::to_string(d) + " of " + shape_text(t) + ")");
      }
    }
  }
  return ok_status();
}

}  // namespace

Status run_sgd_update(const OpContext& ctx) {
  const sy_sgd_params& p = ctx.call.params.sgd;
  const bool has_buffer = ctx.call.num_inputs == 3;
  if (ctx.call.num_outputs != 0 || (ctx.call.num_inputs != 2 && ctx.call.num_inputs != 3)) {
    return check_counts(ctx, 3, 0);
  }
  if (!has_buffer && p.momentum != 0.0) {
    return invalid_argument("SGD_UPDATE: momentum " + std::to_string(p.momentum) +
                            " needs the momentum_buf input (3 inputs, got 2)");
  }
  if (p.nesterov && (p.momentum <= 0.0 || p.dampening != 0.0)) {
    return invalid_argument(
        "SGD_UPDATE: nesterov needs momentum > 0 and dampening = 0, got "
        "momentum " +
        std::to_string(p.momentum) + " and dampening " + std::to_string(p.dampening));
  }
  std::vector<const char*> roles = {"param", "grad"};
  if (has_buffer) roles.push_back("momentum_buf");
  SY_VK_RETURN_IF_ERROR(check_update_tensors(ctx, roles));
  const sy_tensor_desc& param = ctx.call.inputs[0];
  std::vector<sy_tensor_desc> tensors = {param, ctx.call.inputs[1],
                                         has_buffer ? ctx.call.inputs[2] : param};
  ParamBlock params;
  params.f[0] = static_cast<float>(p.lr);
  params.f[1] = static_cast<float>(p.momentum);
  params.f[2] = static_cast<float>(p.dampening);
  params.f[3] = static_cast<float>(p.weight_decay);
  params.u[0] = p.nesterov ? 1u : 0u;
  params.u[1] = has_buffer ? 1u : 0u;
  return run_elementwise(ctx, "sgd_update", tensors,
                         {"param", "grad", has_buffer ? "momentum_buf" : "param"}, params);
}

Status run_adam_update(const OpContext& ctx) {
  const sy_adam_params& p = ctx.call.params.adam;
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, 4, 0));
  if (p.step < 1) {
    return invalid_argument("ADAM_UPDATE: step must be >= 1, got " + std::to_string(p.step));
  }
  const std::vector<const char*> roles = {"param", "grad", "m", "v"};
  SY_VK_RETURN_IF_ERROR(check_update_tensors(ctx, roles));
  ParamBlock params;
  params.f[0] = static_cast<float>(p.lr);
  params.f[1] = static_cast<float>(p.beta1);
  params.f[2] = static_cast<float>(p.beta2);
  params.f[3] = static_cast<float>(p.epsilon);
  params.f[4] = static_cast<float>(p.weight_decay);
  params.f[5] = static_cast<float>(1.0 - std::pow(p.beta1, static_cast<double>(p.step)));
  params.f[6] = static_cast<float>(1.0 - std::pow(p.beta2, static_cast<double>(p.step)));
  params.u[0] = p.decoupled_weight_decay ? 1u : 0u;
  return run_elementwise(
      ctx, "adam_update",
      {ctx.call.inputs[0], ctx.call.inputs[1], ctx.call.inputs[2], ctx.call.inputs[3]}, roles,
      params);
}

}  // namespace sy_vk
