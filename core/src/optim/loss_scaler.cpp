// Dynamic loss scaling (see LossScaler in switchyard/optim.h).
#include <algorithm>
#include <cmath>
#include <string>

#include "switchyard/autograd.h"
#include "switchyard/ops.h"
#include "switchyard/optim.h"
#include "switchyard/status.h"

namespace switchyard {

LossScaler::LossScaler(LossScalerOptions options)
    : options_(options), scale_(options.initial_scale) {
  if (!(options_.initial_scale > 0) || !(options_.growth_factor >= 1) ||
      !(options_.backoff_factor > 0 && options_.backoff_factor < 1) ||
      options_.growth_interval < 1 || !(options_.max_scale >= options_.initial_scale)) {
    throw_error(invalid_argument(
        "LossScaler: needs initial_scale > 0, growth_factor >= 1, 0 < backoff_factor < 1, "
        "growth_interval >= 1 and max_scale >= initial_scale"));
  }
}

Tensor LossScaler::scale(const Tensor& loss) const {
  return loss * scale_;
}

bool LossScaler::step(Optimizer& optimizer) {
  const NoGradGuard no_grad;
  // The sum of every gradient is inf or NaN exactly when one element is (or, for finite values,
  // when the sum itself overflows f32, which also warrants a smaller scale): one host read.
  Tensor total;
  for (const Tensor& parameter : optimizer.parameters()) {
    const Tensor grad = parameter.grad();
    if (!grad.defined()) continue;
    const Tensor part = sum(grad.dtype() == DType::kF32 ? grad : grad.to(DType::kF32));
    total = total.defined() ? total + part : part;
  }
  const bool finite = !total.defined() || std::isfinite(total.item());
  if (finite) {
    const double inverse = 1.0 / scale_;
    for (const Tensor& parameter : optimizer.parameters()) {
      const Tensor grad = parameter.grad();
      if (grad.defined()) Tensor(parameter).set_grad(grad * inverse);
    }
    optimizer.step();
    if (++growth_tracker_ >= options_.growth_interval) {
      scale_ = std::min(scale_ * options_.growth_factor, options_.max_scale);
      growth_tracker_ = 0;
    }
  } else {
    ++skipped_steps_;
    scale_ *= options_.backoff_factor;
    growth_tracker_ = 0;
  }
  return finite;
}

void LossScaler::restore(double scale, int64_t growth_tracker, int64_t skipped_steps) {
  if (!(scale > 0) || growth_tracker < 0 || skipped_steps < 0) {
    throw_error(invalid_argument("LossScaler::restore: scale " + std::to_string(scale) +
                                 ", growth tracker " + std::to_string(growth_tracker) +
                                 ", skipped steps " + std::to_string(skipped_steps)));
  }
  scale_ = scale;
  growth_tracker_ = growth_tracker;
  skipped_steps_ = skipped_steps;
}

}  // namespace switchyard
