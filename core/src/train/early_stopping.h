// Tracking the best epoch by a monitored metric, and deciding when early stopping ends a run.
//
// The tracker holds no state that the epoch history does not: a resumed run replays the history
// stored in its checkpoint through a fresh tracker and arrives at the best epoch, the best value
// and the count of epochs without improvement that the interrupted run had.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "switchyard/train.h"

namespace switchyard::detail {

// The value of `metric` (MonitorSettings::metric) in `m`; nullopt when the epoch lacks it (a
// validation metric of an epoch without validation) or the name is unknown.
std::optional<double> monitored_value(const EpochMetrics& m, const std::string& metric);

class BestTracker {
 public:
  explicit BestTracker(MonitorSettings settings = {});

  // Records one epoch; true when it improved on the best so far by more than min_delta (the first
  // epoch with a value always does). An epoch without a value, or with NaN, does not improve.
  bool observe(const EpochMetrics& m);

  bool has_best() const { return best_epoch_ > 0; }
  int64_t best_epoch() const { return best_epoch_; }
  double best_value() const { return best_value_; }
  // Epochs observed since the best one (Keras' `wait`).
  int64_t epochs_without_improvement() const { return wait_; }
  const MonitorSettings& settings() const { return settings_; }

 private:
  MonitorSettings settings_;
  int64_t best_epoch_ = 0;
  double best_value_ = 0;
  int64_t wait_ = 0;
};

// True when early stopping is on and the best epoch is `patience` or more epochs back.
bool should_stop(const EarlyStoppingSettings& early, const BestTracker& tracker);

// "early stopping at epoch 7: val_loss did not improve by 0.001 for 3 epochs; best 0.123 at
// epoch 4".
std::string stop_message(int64_t epoch, const BestTracker& tracker);

}  // namespace switchyard::detail
