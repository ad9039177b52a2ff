// Simple regression predictors a run reports beside its model (data.h: regression_baselines).
#include <cmath>
#include <utility>

#include "switchyard/data.h"

namespace switchyard {
namespace {

// Each sample's target values in their own units: the targets plus the sample's offset.
std::vector<float> absolute_targets(const Dataset& data) {
  std::vector<float> values = data.targets;
  const auto width = static_cast<size_t>(data.target_count());
  for (size_t i = 0; i < values.size() && !data.target_offsets.empty(); ++i) {
    values[i] += data.target_offsets[i / width];
  }
  return values;
}

// Solves a x = b (n x n, row-major, with `columns` right-hand sides in b) by Gaussian elimination
// with partial pivoting; b holds the solution afterwards.
void solve_in_place(std::vector<double>& a, std::vector<double>& b, size_t n, size_t columns) {
  for (size_t k = 0; k < n; ++k) {
    size_t pivot = k;
    for (size_t r = k + 1; r < n; ++r) {
      if (std::fabs(a[r * n + k]) > std::fabs(a[pivot * n + k])) pivot = r;
    }
    for (size_t c = 0; c < n; ++c) std::swap(a[k * n + c], a[pivot * n + c]);
    for (size_t c = 0; c < columns; ++c) std::swap(b[k * columns + c], b[pivot * columns + c]);
    for (size_t r = k + 1; r < n; ++r) {
      const double factor = a[r * n + k] / a[k * n + k];
      for (size_t c = k; c < n; ++c) a[r * n + c] -= factor * a[k * n + c];
      for (size_t c = 0; c < columns; ++c) b[r * columns + c] -= factor * b[k * columns + c];
    }
  }
  for (size_t k = n; k-- > 0;) {
    for (size_t c = 0; c < columns; ++c) {
      double value = b[k * columns + c];
      for (size_t j = k + 1; j < n; ++j) value -= a[k * n + j] * b[j * columns + c];
      b[k * columns + c] = value / a[k * n + k];
    }
  }
}

// Least squares with an intercept, fitted through the normal equations in double. A ridge of
// 1e-9 times the diagonal's mean keeps a rank-deficient design (a constant feature) solvable
// without changing a well-posed fit measurably.
std::vector<double> fit_least_squares(const Dataset& train) {
  const auto features = static_cast<size_t>(train.feature_count());
  const size_t n = features + 1;
  const auto outputs = static_cast<size_t>(train.target_count());
  std::vector<double> gram(n * n, 0.0);
  std::vector<double> moment(n * outputs, 0.0);
  std::vector<double> row(n, 1.0);
  for (int64_t i = 0; i < train.sample_count; ++i) {
    for (size_t f = 0; f < features; ++f)
      row[f] = static_cast<double>(train.features[i * features + f]);
    for (size_t r = 0; r < n; ++r) {
      for (size_t c = 0; c < n; ++c) gram[r * n + c] += row[r] * row[c];
      for (size_t o = 0; o < outputs; ++o) {
        moment[r * outputs + o] += row[r] * static_cast<double>(train.targets[i * outputs + o]);
      }
    }
  }
  double trace = 0;
  for (size_t k = 0; k < n; ++k) trace += gram[k * n + k];
  for (size_t k = 0; k < n; ++k) gram[k * n + k] += 1e-9 * trace / static_cast<double>(n);
  solve_in_place(gram, moment, n, outputs);
  return moment;
}

BaselineScore linear_baseline(const Dataset& train, const Dataset& test) {
  const std::vector<double> weights = fit_least_squares(train);
  const auto features = static_cast<size_t>(test.feature_count());
  const auto outputs = static_cast<size_t>(test.target_count());
  std::vector<float> predicted(static_cast<size_t>(test.sample_count) * outputs);
  for (size_t i = 0; i < static_cast<size_t>(test.sample_count); ++i) {
    for (size_t o = 0; o < outputs; ++o) {
      double value = weights[features * outputs + o];  // the intercept
      for (size_t f = 0; f < features; ++f) {
        value += weights[f * outputs + o] * static_cast<double>(test.features[i * features + f]);
      }
      if (!test.target_offsets.empty()) value += static_cast<double>(test.target_offsets[i]);
      predicted[i * outputs + o] = static_cast<float>(value);
    }
  }
  return {"linear_least_squares",
          "least squares on the features with an intercept, fitted on the training part",
          regression_metrics(absolute_targets(test), predicted, static_cast<int64_t>(outputs))};
}

BaselineScore last_value_baseline(const Dataset& test) {
  const int64_t window = test.feature_count();
  const auto outputs = static_cast<size_t>(test.target_count());
  std::vector<float> predicted;
  for (int64_t i = 0; i < test.sample_count; ++i) {
    float last = test.features[(i + 1) * window - 1];
    if (!test.target_offsets.empty()) last += test.target_offsets[static_cast<size_t>(i)];
    predicted.insert(predicted.end(), outputs, last);
  }
  return {"last_value", "the window's last value, for every step of the horizon",
          regression_metrics(absolute_targets(test), predicted, static_cast<int64_t>(outputs))};
}

}  // namespace

std::vector<BaselineScore> regression_baselines(const DataSettings& settings,
                                                const DataSplit& split) {
  std::vector<BaselineScore> baselines;
  if (split.test.sample_count == 0 || split.train.sample_count == 0) return baselines;
  const bool autoencoder =
      settings.series.enabled && settings.series.target == SeriesTarget::kInput;
  if (!autoencoder) baselines.push_back(linear_baseline(split.train, split.test));
  if (settings.series.enabled && !autoencoder) baselines.push_back(last_value_baseline(split.test));
  return baselines;
}

}  // namespace switchyard
