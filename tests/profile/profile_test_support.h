// Helpers for the profiler tests: the reference device and the twin fixture device.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "switchyard/device.h"
#include "switchyard/plugin.h"
#include "test_support.h"

namespace switchyard::testing {

// The reference device, created once per process (creating one loads the plugin).
inline const std::shared_ptr<Device>& profile_device() {
  static const std::shared_ptr<Device> device = value_or_throw(Device::create(
      value_or_throw(
          Plugin::load(std::string(SWITCHYARD_TEST_PLUGIN_DIR) + "/libswitchyard-reference.so")),
      0));
  return device;
}

// The "twin" fixture device, which supports only f32 add and matmul; null when not built.
inline std::shared_ptr<Device> twin_device() {
  const std::string path = fixture_dir("twin-a") + "/libswitchyard-twin.so";
  if (!std::filesystem::exists(path)) return nullptr;
  return value_or_throw(Device::create(value_or_throw(Plugin::load(path)), 0));
}

}  // namespace switchyard::testing
