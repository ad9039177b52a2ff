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
