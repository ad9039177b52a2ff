// COPY (strided copy with dtype conversion) and FILL.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ops.h"

namespace sy_reference {
namespace {

// Float -> integer: truncation toward zero; NaN gives 0 and out-of-range values saturate (the op
// set leaves those cases unspecified; this is the reference's choice).
int64_t float_to_integer(double value, sy_dtype dtype) {
  if (std::isnan(value)) return 0;
  const double truncated = std::trunc(value);
  if (dtype == SY_DTYPE_I32) {
    if (truncated <= static_cast<double>(std::numeric_limits<int32_t>::min())) {
      return std::numeric_limits<int32_t>::min();
    }
    if (truncated >= static_cast<double>(std::numeric_limits<int32_t>::max())) {
      return std::numeric_limits<int32_t>::max();
    }
    return static_cast<int64_t>(truncated);
  }
  // 2^63 is exactly representable; anything at or above it saturates.
  if (truncated >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
  if (truncated <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(truncated);
}

}  // namespace

void run_copy(const OpContext& ctx) {
  require_io_counts(ctx, 1, 1);
  const TensorRef x = ctx.input(0);
  const TensorRef out = ctx.output(0);
  require_shape(ctx, "out", out, x.shape);
  const bool from_float = is_float_dtype(x.dtype);
  const bool to_float = is_float_dtype(out.dtype);
  if (from_float && to_float) {
    write_f32(out, read_f32(x));
  } else if (!from_float && !to_float) {
    write_i64(out, read_i64(x));
  } else if (from_float) {
    const std::vector<float> values = read_f32(x);
    std::vector<int64_t> converted(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      converted[i] = float_to_integer(static_cast<double>(values[i]), out.dtype);
    }
    write_i64(out, converted);
  } else {
    // Integer -> float goes through f32 (nearest), then the storage dtype (nearest even).
    const std::vector<int64_t> values = read_i64(x);
    std::vector<float> converted(values.size());
    for (size_t i = 0; i < values.size(); ++i) converted[i] = static_cast<float>(values[i]);
    write_f32(out, converted);
  }
}

void run_fill(const OpContext& ctx) {
  require_io_counts(ctx, 0, 1);
  const TensorRef out = ctx.output(0);
  const double value = ctx.params().fill.value;
  const auto count = static_cast<size_t>(out.shape.count());
  if (is_float_dtype(out.dtype)) {
    write_f32(out, std::vector<float>(count, static_cast<float>(value)));
  } else {
    write_i64(out, std::vector<int64_t>(count, float_to_integer(value, out.dtype)));
  }
}

}  // namespace sy_reference
