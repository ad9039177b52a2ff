// Helpers for the tests that hold a fused op against the composed path it replaces.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "switchyard/profile.h"
#include "switchyard/tensor.h"

namespace switchyard::testing {

// The largest |a - b| over two tensors of one shape.
inline double max_abs_difference(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  const std::vector<float> x = a.to_host_float();
  const std::vector<float> y = b.to_host_float();
  double worst = 0.0;
  for (size_t k = 0; k < x.size(); ++k) {
    worst = std::max(worst, std::abs(static_cast<double>(x[k]) - static_cast<double>(y[k])));
  }
  return worst;
}

// The names of the profile spans `run` opened: which path each fused op took.
template <typename Run>
std::vector<std::string> spans_of(Run&& run) {
  Profiler profiler;
  {
    ProfileScope scope(profiler);
    run();
  }
  std::vector<std::string> names;
  for (const SpanRecord& span : profiler.span_records()) names.push_back(span.name);
  return names;
}

}  // namespace switchyard::testing
