// Progress output during training: a redrawn bar on a terminal, one line per epoch otherwise.
// Everything goes to stderr, so that stdout stays free for results a script may parse.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>

#include "switchyard/train.h"

namespace switchyard::detail {

class ProgressReporter {
 public:
  // kAuto becomes kBar when stderr is a terminal, kLog otherwise.
  ProgressReporter(ProgressMode mode, int64_t total_epochs, std::FILE* out = stderr);

  void start_epoch(int64_t epoch, int64_t steps);
  void step_done(int64_t step);  // 1-based
  void end_epoch(const EpochMetrics& metrics);
  ProgressMode mode() const { return mode_; }

 private:
  void draw_bar(int64_t step);

  ProgressMode mode_;
  int64_t total_epochs_;
  std::FILE* out_;
  int64_t epoch_ = 0;
  int64_t steps_ = 0;
  std::chrono::steady_clock::time_point epoch_start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace switchyard::detail
