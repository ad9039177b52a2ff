#include "train/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace switchyard::detail {
namespace {

constexpr int kBarWidth = 30;
// Redrawing more often than this only costs time on a slow terminal.
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);

}  // namespace

double estimate_remaining_seconds(double epoch_elapsed, int64_t step, int64_t steps,
                                  double mean_epoch_seconds, int64_t epochs_after) {
  double epoch_seconds = mean_epoch_seconds;
  if (epoch_seconds <= 0) {
    if (step <= 0 || steps <= 0) return -1;
    epoch_seconds = epoch_elapsed * static_cast<double>(steps) / static_cast<double>(step);
  }
  const double rest_of_epoch = std::max(0.0, epoch_seconds - epoch_elapsed);
  return rest_of_epoch + static_cast<double>(std::max<int64_t>(epochs_after, 0)) * epoch_seconds;
}

std::string duration_text(double seconds) {
  if (seconds < 0) return "?";
  const auto total = static_cast<long long>(std::llround(seconds));
  char text[32];
  if (total < 60) {
    std::snprintf(text, sizeof(text), "%llds", total);
  } else if (total < 3600) {
    std::snprintf(text, sizeof(text), "%lld:%02lld", total / 60, total % 60);
  } else {
    std::snprintf(text, sizeof(text), "%lld:%02lld:%02lld", total / 3600, total / 60 % 60,
                  total % 60);
  }
  return text;
}

ProgressReporter::ProgressReporter(ProgressMode mode, int64_t total_epochs, std::FILE* out)
    : mode_(mode), total_epochs_(total_epochs), out_(out) {
  if (mode_ == ProgressMode::kAuto) {
    mode_ = ::isatty(::fileno(out_)) ? ProgressMode::kBar : ProgressMode::kLog;
  }
}

void ProgressReporter::start_epoch(int64_t epoch, int64_t steps) {
  epoch_ = epoch;
  steps_ = steps;
  epoch_start_ = std::chrono::steady_clock::now();
  last_draw_ = epoch_start_ - kRedrawInterval;
  if (mode_ == ProgressMode::kBar) draw_bar(0);
}

void ProgressReporter::step_done(int64_t step) {
  if (mode_ != ProgressMode::kBar) return;
  const auto now = std::chrono::steady_clock::now();
  if (step < steps_ && now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  draw_bar(step);
}

double ProgressReporter::remaining_seconds(int64_t step) const {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_start_).count();
  const double mean = epochs_timed_ > 0 ? timed_seconds_ / static_cast<double>(epochs_timed_) : 0;
  return estimate_remaining_seconds(elapsed, step, steps_, mean, total_epochs_ - epoch_);
}

void ProgressReporter::draw_bar(int64_t step) {
  const int filled = steps_ > 0 ? static_cast<int>(kBarWidth * step / steps_) : kBarWidth;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_start_).count();
  // "\033[K" clears what a longer previous line left after this one.
  std::fprintf(out_, "\repoch %lld/%lld [%s%s] %lld/%lld steps %.1fs  run ETA %s\033[K",
               static_cast<long long>(epoch_), static_cast<long long>(total_epochs_),
               std::string(static_cast<size_t>(filled), '=').c_str(),
               std::string(static_cast<size_t>(kBarWidth - filled), ' ').c_str(),
               static_cast<long long>(step), static_cast<long long>(steps_), seconds,
               duration_text(remaining_seconds(step)).c_str());
  std::fflush(out_);
}

namespace {

// "rmse 0.41 mae 0.32 r2 0.87": regression's counterpart of "acc 0.97".
std::string value_scores(const RegressionMetrics& values) {
  char text[96];
  std::snprintf(text, sizeof(text), "rmse %.4g mae %.4g r2 %.4f", values.rmse, values.mae,
                values.r2);
  return text;
}

}  // namespace

void ProgressReporter::end_epoch(const EpochMetrics& m) {
  ++epochs_timed_;
  timed_seconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_start_).count();
  if (mode_ == ProgressMode::kNone) return;
  // "\r\033[K" clears the bar so that the summary replaces it.
  char validation[128] = "";
  if (m.has_validation && m.regression) {
    std::snprintf(validation, sizeof(validation), "  val loss %.4f %s", m.validation_loss,
                  value_scores(m.validation_values).c_str());
  } else if (m.has_validation) {
    std::snprintf(validation, sizeof(validation), "  val loss %.4f acc %.4f", m.validation_loss,
                  m.validation_accuracy);
  }
  char train_accuracy[32] = "";
  if (!m.regression)
    std::snprintf(train_accuracy, sizeof(train_accuracy), " acc %.4f", m.train_accuracy);
  char test_accuracy[32] = "";
  std::snprintf(test_accuracy, sizeof(test_accuracy), "acc %.4f", m.test_accuracy);
  // VAE models: the KL per sample beside each loss (which includes beta times it).
  char train_kl[32] = "";
  char test_kl[32] = "";
  if (m.has_kl) {
    std::snprintf(train_kl, sizeof(train_kl), " kl %.4g", m.train_kl);
    std::snprintf(test_kl, sizeof(test_kl), " kl %.4g", m.test_kl);
  }
  std::fprintf(out_,
               "%sepoch %lld/%lld  train loss %.4f%s%s%s  test loss %.4f%s %s  "
               "lr %.4g  %.1f ms (%.0f samples/s)\n",
               mode_ == ProgressMode::kBar ? "\r\033[K" : "", static_cast<long long>(m.epoch),
               static_cast<long long>(total_epochs_), m.train_loss, train_kl, train_accuracy,
               validation, m.test_loss, test_kl,
               m.regression ? value_scores(m.test_values).c_str() : test_accuracy, m.learning_rate,
               m.epoch_seconds * 1e3, m.samples_per_second);
  if (m.loss_scale > 0) {
    std::fprintf(out_, "  f16 loss scale %g, %lld step(s) skipped for inf/NaN gradients\n",
                 m.loss_scale, static_cast<long long>(m.skipped_steps));
  }
  std::fflush(out_);
}

}  // namespace switchyard::detail
