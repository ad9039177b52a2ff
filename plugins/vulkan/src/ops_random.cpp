// RANDOM_UNIFORM and RANDOM_NORMAL: counter-based Philox4x32-10, identical on every backend.
#include "ops.h"

namespace sy_vk {

Status run_random(const OpContext& ctx) {
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, 0, 1));
  const sy_tensor_desc& out = ctx.call.outputs[0];
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, out.dtype, "out"));
  const sy_random_params& p = ctx.call.params.random;
  if (ctx.call.op == SY_OP_RANDOM_NORMAL && !(p.b >= 0.0)) {
    return invalid_argument("RANDOM_NORMAL: the standard deviation (random.b) must be >= 0, got " +
                            std::to_string(p.b));
  }
  ParamBlock params;
  params.u[0] = static_cast<uint32_t>(p.seed);
  params.u[1] = static_cast<uint32_t>(p.seed >> 32);
  params.u[2] = static_cast<uint32_t>(p.offset);
  params.u[3] = static_cast<uint32_t>(p.offset >> 32);
  params.f[0] = static_cast<float>(p.a);
  params.f[1] = static_cast<float>(p.b);
  // Merging axes keeps the row-major order of elements, which is what numbers them.
  return run_elementwise(ctx, "random", {out}, {"out"}, params);
}

}  // namespace sy_vk
