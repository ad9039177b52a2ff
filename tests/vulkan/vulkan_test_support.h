// Helpers for the Vulkan plugin's tests: the Vulkan device (with validation layers), and tensors
// that are written to and read from any device, so that one op can be run on Vulkan and on the
// reference plugin and compared.
//
// With validation on, the plugin fails any call during which the validation layer reported an
// error or a warning, so every OK status in these tests also asserts "no validation message".
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backend_support.h"
#include "device_tensor.h"
#include "support/dtype_codec.h"
#include "switchyard/buffer.h"
#include "switchyard/device.h"
#include "switchyard/plugin.h"
#include "switchyard/queue.h"
#include "test_support.h"

namespace switchyard::vulkan_test {

using Shape = std::vector<int64_t>;
using testing::DeviceTensor;
using testing::download;
using testing::element_count;
using testing::enqueue;
using testing::upload;
using testing::zero_params;

// Validation on, unless SWITCHYARD_TEST_VULKAN_VALIDATION=0: gpu-check runs some of these tests on
// a GPU machine that has no validation layer.
inline const OptionList& validation_on() {
  static const OptionList options = [] {
    const char* wanted = std::getenv("SWITCHYARD_TEST_VULKAN_VALIDATION");
    const bool on = wanted == nullptr || std::string(wanted) != "0";
    return OptionList{{"validation", on ? "true" : "false"}};
  }();
  return options;
}

// The Vulkan plugin, or null with the reason (not built, no loader, no device); callers pass the
// reason to testing::skip_backend.
inline std::shared_ptr<Plugin> vulkan_plugin(std::string* reason) {
  Result<std::shared_ptr<Plugin>> plugin = Plugin::load(testing::plugin_file("vulkan"));
  if (!plugin.ok()) {
    *reason = plugin.status().to_string();
    return nullptr;
  }
  Result<uint32_t> count = (*plugin)->device_count();
  if (!count.ok() || *count == 0) {
    *reason = count.ok() ? "no Vulkan device" : count.status().to_string();
    return nullptr;
  }
  return *plugin;
}

// Device 0 of the Vulkan plugin with `options`, or null ("skipped vulkan: <reason>"): tests then
// stop early, as Catch2 2 has no SKIP. Where vulkan is required (CI: tests/backend_support.h) a
// missing device fails the test instead.
inline std::shared_ptr<Device> vulkan_device(const OptionList& options = validation_on()) {
  std::string reason;
  std::shared_ptr<Plugin> plugin = vulkan_plugin(&reason);
  if (plugin == nullptr) {
    testing::skip_backend("vulkan", reason);
    return nullptr;
  }
  return value_or_throw(Device::create(plugin, 0, options));
}

inline DeviceTensor zeros(Device& device, sy_dtype dtype, const Shape& shape) {
  return upload(device, dtype, shape, std::vector<double>(element_count(shape), 0.0));
}

// Deterministic values in [-scale, scale) that differ from element to element.
inline std::vector<double> wavy_values(int64_t count, double phase, double scale = 1.0) {
  std::vector<double> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    values[i] = scale * std::sin(0.731 * static_cast<double>(i) + phase);
  }
  return values;
}

// Every element agrees within `tolerance` relative to max(1, |expected|).
inline void require_close(const std::vector<double>& actual, const std::vector<double>& expected,
                          double tolerance) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("element " << i << ": " << actual[i] << " vs " << expected[i]);
    REQUIRE(std::fabs(actual[i] - expected[i]) <=
            tolerance * std::max(1.0, std::fabs(expected[i])));
  }
}

}  // namespace switchyard::vulkan_test
