// Embedding: the C++ API honours the SWITCHYARD_* variables unless the host opts out, and one
// umbrella header carries the public API (this file includes nothing else of switchyard's).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "config/config_test_support.h"
#include "switchyard/switchyard.hpp"

using switchyard::testing::ScopedEnvironment;

namespace {

// The list nodriver (a fixture plugin without a driver), reference; nothing from the environment
// but what each test sets.
switchyard::RuntimeSettings nodriver_then_reference() {
  switchyard::RuntimeSettings settings;
  settings.backends = {"nodriver", "reference"};
  settings.backends_from_config = true;
  settings.plugin_paths = {SWITCHYARD_TEST_FIXTURE_DIR "/wrong", SWITCHYARD_TEST_PLUGIN_DIR};
  return settings;
}

}  // namespace

TEST_CASE("open_run_device applies SWITCHYARD_BACKENDS by default and says so", "[environment]") {
  ScopedEnvironment no_path("SWITCHYARD_PLUGIN_PATH", std::nullopt);
  ScopedEnvironment backends("SWITCHYARD_BACKENDS", "reference");
  const auto run = switchyard::open_run_device(nodriver_then_reference());
  INFO(run.status().message());
  REQUIRE(run.ok());
  CHECK(run->device->id() == "reference:0");
  CHECK(run->fallback_note.empty());  // reference was the first choice of the environment's list
  CHECK(run->environment == std::vector<std::string>{"SWITCHYARD_BACKENDS=reference"});
}

TEST_CASE("use_environment = false keeps the host's own settings", "[environment]") {
  ScopedEnvironment no_path("SWITCHYARD_PLUGIN_PATH", std::nullopt);
  ScopedEnvironment backends("SWITCHYARD_BACKENDS", "reference");
  ScopedEnvironment fallback("SWITCHYARD_FALLBACK", "error");
  switchyard::RuntimeSettings settings = nodriver_then_reference();
  settings.use_environment = false;
  const auto run = switchyard::open_run_device(settings);
  INFO(run.status().message());
  REQUIRE(run.ok());
  CHECK(run->device->id() == "reference:0");
  CHECK(run->fallback_note == "using reference:0 (nodriver: no driver)");
  CHECK(run->environment.empty());
}

TEST_CASE("select_device applies the environment too; a bad variable is named", "[environment]") {
  ScopedEnvironment no_path("SWITCHYARD_PLUGIN_PATH", std::nullopt);
  const switchyard::RuntimeSettings settings = nodriver_then_reference();
  switchyard::Registry registry =
      switchyard::Registry::discover(switchyard::plugin_search_path(settings.plugin_paths));
  {
    ScopedEnvironment fallback("SWITCHYARD_FALLBACK", "error");
    const auto selection = switchyard::select_device(registry, settings);
    REQUIRE_FALSE(selection.ok());
    CHECK(selection.status().message() ==
          "using reference:0 (reference (plain C++)) instead of a higher-priority backend. "
          "Skipped: nodriver: device_count: libfixture-driver.so.1: cannot open shared object "
          "file (fixture) (fallback: error)");
  }
  ScopedEnvironment device("SWITCHYARD_DEVICE", "gpu");
  const auto run = switchyard::open_run_device(settings);
  REQUIRE(run.status().code() == switchyard::StatusCode::kInvalidArgument);
  CHECK(run.status().message() ==
        "SWITCHYARD_DEVICE='gpu': unknown backend 'gpu' in device 'gpu', expected auto, cpu, "
        "<backend> or <backend>:<index>, where <backend> is one of: reference, onednn, vulkan, "
        "cuda, template, nodriver, wrongmath");
}

TEST_CASE("switchyard.hpp includes every public header but the C ABIs", "[environment]") {
  const std::filesystem::path folder = SWITCHYARD_SOURCE_DIR "/core/include/switchyard";
  std::ifstream file(folder / "switchyard.hpp");
  const std::string umbrella{std::istreambuf_iterator<char>(file), {}};
  std::vector<std::string> missing;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    // The C ABIs (plugin_abi.h, communicator_abi.h) are what libraries build against.
    const bool abi = name.size() > 6 && name.compare(name.size() - 6, 6, "_abi.h") == 0;
    if (entry.path().extension() != ".h" || abi) continue;
    if (umbrella.find("#include \"switchyard/" + name + "\"") == std::string::npos) {
      missing.push_back(name);
    }
  }
  CHECK(missing.empty());
}
