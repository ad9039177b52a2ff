// Devices of the backends built here, for tests that run the same model code on each.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "switchyard/device.h"
#include "switchyard/plugin.h"
#include "test_support.h"

namespace switchyard::testing {

// The backend's first device, or nullptr when its plugin is not built or has no usable device
// here. Under CI (CI set in the environment) a backend whose plugin was built must be usable:
// CI runs Vulkan on lavapipe, so a missing device there is a failure, not a skip.
inline std::shared_ptr<Device> optional_device(const std::string& backend) {
  const std::string path = plugin_file(backend);
  if (!std::filesystem::exists(path)) return nullptr;
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
  const char* ci = std::getenv("CI");
  if (device == nullptr && ci != nullptr && std::string(ci) == "true") {
    FAIL("backend " << backend << " is built but not usable under CI: " << reason);
  }
  return device;
}

}  // namespace switchyard::testing
