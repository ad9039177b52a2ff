// SGD_UPDATE and ADAM_UPDATE: fused optimizer steps that update their inputs in place
// (torch.optim.SGD / Adam / AdamW semantics, see docs/ops.md section 15).
#include <cmath>
#include <string>
#include <vector>

#include "ops.h"

namespace sy_reference {
namespace {

// All tensors share param's shape and float dtype; the ones the op writes must not self-overlap.
void check_state_tensors(const OpContext& ctx, const char* const* roles) {
  const TensorRef param = ctx.input(0);
  require_float(ctx, roles[0], param);
  for (uint32_t k = 0; k < ctx.call.num_inputs; ++k) {
    const TensorRef tensor = ctx.input(k);
    require_same_dtype(ctx, roles[k], tensor, roles[0], param);
    require_shape(ctx, roles[k], tensor, param.shape);
    if (k != 1) require_no_self_overlap(ctx, ctx.call.inputs[k], roles[k]);
  }
}

}  // namespace

void run_sgd_update(const OpContext& ctx) {
  const sy_sgd_params& p = ctx.params().sgd;
  const bool has_buffer = ctx.call.num_inputs == 3;
  if (!(ctx.call.num_inputs == 3 || (ctx.call.num_inputs == 2 && p.momentum == 0.0)) ||
      ctx.call.num_outputs != 0) {
    fail(ctx,
         "expects inputs (param, grad, momentum_buf) (momentum_buf may be left out only when "
         "momentum is 0) and no outputs, got " +
             std::to_string(ctx.call.num_inputs) + " inputs and " +
             std::to_string(ctx.call.num_outputs) + " outputs");
  }
  if (p.nesterov && (p.momentum <= 0.0 || p.dampening != 0.0)) {
    fail(ctx, "nesterov needs momentum > 0 and dampening = 0, got momentum " +
                  std::to_string(p.momentum) + ", dampening " + std::to_string(p.dampening));
  }
  const char* const roles[] = {"param", "grad", "momentum_buf"};
  check_state_tensors(ctx, roles);
  std::vector<float> param = read_f32(ctx.input(0));
  const std::vector<float> grad = read_f32(ctx.input(1));
  std::vector<float> buffer = has_buffer ? read_f32(ctx.input(2)) : std::vector<float>();
  const auto lr = static_cast<float>(p.lr);
  const auto momentum = static_cast<float>(p.momentum);
  const auto dampening = static_cast<float>(p.dampening);
  const auto weight_decay = static_cast<float>(p.weight_decay);
  for (size_t i = 0; i < param.size(); ++i) {
    float g = grad[i] + weight_decay * param[i];
    if (p.momentum != 0.0) {
      buffer[i] = momentum * buffer[i] + (1.0f - dampening) * g;
      g = p.nesterov ? g + momentum * buffer[i] : buffer[i];
    }
    param[i] -= lr * g;
  }
  write_f32(ctx.input(0), param);
  if (has_buffer && p.momentum != 0.0) write_f32(ctx.input(2), buffer);
}

void run_adam_update(const OpContext& ctx) {
  require_io_counts(ctx, 4, 0);
  const sy_adam_params& p = ctx.params().adam;
  if (p.step < 1) fail(ctx, "adam.step must be >= 1 (1-based), got " + std::to_string(p.step));
  const char* const roles[] = {"param", "grad", "m", "v"};
  check_state_tensors(ctx, roles);
  std::vector<float> param = read_f32(ctx.input(0));
  const std::vector<float> grad = read_f32(ctx.input(1));
  std::vector<float> m = read_f32(ctx.input(2));
  std::vector<float> v = read_f32(ctx.input(3));
  const auto step = static_cast<double>(p.step);
  const auto bias_correction1 = static_cast<float>(1.0 - std::pow(p.beta1, step));
  const auto bias_correction2 = static_cast<float>(1.0 - std::pow(p.beta2, step));
  const auto lr = static_cast<float>(p.lr);
  const auto beta1 = static_cast<float>(p.beta1);
  const auto beta2 = static_cast<float>(p.beta2);
  const auto epsilon = static_cast<float>(p.epsilon);
  const auto weight_decay = static_cast<float>(p.weight_decay);
  for (size_t i = 0; i < param.size(); ++i) {
    float g = grad[i];
    if (p.decoupled_weight_decay) {
      param[i] *= 1.0f - lr * weight_decay;
    } else {
      g += weight_decay * param[i];
    }
    m[i] = beta1 * m[i] + (1.0f - beta1) * g;
    v[i] = beta2 * v[i] + (1.0f - beta2) * g * g;
    const float m_hat = m[i] / bias_correction1;
    const float v_hat = v[i] / bias_correction2;
    param[i] -= lr * m_hat / (std::sqrt(v_hat) + epsilon);
  }
  write_f32(ctx.input(0), param);
  write_f32(ctx.input(2), m);
  write_f32(ctx.input(3), v);
}

}  // namespace sy_reference
