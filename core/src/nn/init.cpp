// Parameter initialisation from the counter-based generator.
#include "switchyard/init.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/memory_budget.h"
#include "switchyard/ops.h"
#include "switchyard/status.h"

namespace switchyard {

uint64_t InitContext::take_offset(int64_t count) {
  const uint64_t offset = next_offset;
  const auto rounded = (static_cast<uint64_t>(count) + 3u) & ~uint64_t{3};
  next_offset += rounded;
  return offset;
}

FanInOut compute_fans(const Shape& weight_shape) {
  if (weight_shape.rank() < 2) {
    throw_error(
        invalid_argument("fan in/out need a weight of rank >= 2, not " + weight_shape.to_string()));
  }
  int64_t receptive = 1;
  for (int i = 2; i < weight_shape.rank(); ++i) receptive *= weight_shape[i];
  return {weight_shape[1] * receptive, weight_shape[0] * receptive};
}

namespace {

// The memory budget (runtime/memory_budget.h) of the model's parameters with this one drawn.
void check_parameter_budget(InitContext& context, const Shape& shape) {
  const std::vector<int64_t> extents(shape.begin(), shape.end());
  const std::optional<uint64_t> bytes =
      detail::shape_bytes(extents, dtype_size_bytes(context.dtype));
  const uint64_t total = bytes && *bytes <= UINT64_MAX - context.drawn_bytes
                             ? context.drawn_bytes + *bytes
                             : UINT64_MAX;
  throw_if_error(detail::check_memory_budget(
      total, "the model's parameters (up to one of " + shape.to_string() + ")", context.source,
      context.device.get()));
  context.drawn_bytes = total;
}

}  // namespace

Tensor init_uniform(InitContext& context, const Shape& shape, double low, double high) {
  if (context.device == nullptr) throw_error(invalid_argument("InitContext has no device"));
  check_parameter_budget(context, shape);
  const uint64_t offset = context.take_offset(shape.numel());
  Tensor value =
      rand_uniform(shape, low, high, context.seed, offset, context.device, context.dtype);
  return value;
}

Tensor init_normal(InitContext& context, const Shape& shape, double mean, double stddev) {
  if (context.device == nullptr) throw_error(invalid_argument("InitContext has no device"));
  check_parameter_budget(context, shape);
  const uint64_t offset = context.take_offset(shape.numel());
  return rand_normal(shape, mean, stddev, context.seed, offset, context.device, context.dtype);
}

Tensor kaiming_uniform(InitContext& context, const Shape& shape, double a) {
  const double fan_in = static_cast<double>(compute_fans(shape).fan_in);
  const double bound = std::sqrt(6.0 / ((1.0 + a * a) * fan_in));
  return init_uniform(context, shape, -bound, bound);
}

Tensor xavier_uniform(InitContext& context, const Shape& shape, double gain) {
  const FanInOut fans = compute_fans(shape);
  const double bound = gain * std::sqrt(6.0 / static_cast<double>(fans.fan_in + fans.fan_out));
  return init_uniform(context, shape, -bound, bound);
}

Tensor init_weight(InitContext& context, const Shape& shape) {
  switch (context.scheme) {
    case InitScheme::kKaimingUniform:
      return kaiming_uniform(context, shape, std::sqrt(5.0));
    case InitScheme::kXavierUniform:
      return xavier_uniform(context, shape);
  }
  throw_error(invalid_argument("unknown init scheme"));
}

Tensor init_bias(InitContext& context, const Shape& shape, int64_t fan_in) {
  if (context.scheme == InitScheme::kXavierUniform) {
    return zeros(shape, context.device, context.dtype);
  }
  const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
  return init_uniform(context, shape, -bound, bound);
}

}  // namespace switchyard
