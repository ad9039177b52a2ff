// SOFTMAX, LOG_SOFTMAX and their backward ops along one axis.
#include <algorithm>
#include <vector>

#include "ops.h"
#include "tensor_layout.h"

namespace sy_vk {
namespace {

// `desc` without `axis`: the view over which rows are numbered.
sy_tensor_desc without_axis(const sy_tensor_desc& desc, uint32_t axis) {
  sy_tensor_desc rows = desc;
  rows.rank = 0;
  for (uint32_t d = 0; d < desc.rank; ++d) {
    if (d == axis) continue;
    rows.shape[rows.rank] = desc.shape[d];
    rows.strides[rows.rank++] = desc.strides[d];
  }
  return rows;
}

}  // namespace

Status run_softmax(const OpContext& ctx) {
  const bool backward =
      ctx.call.op == SY_OP_SOFTMAX_BACKWARD || ctx.call.op == SY_OP_LOG_SOFTMAX_BACKWARD;
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, backward ? 2 : 1, 1));
  const sy_tensor_desc& in0 = ctx.call.inputs[0];
  const sy_tensor_desc& in1 = backward ? ctx.call.inputs[1] : in0;
  const sy_tensor_desc& out = ctx.call.outputs[0];
  const char* in0_role = backward ? "grad_out" : "x";
  const char* out_role = backward ? "grad_in" : "out";
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, in0.dtype, in0_role));
  SY_VK_RETURN_IF_ERROR(check_same_dtype(ctx, {&in0, &in1, &out}, {in0_role, "y", out_role}));
  SY_VK_RETURN_IF_ERROR(check_same_shape(ctx, in0, in0_role, in1, "y"));
  SY_VK_RETURN_IF_ERROR(check_same_shape(ctx, in0, in0_role, out, out_role));
  const int32_t axis = ctx.call.params.softmax.axis;
  if (axis < 0 || static_cast<uint32_t>(axis) >= in0.rank) {
    return invalid_argument(std::string(op_name(ctx.call.op)) + ": axis " + std::to_string(axis) +
                            " out of range for " + in0_role + " " + shape_text(in0));
  }
  const sy_tensor_desc* tensors[] = {&in0, &in1, &out};
  const char* roles[] = {in0_role, "y", out_role};
  ParamBlock params;
  std::vector<BufferBinding> bindings(3);
  for (int i = 0; i < 3; ++i) {
    SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, *tensors[i], roles[i], &bindings[i], &params.t[i]));
  }
  if (element_count(out) == 0) return ok_status();
  sy_tensor_desc rows[3];
  for (int i = 0; i < 3; ++i) rows[i] = without_axis(*tensors[i], static_cast<uint32_t>(axis));
  sy_tensor_desc* row_pointers[] = {&rows[0], &rows[1], &rows[2]};
  coalesce_axes(row_pointers);
  for (int i = 0; i < 3; ++i) {
    SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, rows[i], roles[i], &bindings[i], &params.t[i]));
    params.u[1 + i] = static_cast<uint32_t>(tensors[i]->strides[axis]);
  }
  const int64_t row_count = element_count(rows[2]);
  params.count = static_cast<uint32_t>(row_count);
  params.mode = ctx.call.op;
  params.u[0] = static_cast<uint32_t>(in0.shape[axis]);
  const uint32_t groups = choose_row_strategy(row_count, in0.shape[axis], &params);
  return run_shader(ctx, std::string("softmax.") + float_variant(out.dtype), params, bindings,
                    groups);
}

}  // namespace sy_vk
