// Devices of the backends built here, for tests that run the same model code on each.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>

#include "switchyard/device.h"
#include "switchyard/plugin.h"
#include "test_support.h"

namespace switchyard::testing {

// Whether a built backend must have a usable device here, so that a missing one fails instead of
// skipping. SWITCHYARD_REQUIRED_BACKENDS (a comma-separated list) says which; without it, CI
// (CI=true) requires the CPU backends and Vulkan, which runs on lavapipe there. CUDA is required
// only where tools/gpu-check runs: CI builds the cuda plugin but has no driver.
inline bool backend_required(const std::string& backend) {
  std::string list;
  if (const char* named = std::getenv("SWITCHYARD_REQUIRED_BACKENDS"); named != nullptr) {
    list = named;
  } else if (const char* ci = std::getenv("CI"); ci != nullptr && std::string(ci) == "true") {
    list = "reference,onednn,vulkan";
  }
  std::istringstream items(list);
  for (std::string item; std::getline(items, item, ',');) {
    if (item == backend) return true;
  }
  return false;
}

// The backend's first device, or nullptr (with "skipped: reason" in the test's output) when its
// plugin is not built or has no usable device here; a backend_required one that is built but not
// usable fails the test instead.
inline std::shared_ptr<Device> optional_device(const std::string& backend) {
  const std::string path = plugin_file(backend);
  if (!std::filesystem::exists(path)) {
    WARN("skipped " << backend << ": its plugin is not built (SWITCHYARD_PLUGINS)");
    return nullptr;
  }
  std::string reason;
  std::shared_ptr<Device> device;
  auto plugin = Plugin::load(path);
  if (!plugin.ok()) {
    reason = plugin.status().to_string();
  } else if (auto count = (*plugin)->device_count(); !count.ok() || *count == 0) {
    reason = count.ok() ? "no device" : count.status().to_string();
  } else if (auto created = Device::create(*plugin, 0); created.ok()) {
    device = *created;
  } else {
    reason = created.status().to_string();
  }
  if (device == nullptr && backend_required(backend)) {
    FAIL("backend " << backend << " is built but not usable, and it is required here: " << reason);
  }
  if (device == nullptr) WARN("skipped " << backend << ": " << reason);
  return device;
}

}  // namespace switchyard::testing
