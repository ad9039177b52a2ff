// Data movement: COPY (strided, with casts) and FILL.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "device.h"
#include "ops.h"
#include "switchyard/plugin_support/dtype_codec.h"
#include "tensor_layout.h"

namespace sy_vk {
namespace {

uint32_t storage_width(uint32_t dtype) {
  return static_cast<uint32_t>(dtype_size(dtype) * 8);
}

Status check_data_dtype(const OpContext& ctx, uint32_t dtype, const char* role) {
  if (dtype_size(dtype) == 0) {
    return invalid_argument(std::string(op_name(ctx.call.op)) + ": " + role +
                            " has unknown dtype " + std::to_string(dtype));
  }
  return is_float_dtype(dtype) ? check_float_dtype(ctx, dtype, role) : ok_status();
}

int64_t truncate_to_int64(double value) {
  if (std::isnan(value)) return 0;
  if (value >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
  if (value <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(std::trunc(value));
}

// The bit pattern of `value` in `dtype` (docs/ops.md, FILL).
uint64_t fill_bits(double value, uint32_t dtype) {
  const auto as_f32 = static_cast<float>(value);
  switch (dtype) {
    case SY_DTYPE_F32:
      return sy_support::float_bits(as_f32);
    case SY_DTYPE_F16:
      return sy_support::f32_to_f16_bits(as_f32);
    case SY_DTYPE_BF16:
      return sy_support::f32_to_bf16_bits(as_f32);
    case SY_DTYPE_I32: {
      const int64_t wide = truncate_to_int64(value);
      const int64_t clamped = std::clamp<int64_t>(wide, std::numeric_limits<int32_t>::min(),
                                                  std::numeric_limits<int32_t>::max());
      return static_cast<uint32_t>(static_cast<int32_t>(clamped));
    }
    default:
      return static_cast<uint64_t>(truncate_to_int64(value));
  }
}

}  // namespace

Status run_copy(const OpContext& ctx) {
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, 1, 1));
  sy_tensor_desc x = ctx.call.inputs[0];
  sy_tensor_desc out = ctx.call.outputs[0];
  SY_VK_RETURN_IF_ERROR(check_data_dtype(ctx, x.dtype, "x"));
  SY_VK_RETURN_IF_ERROR(check_data_dtype(ctx, out.dtype, "out"));
  SY_VK_RETURN_IF_ERROR(check_same_shape(ctx, x, "x", out, "out"));
  ParamBlock params;
  std::vector<BufferBinding> bindings(2);
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, x, "x", &bindings[0], &params.t[0]));
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, out, "out", &bindings[1], &params.t[1]));
  const int64_t count = element_count(out);
  if (count == 0 || same_view(x, out)) return ok_status();
  sy_tensor_desc* tensors[] = {&x, &out};
  coalesce_axes(tensors);
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, x, "x", &bindings[0], &params.t[0]));
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, out, "out", &bindings[1], &params.t[1]));
  params.count = static_cast<uint32_t>(count);
  params.u[0] = x.dtype;  // KIND_* in convert.glsl are the sy_dtype values
  params.u[1] = out.dtype;
  const std::string module = "copy.w" + std::to_string(storage_width(x.dtype)) + ".w" +
                             std::to_string(storage_width(out.dtype));
  return run_shader(ctx, module, params, bindings, groups_for(static_cast<uint64_t>(count)));
}

Status run_fill(const OpContext& ctx) {
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, 0, 1));
  sy_tensor_desc out = ctx.call.outputs[0];
  SY_VK_RETURN_IF_ERROR(check_data_dtype(ctx, out.dtype, "out"));
  ParamBlock params;
  std::vector<BufferBinding> bindings(1);
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, out, "out", &bindings[0], &params.t[0]));
  const int64_t count = element_count(out);
  if (count == 0) return ok_status();
  sy_tensor_desc* tensors[] = {&out};
  coalesce_axes(tensors);
  SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, out, "out", &bindings[0], &params.t[0]));
  const uint64_t bits = fill_bits(ctx.call.params.fill.value, out.dtype);
  params.count = static_cast<uint32_t>(count);
  params.u[0] = static_cast<uint32_t>(bits);
  params.u[1] = static_cast<uint32_t>(bits >> 32);
  return run_shader(ctx, "fill.w" + std::to_string(storage_width(out.dtype)), params, bindings,
                    groups_for(static_cast<uint64_t>(count)));
}

}  // namespace sy_vk
