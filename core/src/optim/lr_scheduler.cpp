// Learning-rate schedules as closed forms of the epoch count.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "switchyard/optim.h"
#include "switchyard/status.h"

namespace switchyard {

LrScheduler::LrScheduler(Optimizer& optimizer) : optimizer_(optimizer), base_lr_(optimizer.lr()) {}

void LrScheduler::step() {
  set_epoch(epoch_ + 1);
}

void LrScheduler::set_epoch(int64_t epoch) {
  epoch_ = epoch;
  optimizer_.set_lr(lr_at(epoch_));
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LrScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  if (step_size < 1) throw_error(invalid_argument("StepLR: step_size must be >= 1"));
}

double StepLR::lr_at(int64_t epoch) const {
  return base_lr_ * std::pow(gamma_, static_cast<double>(epoch / step_size_));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, double min_lr)
    : LrScheduler(optimizer), t_max_(t_max), min_lr_(min_lr) {
  if (t_max < 1) throw_error(invalid_argument("CosineAnnealingLR: t_max must be >= 1"));
}

double CosineAnnealingLR::lr_at(int64_t epoch) const {
  const double progress =
      static_cast<double>(std::min(epoch, t_max_)) / static_cast<double>(t_max_);
  return min_lr_ + (base_lr_ - min_lr_) * (1.0 + std::cos(std::numbers::pi * progress)) / 2.0;
}

}  // namespace switchyard
