// Progress output during training: a redrawn bar on a terminal, one line per epoch otherwise.
// Everything goes to stderr, so that stdout stays free for results a script may parse.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "switchyard/train.h"

namespace switchyard::detail {

// Seconds left in the whole run: the rest of the current epoch, then `epochs_after` more. An epoch
// is taken to last `mean_epoch_seconds` (wall time of the epochs that ended, evaluation included)
// or, before any ended, what this one's pace of `step` of `steps` steps in `epoch_elapsed`
// seconds gives. Negative when nothing has been measured yet.
double estimate_remaining_seconds(double epoch_elapsed, int64_t step, int64_t steps,
                                  double mean_epoch_seconds, int64_t epochs_after);

// "42s", "3:07", "1:02:03": a duration as the bar shows it; "?" for a negative one.
std::string duration_text(double seconds);

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
  double remaining_seconds(int64_t step) const;

  ProgressMode mode_;
  int64_t total_epochs_;
  std::FILE* out_;
  int64_t epoch_ = 0;
  int64_t steps_ = 0;
  std::chrono::steady_clock::time_point epoch_start_;
  std::chrono::steady_clock::time_point last_draw_;
  // Epochs that ended in this run (not before a resume) and their wall time, for the ETA.
  int64_t epochs_timed_ = 0;
  double timed_seconds_ = 0;
};

}  // namespace switchyard::detail
