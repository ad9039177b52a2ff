// Binary elementwise ops with numpy broadcasting: ADD ... CMP_EQ.
//
// The results of ADD, SUB, MUL and DIV are the f32 operations themselves (exactly what every
// backend computes); POW is evaluated in double and rounded once.
#include <cmath>
#include <limits>
#include <vector>

#include "ops.h"

namespace sy_reference {
namespace {

float nan_aware_max(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
  return a > b ? a : b;
}

float nan_aware_min(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
  return a < b ? a : b;
}

float apply_binary(sy_op op, float a, float b) {
  switch (op) {
    case SY_OP_ADD:
      return a + b;
    case SY_OP_SUB:
      return a - b;
    case SY_OP_MUL:
      return a * b;
    case SY_OP_DIV:
      return a / b;
    case SY_OP_MAX:
      return nan_aware_max(a, b);
    case SY_OP_MIN:
      return nan_aware_min(a, b);
    case SY_OP_POW:
      return static_cast<float>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    case SY_OP_CMP_GT:
      return a > b ? 1.0f : 0.0f;
    default:  // SY_OP_CMP_EQ
      return a == b ? 1.0f : 0.0f;
  }
}

}  // namespace

void run_binary(const OpContext& ctx) {
  const sy_binary_params& params = ctx.params().binary;
  require_io_counts(ctx, params.use_scalar ? 1 : 2, 1);
  const TensorRef a = ctx.input(0);
  const TensorRef out = ctx.output(0);
  require_float(ctx, "a", a);
  require_same_dtype(ctx, "out", out, "a", a);
  if (params.use_scalar) {
    require_shape(ctx, "out", out, a.shape);
    std::vector<float> values = read_f32(a);
    const auto scalar = static_cast<float>(params.scalar);
    for (float& value : values) value = apply_binary(ctx.op, value, scalar);
    write_f32(out, values);
    return;
  }
  const TensorRef b = ctx.input(1);
  require_same_dtype(ctx, "b", b, "a", a);
  const Shape out_shape = broadcast_shapes(ctx, "a", a.shape, "b", b.shape);
  require_shape(ctx, "out", out, out_shape);
  std::vector<float> values = read_f32(broadcast_to(a, out_shape));
  const std::vector<float> b_values = read_f32(broadcast_to(b, out_shape));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = apply_binary(ctx.op, values[i], b_values[i]);
  write_f32(out, values);
}

}  // namespace sy_reference
