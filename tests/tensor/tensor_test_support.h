// Helpers for the tensor and nn tests: one reference device per test process, and value checks.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <vector>

#include "switchyard/device.h"
#include "switchyard/tensor.h"
#include "test_support.h"

namespace switchyard::testing {

// The reference device, created once per process (creating one loads the plugin).
inline const std::shared_ptr<Device>& test_device() {
  static const std::shared_ptr<Device> device = reference_device();
  return device;
}

inline Tensor tensor_of(const std::vector<float>& values, const Shape& shape) {
  return Tensor::from_host(values, shape, test_device());
}

// Every element within `margin` of the expectation.
inline void check_values(const Tensor& tensor, const std::vector<float>& expected,
                         double margin = 1e-5) {
  const std::vector<float> got = tensor.to_host_float();
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == Approx(expected[i]).margin(margin));
  }
}

}  // namespace switchyard::testing
