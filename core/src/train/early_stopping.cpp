#include "train/early_stopping.h"

#include <cmath>
#include <sstream>

namespace switchyard::detail {

std::optional<double> monitored_value(const EpochMetrics& m, const std::string& metric) {
  if (metric == "train_loss") return m.train_loss;
  if (metric == "train_accuracy") return m.train_accuracy;
  if (!m.has_validation) return std::nullopt;
  if (metric == "val_loss") return m.validation_loss;
  if (metric == "val_accuracy") return m.validation_accuracy;
  if (metric == "val_f1_macro") return m.validation_f1_macro;
  if (!m.regression) return std::nullopt;
  if (metric == "val_rmse") return m.validation_values.rmse;
  if (metric == "val_mae") return m.validation_values.mae;
  if (metric == "val_r2") return m.validation_values.r2;
  return std::nullopt;
}

BestTracker::BestTracker(MonitorSettings settings) : settings_(std::move(settings)) {}

bool BestTracker::observe(const EpochMetrics& m) {
  const std::optional<double> value = monitored_value(m, settings_.metric);
  bool improved = false;
  if (value && !std::isnan(*value)) {
    const double delta = settings_.min_delta;
    improved = !has_best() || (settings_.mode == MonitorMode::kMin ? *value < best_value_ - delta
                                                                   : *value > best_value_ + delta);
  }
  if (improved) {
    best_epoch_ = m.epoch;
    best_value_ = *value;
    wait_ = 0;
  } else {
    ++wait_;
  }
  return improved;
}

bool should_stop(const EarlyStoppingSettings& early, const BestTracker& tracker) {
  return early.enabled && tracker.epochs_without_improvement() >= early.patience;
}

std::string stop_message(int64_t epoch, const BestTracker& tracker) {
  std::ostringstream text;
  text << "early stopping at epoch " << epoch << ": " << tracker.settings().metric
       << " did not improve";
  if (tracker.settings().min_delta > 0) text << " by " << tracker.settings().min_delta;
  const int64_t wait = tracker.epochs_without_improvement();
  text << " for " << wait << (wait == 1 ? " epoch" : " epochs") << "; ";
  if (tracker.has_best()) {
    text << "best " << tracker.best_value() << " at epoch " << tracker.best_epoch();
  } else {
    text << "no epoch had a value";
  }
  return text.str();
}

}  // namespace switchyard::detail
