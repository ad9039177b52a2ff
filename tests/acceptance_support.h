// Training a shipped configuration through the CLI on one backend, as a user runs it, for the
// acceptance tests of tests/cli (the CPU backends) and tests/vulkan (lavapipe: CTest tests of their
// own, so that CI runs their long trainings beside test_cli's).
#pragma once

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <string>

#include "backend_support.h"
#include "json_test_support.h"
#include "test_support.h"

namespace switchyard::testing {

// "" when the CLI finds `backend`:0 usable (`switchyard devices --json`), else why not: the plugin
// is not built, or the reason the device listing gives.
inline std::string backend_unusable_reason(const std::string& backend) {
  if (!plugin_built(backend)) {
    return "its plugin is not built (" + plugin_file(backend) +
           " is missing; see SWITCHYARD_PLUGINS)";
  }
  auto result = run_command("SWITCHYARD_BACKENDS=" + backend + " " + cli() + " devices --json");
  const Json devices = parse_json(result.output);
  if (const Json* device = entry_with(devices, "id", backend + ":0")) {
    if (device->at("usable").get<bool>()) return "";
    return backend + ":0 is not usable here: " + device->at("reason").get<std::string>();
  }
  // A plugin without devices is listed under its own name, with its reason.
  if (const Json* plugin = entry_with(devices, "id", backend)) {
    return plugin->at("reason").get<std::string>();
  }
  return "switchyard devices lists no " + backend + " device: " + result.output;
}

// True when the CLI can train on `backend` here; otherwise false after skip_backend, which warns
// "skipped <backend>: <reason>", or fails the test where the backend is required.
inline bool cli_backend_usable(const std::string& backend) {
  const std::string why = backend_unusable_reason(backend);
  if (why.empty()) return true;
  skip_backend(backend, why);
  return false;
}

// Trains configs/<config> on `backend` with `overrides` (more --set options), without a checkpoint
// and with fallbacks as errors; requires success and no fallback op, and returns the --metrics
// JSON. `output` receives what the run printed.
inline Json train_config_on(const std::string& backend, const std::string& config,
                            const std::string& overrides, std::string* output = nullptr) {
  // One file per process and backend: test_cli and the vulkan_acceptance_* tests run at once
  // under ctest -j.
  const std::string metrics =
      "/tmp/switchyard-acceptance-" + std::to_string(::getpid()) + "-" + backend + ".json";
  std::remove(metrics.c_str());
  const std::string command = "SWITCHYARD_BACKENDS=" + backend + " SWITCHYARD_FALLBACK=error " +
                              cli() + " run " + SWITCHYARD_SOURCE_DIR "/configs/" + config +
                              " --set train.checkpoint=none --set train.progress=log " + overrides +
                              " --metrics " + metrics;
  auto result = run_command(command);
  INFO(command << "\n" << result.output);
  REQUIRE(result.exit_code == 0);
  if (output != nullptr) *output = result.output;
  const Json json = read_json_file(metrics);
  CHECK(json.at("backend") == backend);
  CHECK(json.at("fallback_ops") == 0);
  return json;
}

// A baseline's test figures ("last_value", "linear_least_squares") from the metrics JSON.
inline const Json& baseline_figures(const Json& metrics, const std::string& name) {
  const Json* entry = entry_with(metrics.at("baselines"), "name", name);
  REQUIRE(entry != nullptr);
  return entry->at("test");
}

}  // namespace switchyard::testing
