#include <algorithm>
#include <cmath>

#include "switchyard/data.h"

namespace switchyard {
namespace {

// A constant feature would divide by zero; it is left unscaled (factor 1), as scikit-learn does.
float safe_inverse(double spread) {
  return spread > 0 ? static_cast<float>(1.0 / spread) : 1.0f;
}

void fit_standard(const Dataset& train, FeatureScaler& scaler) {
  const int64_t width = train.feature_count();
  for (int64_t f = 0; f < width; ++f) {
    double sum = 0;
    for (int64_t i = 0; i < train.sample_count; ++i)
      sum += static_cast<double>(train.features[i * width + f]);
    const double mean = sum / static_cast<double>(train.sample_count);
    double squares = 0;
    for (int64_t i = 0; i < train.sample_count; ++i) {
      const double d = static_cast<double>(train.features[i * width + f]) - mean;
      squares += d * d;
    }
    scaler.offset[f] = static_cast<float>(mean);
    scaler.factor[f] = safe_inverse(std::sqrt(squares / static_cast<double>(train.sample_count)));
  }
}

void fit_min_max(const Dataset& train, FeatureScaler& scaler) {
  const int64_t width = train.feature_count();
  for (int64_t f = 0; f < width; ++f) {
    float low = train.features[f];
    float high = low;
    for (int64_t i = 1; i < train.sample_count; ++i) {
      low = std::min(low, train.features[i * width + f]);
      high = std::max(high, train.features[i * width + f]);
    }
    scaler.offset[f] = low;
    scaler.factor[f] = safe_inverse(static_cast<double>(high) - static_cast<double>(low));
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
  FeatureScaler scaler;
  scaler.mode = mode;
  if (mode == ScaleMode::kNone) return scaler;
  if (train.sample_count == 0) {
    return invalid_argument("cannot fit " + std::string(scale_mode_name(mode)) +
                            " scaling on an empty training split");
  }
  const auto width = static_cast<size_t>(train.feature_count());
  scaler.offset.assign(width, 0.0f);
  scaler.factor.assign(width, 1.0f);
  switch (mode) {
    case ScaleMode::kStandard:
      fit_standard(train, scaler);
      break;
    case ScaleMode::kMinMax:
      fit_min_max(train, scaler);
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

Status FeatureScaler::apply(Dataset& data) const {
  if (mode == ScaleMode::kNone) return ok_status();
  const int64_t width = data.feature_count();
  if (static_cast<size_t>(width) != factor.size()) {
    return invalid_argument("the scaler was fitted on " + std::to_string(factor.size()) +
                            " features, but " + data.name + " has " + std::to_string(width));
  }
  for (int64_t i = 0; i < data.sample_count; ++i) {
    float* row = data.features.data() + i * width;
    for (int64_t f = 0; f < width; ++f) row[f] = (row[f] - offset[f]) * factor[f];
  }
  return ok_status();
}

}  // namespace switchyard
