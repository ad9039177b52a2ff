#include <algorithm>
#include <cmath>

#include "switchyard/data.h"

namespace switchyard {
namespace {

// A constant feature would divide by zero; it is left unscaled (factor 1), as scikit-learn does.
float safe_inverse(double spread) {
  return spread > 0 ? static_cast<float>(1.0 / spread) : 1.0f;
}

// Rows of `width` values, row-major: a data set's features or its regression targets.
struct Columns {
  const std::vector<float>& values;
  int64_t rows;
  int64_t width;
  float at(int64_t row, int64_t column) const { return values[row * width + column]; }
};

void fit_standard(const Columns& data, FeatureScaler& scaler) {
  for (int64_t f = 0; f < data.width; ++f) {
    double sum = 0;
    for (int64_t i = 0; i < data.rows; ++i) sum += static_cast<double>(data.at(i, f));
    const double mean = sum / static_cast<double>(data.rows);
    double squares = 0;
    for (int64_t i = 0; i < data.rows; ++i) {
      const double d = static_cast<double>(data.at(i, f)) - mean;
      squares += d * d;
    }
    scaler.offset[f] = static_cast<float>(mean);
    scaler.factor[f] = safe_inverse(std::sqrt(squares / static_cast<double>(data.rows)));
  }
}

void fit_min_max(const Columns& data, FeatureScaler& scaler) {
  for (int64_t f = 0; f < data.width; ++f) {
    float low = data.at(0, f);
    float high = low;
    for (int64_t i = 1; i < data.rows; ++i) {
      low = std::min(low, data.at(i, f));
      high = std::max(high, data.at(i, f));
    }
    scaler.offset[f] = low;
    scaler.factor[f] = safe_inverse(static_cast<double>(high) - static_cast<double>(low));
  }
}

Result<FeatureScaler> fit_columns(ScaleMode mode, double divisor, const Columns& data) {
  FeatureScaler scaler;
  scaler.mode = mode;
  if (mode == ScaleMode::kNone) return scaler;
  if (data.rows == 0) {
    return invalid_argument("cannot fit " + std::string(scale_mode_name(mode)) +
                            " scaling on an empty training split");
  }
  const auto width = static_cast<size_t>(data.width);
  scaler.offset.assign(width, 0.0f);
  scaler.factor.assign(width, 1.0f);
  switch (mode) {
    case ScaleMode::kStandard:
      fit_standard(data, scaler);
      break;
    case ScaleMode::kMinMax:
      fit_min_max(data, scaler);
      break;
    case ScaleMode::kDivide:
      if (divisor == 0 || !std::isfinite(divisor)) {
        return invalid_argument("data.divisor must be a finite non-zero number, got " +
                                std::to_string(divisor));
      }
      scaler.factor.assign(width, static_cast<float>(1.0 / divisor));
      break;
    case ScaleMode::kNone:
      break;
  }
  return scaler;
}

void apply_columns(const FeatureScaler& scaler, std::vector<float>& values, int64_t rows) {
  const auto width = static_cast<int64_t>(scaler.factor.size());
  for (int64_t i = 0; i < rows; ++i) {
    float* row = values.data() + i * width;
    for (int64_t f = 0; f < width; ++f) row[f] = (row[f] - scaler.offset[f]) * scaler.factor[f];
  }
}

}  // namespace

Result<ScaleMode> parse_scale_mode(const std::string& text) {
  if (text == "none") return ScaleMode::kNone;
  if (text == "standard") return ScaleMode::kStandard;
  if (text == "minmax") return ScaleMode::kMinMax;
  if (text == "divide") return ScaleMode::kDivide;
  return invalid_argument("unknown scaling '" + text +
                          "' (expected none, standard, minmax, divide)");
}

const char* scale_mode_name(ScaleMode mode) {
  switch (mode) {
    case ScaleMode::kNone:
      return "none";
    case ScaleMode::kStandard:
      return "standard";
    case ScaleMode::kMinMax:
      return "minmax";
    case ScaleMode::kDivide:
      return "divide";
  }
  return "unknown";
}

Result<FeatureScaler> FeatureScaler::fit(ScaleMode mode, double divisor, const Dataset& train) {
  return fit_columns(mode, divisor, {train.features, train.sample_count, train.feature_count()});
}

Result<FeatureScaler> FeatureScaler::fit_targets(ScaleMode mode, const Dataset& train) {
  return fit_columns(mode, 1.0, {train.targets, train.sample_count, train.target_count()});
}

Status FeatureScaler::apply(Dataset& data) const {
  if (mode == ScaleMode::kNone) return ok_status();
  const int64_t width = data.feature_count();
  if (static_cast<size_t>(width) != factor.size()) {
    return invalid_argument("the scaler was fitted on " + std::to_string(factor.size()) +
                            " features, but " + data.name + " has " + std::to_string(width));
  }
  apply_columns(*this, data.features, data.sample_count);
  return ok_status();
}

Status FeatureScaler::apply_to_targets(Dataset& data) const {
  if (mode == ScaleMode::kNone) return ok_status();
  if (static_cast<size_t>(data.target_count()) != factor.size()) {
    return invalid_argument("the target scaler was fitted on " + std::to_string(factor.size()) +
                            " targets, but " + data.name + " has " +
                            std::to_string(data.target_count()));
  }
  apply_columns(*this, data.targets, data.sample_count);
  return ok_status();
}

void FeatureScaler::unscale(std::vector<float>& rows) const {
  if (mode == ScaleMode::kNone || factor.empty()) return;
  const size_t width = factor.size();
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i] = rows[i] / factor[i % width] + offset[i % width];
  }
}

}  // namespace switchyard

