// RANDOM_UNIFORM and RANDOM_NORMAL: Philox4x32-10 numbers indexed by the element's logical
// (row-major) position, so the values do not depend on the output's strides.
#include <cmath>
#include <numbers>
#include <vector>

#include "ops.h"
#include "switchyard/plugin_support/philox.h"

namespace sy_reference {
namespace {

constexpr float kTwoToMinus24 = 0x1p-24f;

// Box-Muller, cosine branch, evaluated in double and rounded to f32 once.
float normal_value(uint32_t word0, uint32_t word1, double mean, double stddev) {
  const double u1 = static_cast<double>(static_cast<float>((word0 >> 8) + 1u) * kTwoToMinus24);
  const double u2 = static_cast<double>(static_cast<float>(word1 >> 8) * kTwoToMinus24);
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  return static_cast<float>(mean + stddev * z);
}

}  // namespace

void run_random(const OpContext& ctx) {
  require_io_counts(ctx, 0, 1);
  const TensorRef out = ctx.output(0);
  require_float(ctx, "out", out);
  const sy_random_params& p = ctx.params().random;
  const bool uniform = ctx.op == SY_OP_RANDOM_UNIFORM;
  if (!uniform && !(p.b >= 0.0)) {
    fail(ctx, "the standard deviation (random.b) must be >= 0, got " + std::to_string(p.b));
  }
  const auto low = static_cast<float>(p.a);
  const auto high = static_cast<float>(p.b);
  std::vector<float> values(static_cast<size_t>(out.shape.count()));
  for (size_t i = 0; i < values.size(); ++i) {
    const SyPhiloxWords words = sy_philox_for_element(p.seed, p.offset, i);
    values[i] = uniform ? sy_uniform_from_unit(low, high, sy_unit_float(words.w[0]))
                        : normal_value(words.w[0], words.w[1], p.a, p.b);
  }
  write_f32(out, values);
}

}  // namespace sy_reference
