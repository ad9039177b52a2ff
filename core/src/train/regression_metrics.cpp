// RMSE, MAE and R^2 as scikit-learn defines them (metrics.h).
#include <cmath>

#include "switchyard/metrics.h"

namespace switchyard {
namespace {

struct OutputSums {
  double sum = 0;      // of the true values
  double squared = 0;  // of the squared errors
  double absolute = 0;
};

}  // namespace

RegressionMetrics regression_metrics(const std::vector<float>& truth,
                                     const std::vector<float>& predicted, int64_t outputs) {
  RegressionMetrics metrics;
  metrics.outputs = outputs;
  if (outputs < 1 || truth.empty() || truth.size() != predicted.size()) return metrics;
  const auto width = static_cast<size_t>(outputs);
  const size_t rows = truth.size() / width;
  metrics.samples = static_cast<int64_t>(rows);
  std::vector<OutputSums> sums(width);
  for (size_t i = 0; i < rows * width; ++i) {
    const double error = static_cast<double>(predicted[i]) - static_cast<double>(truth[i]);
    OutputSums& s = sums[i % width];
    s.sum += static_cast<double>(truth[i]);
    s.squared += error * error;
    s.absolute += std::fabs(error);
  }
  const auto n = static_cast<double>(rows);
  for (size_t o = 0; o < width; ++o) {
    const double mean = sums[o].sum / n;
    double total = 0;  // the squares around the mean, in a second pass for accuracy
    for (size_t r = 0; r < rows; ++r) {
      const double d = static_cast<double>(truth[r * width + o]) - mean;
      total += d * d;
    }
    metrics.rmse += std::sqrt(sums[o].squared / n);
    metrics.mae += sums[o].absolute / n;
    metrics.r2 += total > 0 ? 1.0 - sums[o].squared / total : (sums[o].squared == 0 ? 1.0 : 0.0);
  }
  const auto count = static_cast<double>(width);
  metrics.rmse /= count;
  metrics.mae /= count;
  metrics.r2 /= count;
  return metrics;
}

}  // namespace switchyard
