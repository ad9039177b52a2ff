// Elementwise families: unary (RELU..SIGN), unary backward, binary with broadcasting.
#include <vector>

#include "ops.h"
#include "tensor_layout.h"

namespace sy_vk {

Status run_elementwise(const OpContext& ctx, const char* family,
                       std::vector<sy_tensor_desc> tensors, std::vector<const char*> roles,
                       ParamBlock params) {
  const sy_tensor_desc& out = tensors.back();
  const int64_t count = element_count(out);
  std::vector<sy_tensor_desc*> pointers;
  for (auto& tensor : tensors) pointers.push_back(&tensor);
  // Validate against the call's real layouts before merging axes.
  std::vector<BufferBinding> bindings(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, tensors[i], roles[i], &bindings[i], &params.t[i]));
  }
  if (count == 0) return ok_status();
  coalesce_axes(pointers);
  for (size_t i = 0; i < tensors.size(); ++i) {
    SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, tensors[i], roles[i], &bindings[i], &params.t[i]));
  }
  params.count = static_cast<uint32_t>(count);
  params.mode = ctx.call.op;
  return run_shader(ctx, std::string(family) + "." + float_variant(out.dtype), params, bindings,
                    groups_for(static_cast<uint64_t>(count)));
}

Status run_unary(const OpContext& ctx) {
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, 1, 1));
  const sy_tensor_desc& x = ctx.call.inputs[0];
  const sy_tensor_desc& out = ctx.call.outputs[0];
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, x.dtype, "x"));
  SY_VK_RETURN_IF_ERROR(check_same_dtype(ctx, {&x, &out}, {"x", "out"}));
  SY_VK_RETURN_IF_ERROR(check_same_shape(ctx, x, "x", out, "out"));
  return run_elementwise(ctx, "unary", {x, out}, {"x", "out"}, ParamBlock{});
}

Status run_unary_backward(const OpContext& ctx) {
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, 2, 1));
  const sy_tensor_desc& grad_out = ctx.call.inputs[0];
  const sy_tensor_desc& saved = ctx.call.inputs[1];
  const sy_tensor_desc& grad_in = ctx.call.outputs[0];
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, grad_out.dtype, "grad_out"));
  SY_VK_RETURN_IF_ERROR(
      check_same_dtype(ctx, {&grad_out, &saved, &grad_in}, {"grad_out", "saved", "grad_in"}));
  SY_VK_RETURN_IF_ERROR(check_same_shape(ctx, grad_out, "grad_out", saved, "saved"));
  SY_VK_RETURN_IF_ERROR(check_same_shape(ctx, grad_out, "grad_out", grad_in, "grad_in"));
  return run_elementwise(ctx, "unary_backward", {grad_out, saved, grad_in},
                         {"grad_out", "saved", "grad_in"}, ParamBlock{});
}

Status run_binary(const OpContext& ctx) {
  const bool use_scalar = ctx.call.params.binary.use_scalar != 0;
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, use_scalar ? 1 : 2, 1));
  const sy_tensor_desc& a = ctx.call.inputs[0];
  const sy_tensor_desc& b = use_scalar ? a : ctx.call.inputs[1];
  const sy_tensor_desc& out = ctx.call.outputs[0];
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, a.dtype, "a"));
  SY_VK_RETURN_IF_ERROR(check_same_dtype(ctx, {&a, &b, &out}, {"a", "b", "out"}));
  int64_t shape[SY_MAX_RANK];
  uint32_t rank = 0;
  if (!broadcast_shapes(a, b, shape, &rank)) {
    return invalid_argument(std::string(op_name(ctx.call.op)) + ": a " + shape_text(a) + " and b " +
                            shape_text(b) + " do not broadcast");
  }
  sy_tensor_desc expected = out;
  expected.rank = rank;
  for (uint32_t d = 0; d < rank; ++d) expected.shape[d] = shape[d];
  SY_VK_RETURN_IF_ERROR(check_same_shape(ctx, out, "out", expected, "broadcast(a, b)"));
  sy_tensor_desc a_view, b_view;
  SY_VK_RETURN_IF_ERROR(broadcast_view(ctx, a, "a", out.shape, out.rank, &a_view));
  SY_VK_RETURN_IF_ERROR(broadcast_view(ctx, b, "b", out.shape, out.rank, &b_view));
  ParamBlock params;
  params.u[0] = use_scalar ? 1u : 0u;
  params.f[0] = static_cast<float>(ctx.call.params.binary.scalar);
  return run_elementwise(ctx, "binary", {a_view, b_view, out}, {"a", "b", "out"}, params);
}

}  // namespace sy_vk
