#include "conformance/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "support/dtype_codec.h"

namespace switchyard::conformance {
namespace {

std::string describe_element(size_t index, double target, double reference) {
  std::ostringstream text;
  text.precision(9);
  text << "element " << index << ": target " << target << ", reference " << reference;
  return text.str();
}

bool same_non_finite(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b;  // both infinite with the same sign
}

Comparison compare_integers(const std::vector<double>& target,
                            const std::vector<double>& reference) {
  Comparison result;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] != reference[i]) {
      result.nmse = 1.0;
      result.within_tolerance = false;
      result.problem = "integer mismatch at " + describe_element(i, target[i], reference[i]);
      return result;
    }
  }
  return result;
}

std::string format_nmse(double nmse, double tolerance) {
  std::ostringstream text;
  text.precision(3);
  text << "NMSE " << nmse << " > tolerance " << tolerance;
  return text.str();
}

}  // namespace

Comparison compare_tensors(const HostTensor& target, const HostTensor& reference,
                           double tolerance) {
  const std::vector<double> t = target.logical_values();
  const std::vector<double> r = reference.logical_values();
  if (t.size() != r.size()) {
    return {
        1.0, false,
        "element counts differ: " + std::to_string(t.size()) + " vs " + std::to_string(r.size())};
  }
  if (!is_floating(reference.dtype)) return compare_integers(t, r);
  Comparison result;
  double error_sum = 0.0;
  double reference_sum = 0.0;
  size_t worst_index = 0;
  double worst_error = -1.0;
  for (size_t i = 0; i < t.size(); ++i) {
    const bool finite = std::isfinite(t[i]) && std::isfinite(r[i]);
    if (!finite) {
      if (same_non_finite(t[i], r[i])) continue;
      return {std::numeric_limits<double>::infinity(), false,
              "NaN/inf position differs at " + describe_element(i, t[i], r[i])};
    }
    const double error = (t[i] - r[i]) * (t[i] - r[i]);
    error_sum += error;
    reference_sum += r[i] * r[i];
    if (error > worst_error) {
      worst_error = error;
      worst_index = i;
    }
  }
  result.nmse = reference_sum > 0.0 ? error_sum / reference_sum : error_sum;
  result.within_tolerance = result.nmse <= tolerance;
  if (!result.within_tolerance) {
    result.problem = format_nmse(result.nmse, tolerance) + "; worst " +
                     describe_element(worst_index, t[worst_index], r[worst_index]);
  }
  return result;
}

Comparison check_normal_element_bound(const HostTensor& target, const HostTensor& reference,
                                      double mean, double stddev) {
  const std::vector<double> t = target.logical_values();
  const std::vector<double> r = reference.logical_values();
  Comparison result;
  for (size_t i = 0; i < t.size() && i < r.size(); ++i) {
    const double z = stddev != 0.0 ? (r[i] - mean) / stddev : 0.0;
    const double bound = 1e-6 * (std::fabs(mean) + std::fabs(stddev) * std::max(1.0, std::fabs(z)));
    if (!(std::fabs(t[i] - r[i]) <= bound)) {
      result.within_tolerance = false;
      result.problem =
          "normal sample outside the per-element bound at " + describe_element(i, t[i], r[i]);
      return result;
    }
  }
  return result;
}

Comparison check_outside_view_unchanged(const HostTensor& before, const HostTensor& after) {
  std::vector<bool> in_view(before.storage.size(), false);
  for (int64_t offset : before.logical_offsets()) in_view[static_cast<size_t>(offset)] = true;
  Comparison result;
  for (size_t i = 0; i < before.storage.size() && i < after.storage.size(); ++i) {
    if (in_view[i]) continue;
    const double old_value = before.storage[i];
    const double new_value = after.storage[i];
    if (old_value == new_value || (std::isnan(old_value) && std::isnan(new_value))) continue;
    result.within_tolerance = false;
    result.problem = "wrote outside its view: storage " +
                     describe_element(i, new_value, old_value) + " (target value, original value)";
    return result;
  }
  return result;
}

}  // namespace switchyard::conformance
