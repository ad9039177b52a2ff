// CROSS_ENTROPY and CROSS_ENTROPY_BACKWARD over logits [N, C] with integer labels [N].
#include <algorithm>
#include <vector>

#include "device.h"
#include "ops.h"

namespace sy_vk {
namespace {

// Checks logits [N, C], labels [N] (i32/i64) and the float tensor `other` of the given rank.
Status check_cross_entropy(const OpContext& ctx, const sy_tensor_desc& logits,
                           const sy_tensor_desc& labels) {
  const std::string op = op_name(ctx.call.op);
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, logits.dtype, "logits"));
  if (logits.rank != 2) {
    return invalid_argument(op + ": logits " + shape_text(logits) + " must be [N, C]");
  }
  if (labels.dtype != SY_DTYPE_I32 && labels.dtype != SY_DTYPE_I64) {
    return invalid_argument(op + ": labels must be i32 or i64, got " + dtype_name(labels.dtype));
  }
  if (labels.rank != 1 || labels.shape[0] != logits.shape[0]) {
    return invalid_argument(op + ": labels " + shape_text(labels) + " must be [N] for logits " +
                            shape_text(logits));
  }
  const sy_cross_entropy_params& p = ctx.call.params.cross_entropy;
  if (p.reduction > 1) {
    return invalid_argument(op + ": reduction " + std::to_string(p.reduction) +
                            " is neither 0 (mean) nor 1 (sum)");
  }
  if (p.label_smoothing != 0.0) {
    return invalid_argument(op + ": label_smoothing must be 0 in ABI 1, got " +
                            std::to_string(p.label_smoothing));
  }
  return ok_status();
}

Status check_scalar(const OpContext& ctx, const sy_tensor_desc& logits, const sy_tensor_desc& t,
                    const char* role) {
  SY_VK_RETURN_IF_ERROR(check_same_dtype(ctx, {&logits, &t}, {"logits", role}));
  if (t.rank != 0) {
    return invalid_argument(std::string(op_name(ctx.call.op)) + ": " + role + " " + shape_text(t) +
                            " must have rank 0");
  }
  return ok_status();
}

}  // namespace

Status run_cross_entropy(const OpContext& ctx) {
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, 2, 1));
  const sy_tensor_desc& logits = ctx.call.inputs[0];
  const sy_tensor_desc& labels = ctx.call.inputs[1];
  const sy_tensor_desc& loss = ctx.call.outputs[0];
  SY_VK_RETURN_IF_ERROR(check_cross_entropy(ctx, logits, labels));
  SY_VK_RETURN_IF_ERROR(check_scalar(ctx, logits, loss, "loss"));
  const int64_t n = logits.shape[0];
  ScratchBuffer scratch(ctx.device);
  SY_VK_RETURN_IF_ERROR(scratch.allocate(static_cast<uint64_t>(std::max<int64_t>(n, 1)) * 4));
  const int64_t scratch_shape[] = {n};
  const sy_tensor_desc losses = scratch.f32_tensor(scratch_shape);
  ParamBlock params;
  std::vector<BufferBinding> bindings(4);
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, logits, "logits", &bindings[0], &params.t[0]));
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, labels, "labels", &bindings[1], &params.t[1]));
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, losses, "scratch", &bindings[2], &params.t[2]));
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, loss, "loss", &bindings[3], &params.t[3]));
  params.u[0] = static_cast<uint32_t>(n);
  params.u[1] = static_cast<uint32_t>(logits.shape[1]);
  params.u[2] = labels.dtype == SY_DTYPE_I64 ? 1u : 0u;
  params.u[3] = ctx.call.params.cross_entropy.reduction == 0 ? 1u : 0u;
  const std::string module = std::string("cross_entropy.") + float_variant(logits.dtype);
  if (n > 0) {
    params.mode = 0;
    const uint32_t groups = choose_row_strategy(n, logits.shape[1], &params);
    SY_VK_RETURN_IF_ERROR(run_shader(ctx, module, params, bindings, groups));
  }
  params.mode = 1;
  return run_shader(ctx, module, params, bindings, 1);
}

Status run_cross_entropy_backward(const OpContext& ctx) {
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, 3, 1));
  const sy_tensor_desc& logits = ctx.call.inputs[0];
  const sy_tensor_desc& labels = ctx.call.inputs[1];
  const sy_tensor_desc& grad_loss = ctx.call.inputs[2];
  const sy_tensor_desc& grad = ctx.call.outputs[0];
  SY_VK_RETURN_IF_ERROR(check_cross_entropy(ctx, logits, labels));
  SY_VK_RETURN_IF_ERROR(check_scalar(ctx, logits, grad_loss, "grad_loss"));
  SY_VK_RETURN_IF_ERROR(check_same_dtype(ctx, {&logits, &grad}, {"logits", "grad_logits"}));
  SY_VK_RETURN_IF_ERROR(check_same_shape(ctx, logits, "logits", grad, "grad_logits"));
  ParamBlock params;
  std::vector<BufferBinding> bindings(4);
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, logits, "logits", &bindings[0], &params.t[0]));
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, labels, "labels", &bindings[1], &params.t[1]));
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, grad_loss, "grad_loss", &bindings[2], &params.t[2]));
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, grad, "grad_logits", &bindings[3], &params.t[3]));
  const int64_t n = logits.shape[0];
  if (element_count(grad) == 0) return ok_status();
  params.u[0] = static_cast<uint32_t>(n);
  params.u[1] = static_cast<uint32_t>(logits.shape[1]);
  params.u[2] = labels.dtype == SY_DTYPE_I64 ? 1u : 0u;
  params.f[0] = ctx.call.params.cross_entropy.reduction == 0 ? 1.0f / static_cast<float>(n) : 1.0f;
  const uint32_t groups = choose_row_strategy(n, logits.shape[1], &params);
  return run_shader(ctx, std::string("cross_entropy_backward.") + float_variant(logits.dtype),
                    params, bindings, groups);
}

}  // namespace sy_vk
