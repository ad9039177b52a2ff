// SGD_UPDATE (49) and ADAM_UPDATE (50): in place, one fused elementwise kernel.
#include <cmath>

#include "ops.h"

namespace sy_cuda {
namespace {

Status check_optimizer(const OpContext& ctx, uint32_t count) {
  const sy_tensor_desc& param = ctx.in(0);
  for (uint32_t i = 1; i < count; ++i) {
    SY_CUDA_RETURN_IF_ERROR(expect_float_same(ctx, {&param, &ctx.in(i)}));
    SY_CUDA_RETURN_IF_ERROR(
        expect_same_shape(ctx, param, "param", ctx.in(i), i == 1 ? "grad" : "state"));
  }
  SY_CUDA_RETURN_IF_ERROR(expect_float_same(ctx, {&param}));
  for (uint32_t i = 0; i < count; ++i) {
    if (i == 1) continue;  // grad may be broadcast
    for (uint32_t d = 0; d < ctx.in(i).rank; ++d) {
      if (ctx.in(i).shape[d] > 1 && ctx.in(i).strides[d] == 0) {
        return invalid_argument(std::string(ctx.name) + ": updated tensor " + std::to_string(i) +
                                " " + describe(ctx.in(i)) + " has stride 0 on an axis of size > 1");
      }
    }
  }
  return ok_status();
}

}  // namespace

Status run_optimizer(const OpContext& ctx) {
  const bool adam = ctx.call.op == SY_OP_ADAM_UPDATE;
  SyOptimArgs a{};
  a.op = static_cast<int32_t>(ctx.call.op);
  uint32_t count = 4;
  if (adam) {
    SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, 4, 0));
    const sy_adam_params& p = ctx.call.params.adam;
    if (p.step < 1) {
      return invalid_argument("ADAM_UPDATE: step " + std::to_string(p.step) + " must be >= 1");
    }
    a.lr = static_cast<float>(p.lr);
    a.beta1 = static_cast<float>(p.beta1);
    a.beta2 = static_cast<float>(p.beta2);
    a.epsilon = static_cast<float>(p.epsilon);
    a.weight_decay = static_cast<float>(p.weight_decay);
    a.decoupled_weight_decay = p.decoupled_weight_decay != 0;
    a.bias_correction1 = static_cast<float>(1.0 - std::pow(p.beta1, static_cast<double>(p.step)));
    a.bias_correction2 = static_cast<float>(1.0 - std::pow(p.beta2, static_cast<double>(p.step)));
  } else {
    const sy_sgd_params& p = ctx.call.params.sgd;
    count = ctx.call.num_inputs == 2 && p.momentum == 0.0 ? 2 : 3;
    SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, count, 0));
    if (p.nesterov && (p.momentum <= 0.0 || p.dampening != 0.0)) {
      return invalid_argument(
          "SGD_UPDATE: nesterov needs momentum > 0 and dampening = 0, got momentum " +
          std::to_string(p.momentum) + ", dampening " + std::to_string(p.dampening));
    }
    a.lr = static_cast<float>(p.lr);
    a.momentum = static_cast<float>(p.momentum);
    a.dampening = static_cast<float>(p.dampening);
    a.weight_decay = static_cast<float>(p.weight_decay);
    a.nesterov = p.nesterov != 0;
    a.has_momentum_buffer = p.momentum != 0.0 && count == 3;
  }
  SY_CUDA_RETURN_IF_ERROR(check_optimizer(ctx, count));
  const sy_tensor_desc& param = ctx.in(0);
  a.iter = make_iter(param.rank, param.shape);
  if (a.iter.numel == 0) return ok_status();
  SyOperand* slots[4] = {&a.param, &a.grad, &a.state0, &a.state1};
  for (uint32_t i = 0; i < 4; ++i) {
    // Unused slots mirror param's strides so that coalescing is not held back by them.
    const sy_tensor_desc& t = ctx.in(i < count ? i : 0);
    *slots[i] = operand(i < count ? ctx.address(t) : 0, t.dtype, t.strides, t.rank);
  }
  coalesce(&a.iter, slots, 4);
  return ctx.launch(Kernel::sy_optimizer_update, ctx.linear(a.iter.numel), a);
}

}  // namespace sy_cuda
