// Which backends must be usable here, and what a test does with one that is not.
//
// SWITCHYARD_REQUIRE_BACKENDS (a comma-separated list, e.g. "reference,onednn,vulkan"; set by
// tools/test --require) names the backends that must be built and usable: a test that would skip
// one of them fails instead, with the reason. Without the variable, CI (CI=true) requires the CPU
// backends and Vulkan, which runs on lavapipe there; elsewhere nothing is required. CUDA is
// required only where tools/gpu-check runs: CI builds the cuda plugin but has no driver. An empty
// value requires nothing, CI or not.
//
// Every skip of a backend goes through skip_backend(), so that it reads "skipped <backend>:
// <reason>" and a required backend cannot skip.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "switchyard/device.h"
#include "switchyard/plugin.h"
#include "test_support.h"

namespace switchyard::testing {

inline constexpr const char* kCiRequiredBackends = "reference,onednn,vulkan";

// The required list as written, and where it came from (for the failure message).
struct RequiredBackends {
  std::vector<std::string> names;
  std::string source;  // "SWITCHYARD_REQUIRE_BACKENDS=..." or "CI=true (...)"; "" when none
};

inline RequiredBackends required_backends() {
  RequiredBackends required;
  std::string list;
  if (const char* named = std::getenv("SWITCHYARD_REQUIRE_BACKENDS"); named != nullptr) {
    list = named;
    required.source = "SWITCHYARD_REQUIRE_BACKENDS=" + list;
  } else if (const char* ci = std::getenv("CI"); ci != nullptr && std::string(ci) == "true") {
    list = kCiRequiredBackends;
    required.source = std::string("CI=true, which requires ") + kCiRequiredBackends;
  }
  std::istringstream items(list);
  for (std::string item; std::getline(items, item, ',');) {
    const size_t first = item.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    required.names.push_back(item.substr(first, item.find_last_not_of(" \t") - first + 1));
  }
  return required;
}

// Whether `backend` must be built and usable here, so that a missing one fails instead of skipping.
inline bool backend_required(const std::string& backend) {
  for (const std::string& name : required_backends().names) {
    if (name == backend) return true;
  }
  return false;
}

// For a test that cannot run on `backend` here: fails the test case (Catch2 FAIL, which ends it)
// with the reason when the backend is required, else warns "skipped <backend>: <reason>" and the
// caller returns or continues (Catch2 2 has no SKIP).
inline void skip_backend(const std::string& backend, const std::string& reason) {
  if (backend_required(backend)) {
    FAIL("backend " << backend << " is required here (" << required_backends().source
                    << ") but cannot run: " << reason);
  }
  WARN("skipped " << backend << ": " << reason);
}

// For a test (or the rest of one) that cannot run here for a reason that is not a backend (running
// as root, an optional peer such as python3-torch not installed): warns "skipped: <reason>" and the
// caller returns. tools/check-test-skips refuses a bare WARN-and-return in tests/, so that every
// skip goes through this or skip_backend and reads the same way.
inline void skip_test(const std::string& reason) {
  WARN("skipped: " << reason);
}

// Whether the build made `backend`'s plugin (SWITCHYARD_PLUGINS and the dependencies found at
// configure time decide).
inline bool plugin_built(const std::string& backend) {
  return std::filesystem::exists(plugin_file(backend));
}

// Why `backend`'s first device cannot be used in this process, or "" when it can; *device receives
// the device (created with `options`) when it can. "Not built" is a reason like any other: a
// required backend must be built too (tools/test --sanitize, which builds only the reference and
// template plugins, requires only the reference).
inline std::string device_or_reason(const std::string& backend, const OptionList& options,
                                    std::shared_ptr<Device>* device) {
  const std::string path = plugin_file(backend);
  if (!std::filesystem::exists(path)) {
    return "its plugin is not built (" + path + " is missing; see SWITCHYARD_PLUGINS)";
  }
  auto plugin = Plugin::load(path);
  if (!plugin.ok()) return plugin.status().to_string();
  auto count = (*plugin)->device_count();
  if (!count.ok()) return count.status().to_string();
  if (*count == 0) return "its plugin reports no device";
  auto created = Device::create(*plugin, 0, options);
  if (!created.ok()) return created.status().to_string();
  *device = *created;
  return "";
}

// The backend's first device, or nullptr (after skip_backend: "skipped <backend>: <reason>" in the
// test's output, or a failure when the backend is required) when its plugin is not built or has no
// usable device here.
inline std::shared_ptr<Device> optional_device(const std::string& backend,
                                               const OptionList& options = {}) {
  std::shared_ptr<Device> device;
  const std::string reason = device_or_reason(backend, options, &device);
  if (device == nullptr) skip_backend(backend, reason);
  return device;
}

}  // namespace switchyard::testing