namespace switchyard {
namespace {

// The statistic of one feature's known values (`known` is sorted); ties of most_frequent go to the
// smallest value, as scikit-learn's SimpleImputer does.
float statistic(MissingPolicy strategy, const std::vector<float>& known) {
  if (strategy == MissingPolicy::kMean) {
    double sum = 0;
    for (const float value : known) sum += static_cast<double>(value);
    return static_cast<float>(sum / static_cast<double>(known.size()));
  }
  if (strategy == MissingPolicy::kMedian) {
    const size_t half = known.size() / 2;
    if (known.size() % 2 == 1) return known[half];
    return static_cast<float>(
        (static_cast<double>(known[half - 1]) + static_cast<double>(known[half])) / 2.0);
  }
  float best = known.front();
  size_t best_run = 0;
  for (size_t i = 0; i < known.size();) {
    size_t j = i;
    while (j < known.size() && known[j] == known[i]) ++j;
    if (j - i > best_run) {
      best_run = j - i;
      best = known[i];
    }
    i = j;
  }
  return best;
}

}  // namespace

Result<FeatureImputer> FeatureImputer::fit(MissingPolicy strategy, const Dataset& train) {
  FeatureImputer imputer;
  imputer.strategy = strategy;
  if (!is_imputing(strategy)) return imputer;
  const int64_t width = train.feature_count();
  std::vector<float> known;
  for (int64_t f = 0; f < width; ++f) {
    known.clear();
    for (int64_t i = 0; i < train.sample_count; ++i) {
      const float value = train.features[static_cast<size_t>(i * width + f)];
      if (!std::isnan(value)) known.push_back(value);
    }
    if (known.empty()) {
      const std::vector<std::string> names = train.table.feature_names();
      const std::string name = static_cast<size_t>(f) < names.size() && !names[f].empty()
                                   ? "'" + names[f] + "'"
                                   : std::to_string(f + 1);
      return invalid_argument("data.missing: " + std::string(missing_policy_name(strategy)) +
                              ": feature " + name + " of " + train.name +
                              " has no value in the training split to fill its missing ones "
                              "with; leave the column out (data.drop)");
    }
    std::sort(known.begin(), known.end());
    imputer.values.push_back(statistic(strategy, known));
  }
  return imputer;
}

int64_t FeatureImputer::fill(float* rows, int64_t row_count) const {
  const auto width = static_cast<int64_t>(values.size());
  int64_t filled = 0;
  for (int64_t i = 0; i < row_count * width; ++i) {
    if (!std::isnan(rows[i])) continue;
    rows[i] = values[static_cast<size_t>(i % width)];
    ++filled;
  }
  return filled;
}

Result<int64_t> FeatureImputer::apply(Dataset& data) const {
  if (!active()) return int64_t{0};
  if (data.feature_count() != static_cast<int64_t>(values.size())) {
    return invalid_argument(data.name + " has " + std::to_string(data.feature_count()) +
                            " features per sample, but missing values were fitted on " +
                            std::to_string(values.size()));
  }
  return fill(data.features.data(), data.sample_count);
}

}  // namespace switchyard
