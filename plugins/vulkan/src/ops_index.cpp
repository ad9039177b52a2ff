// GATHER (index_select) and SCATTER_ADD (index_add_) along one axis with 1-D integer indices.
#include <vector>

#include "ops.h"

namespace sy_vk {
namespace {

Status check_data_dtype(const OpContext& ctx, uint32_t dtype, const char* role) {
  if (dtype == SY_DTYPE_I32 || dtype == SY_DTYPE_I64) return ok_status();
  return check_float_dtype(ctx, dtype, role);
}

// `indexed` is the tensor whose axis the indices select from (x, or out for SCATTER_ADD);
// `other` must equal it with the axis replaced by L.
Status check_index_call(const OpContext& ctx, const sy_tensor_desc& indexed,
                        const char* indexed_role, const sy_tensor_desc& indices,
                        const sy_tensor_desc& other, const char* other_role) {
  const std::string op = op_name(ctx.call.op);
  SY_VK_RETURN_IF_ERROR(check_data_dtype(ctx, indexed.dtype, indexed_role));
  SY_VK_RETURN_IF_ERROR(check_same_dtype(ctx, {&indexed, &other}, {indexed_role, other_role}));
  const int32_t axis = ctx.call.params.index.axis;
  if (axis < 0 || static_cast<uint32_t>(axis) >= indexed.rank) {
    return invalid_argument(op + ": axis " + std::to_string(axis) + " out of range for " +
                            indexed_role + " " + shape_text(indexed));
  }
  if ((indices.dtype != SY_DTYPE_I32 && indices.dtype != SY_DTYPE_I64) || indices.rank != 1) {
    return invalid_argument(op + ": indices must be a 1-D i32 or i64 tensor, got " +
                            dtype_name(indices.dtype) + " " + shape_text(indices));
  }
  sy_tensor_desc expected = indexed;
  expected.shape[axis] = indices.shape[0];
  return check_same_shape(ctx, other, other_role, expected, "the indexed shape");
}

Status run_index_op(const OpContext& ctx, const sy_tensor_desc& data, const char* data_role,
                    const sy_tensor_desc& indices, const sy_tensor_desc& out, int64_t axis_size,
                    const std::string& module, uint32_t nan_bits = 0) {
  ParamBlock params;
  std::vector<BufferBinding> bindings(3);
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, data, data_role, &bindings[0], &params.t[0]));
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, indices, "indices", &bindings[1], &params.t[1]));
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, out, "out", &bindings[2], &params.t[2]));
  const int64_t count = element_count(out);
  if (count == 0) return ok_status();
  const auto axis = static_cast<uint32_t>(ctx.call.params.index.axis);
  params.count = static_cast<uint32_t>(count);
  params.u[0] = axis;
  params.u[1] = indices.dtype == SY_DTYPE_I64 ? 1u : 0u;
  params.u[2] = static_cast<uint32_t>(axis_size);
  params.u[3] = static_cast<uint32_t>(indices.shape[0]);
  params.u[4] = nan_bits != 0 ? 1u : 0u;
  params.u[5] = nan_bits;
  return run_shader(ctx, module, params, bindings, groups_for(static_cast<uint64_t>(count)));
}

}  // namespace

Status run_gather(const OpContext& ctx) {
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, 2, 1));
  const sy_tensor_desc& x = ctx.call.inputs[0];
  const sy_tensor_desc& indices = ctx.call.inputs[1];
  const sy_tensor_desc& out = ctx.call.outputs[0];
  SY_VK_RETURN_IF_ERROR(check_index_call(ctx, x, "x", indices, out, "out"));
  const std::string module = "gather.w" + std::to_string(dtype_size(x.dtype) * 8);
  // An index outside the axis gives NaN in float data (the quiet NaN of its type), so that a
  // skipped element never hands on what the memory held.
  uint32_t nan_bits = 0;
  if (x.dtype == SY_DTYPE_F32) nan_bits = 0x7FC00000u;
  if (x.dtype == SY_DTYPE_F16) nan_bits = 0x7E00u;
  if (x.dtype == SY_DTYPE_BF16) nan_bits = 0x7FC0u;
  return run_index_op(ctx, x, "x", indices, out, x.shape[ctx.call.params.index.axis], module,
                      nan_bits);
}

Status run_scatter_add(const OpContext& ctx) {
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, 2, 1));
  const sy_tensor_desc& src = ctx.call.inputs[0];
  const sy_tensor_desc& indices = ctx.call.inputs[1];
  const sy_tensor_desc& out = ctx.call.outputs[0];
  SY_VK_RETURN_IF_ERROR(check_index_call(ctx, out, "out", indices, src, "src"));
  const std::string module = std::string("scatter_add.") + dtype_name(out.dtype);
  return run_index_op(ctx, src, "src", indices, out, out.shape[ctx.call.params.index.axis], module);
}

}  // namespace sy_vk
