#include <catch2/catch.hpp>

#include "switchyard/plugin.h"
#include "switchyard/registry.h"
#include "test_support.h"

using namespace switchyard;

namespace {

DeviceRecord device(const std::string& backend, uint32_t index, DeviceType type, bool usable,
                    uint64_t free_bytes = 0) {
  DeviceRecord d;
  d.info.backend = backend;
  d.info.index = index;
  d.info.name = backend + " device " + std::to_string(index);
  d.info.type = type;
  d.info.memory_free_bytes = free_bytes;
  d.usable = usable;
  if (!usable) d.reason = backend + " is broken in this test";
  return d;
}

PluginRecord plugin(const std::string& name, PluginState state, const std::string& reason = "") {
  PluginRecord p;
  p.name = name;
  p.state = state;
  p.reason = reason;
  return p;
}

// This machine: cuda built but without a driver, vulkan on lavapipe only, onednn and reference.
struct CpuOnlyMachine {
  std::vector<DeviceRecord> devices = {
      device("vulkan", 0, DeviceType::kEmulated, true),
      device("onednn", 0, DeviceType::kCpu, true),
      device("reference", 0, DeviceType::kCpu, true),
  };
  std::vector<PluginRecord> plugins = {
      plugin("cuda", PluginState::kUnusable, "libcuda.so.1: cannot open shared object file"),
      plugin("vulkan", PluginState::kUsable), plugin("onednn", PluginState::kUsable),
      plugin("reference", PluginState::kUsable)};
};

std::string chosen_id(const std::vector<DeviceRecord>& devices, const Result<Choice>& choice) {
  REQUIRE(choice.ok());
  REQUIRE(choice->index >= 0);
  return devices[choice->index].info.id();
}

}  // namespace

TEST_CASE("auto skips an emulated device while a real one is usable", "[selection]") {
  CpuOnlyMachine m;
  RuntimeSettings settings;  // default list: cuda, vulkan, onednn, reference
  auto choice = choose_device(m.devices, m.plugins, settings);
  CHECK(chosen_id(m.devices, choice) == "onednn:0");
  CHECK_FALSE(choice->first_choice);
  // One short line: the full reasons are for `doctor` and `devices`.
  CHECK(choice->fallback_note ==
        "using onednn:0 (cuda: no driver; vulkan: only an emulated device)");
  CHECK(choice->warnings.empty());
}

TEST_CASE("the fallback note says in a few words why each backend was skipped", "[selection]") {
  std::vector<DeviceRecord> devices = {
      device("vulkan", 0, DeviceType::kGpu, false), device("vulkan", 1, DeviceType::kGpu, false),
      device("other", 0, DeviceType::kEmulated, true),
      device("other", 1, DeviceType::kEmulated, true), device("onednn", 0, DeviceType::kCpu, true)};
  std::vector<PluginRecord> plugins = {
      plugin("cuda", PluginState::kUnusable, "no devices found"),
      plugin("broken", PluginState::kRejected, "undefined symbol: foo"),
      plugin("odd", PluginState::kUnusable, "device_count: the service is down"),
      plugin("vulkan", PluginState::kUnusable, "no device passed the probe"),
      plugin("other", PluginState::kUsable),
      plugin("onednn", PluginState::kUsable)};
  RuntimeSettings settings;
  settings.backends = {"cuda", "broken", "odd", "absent", "vulkan", "other", "onednn"};
  settings.backends_from_config = true;
  auto choice = choose_device(devices, plugins, settings);
  CHECK(chosen_id(devices, choice) == "onednn:0");
  CHECK(choice->fallback_note ==
        "using onednn:0 (cuda: no device; broken: plugin not loaded; odd: unavailable; absent: no "
        "plugin; vulkan: its devices failed the probe; other: only emulated devices)");
}

TEST_CASE("naming the emulated device picks it", "[selection]") {
  CpuOnlyMachine m;
  RuntimeSettings settings;
  settings.device = "vulkan:0";
  auto choice = choose_device(m.devices, m.plugins, settings);
  CHECK(chosen_id(m.devices, choice) == "vulkan:0");
  CHECK(choice->warnings.empty());
}

TEST_CASE("auto takes an emulated device when nothing real is usable", "[selection]") {
  std::vector<DeviceRecord> devices = {device("vulkan", 0, DeviceType::kEmulated, true),
                                       device("onednn", 0, DeviceType::kCpu, false)};
  RuntimeSettings settings;
  settings.backends = {"vulkan", "onednn"};
  settings.backends_from_config = true;
  auto choice = choose_device(devices, {}, settings);
  CHECK(chosen_id(devices, choice) == "vulkan:0");
}

TEST_CASE("fallback: error turns a fallback into an error that says why", "[selection]") {
  CpuOnlyMachine m;
  RuntimeSettings settings;
  settings.fallback = FallbackPolicy::kError;
  auto choice = choose_device(m.devices, m.plugins, settings);
  REQUIRE_FALSE(choice.ok());
  CHECK(choice.status().message() ==
        "using onednn:0 (onednn device 0) instead of a higher-priority backend. Skipped: cuda: "
        "libcuda.so.1: cannot open shared object file; vulkan: vulkan:0 (vulkan device 0): "
        "emulated device, ranked below real ones (fallback: error)");
}

TEST_CASE("fallback: silent falls back without a warning", "[selection]") {
  CpuOnlyMachine m;
  RuntimeSettings settings;
  settings.fallback = FallbackPolicy::kSilent;
  auto choice = choose_device(m.devices, m.plugins, settings);
  CHECK(chosen_id(m.devices, choice) == "onednn:0");
  CHECK(choice->warnings.empty());
  CHECK(choice->fallback_note.empty());
}

TEST_CASE("most_free_memory picks the GPU with the most free memory", "[selection]") {
  std::vector<DeviceRecord> devices = {device("cuda", 0, DeviceType::kGpu, true, 10),
                                       device("cuda", 1, DeviceType::kGpu, true, 30),
                                       device("cuda", 2, DeviceType::kGpu, true, 20)};
  RuntimeSettings settings;
  settings.backends = {"cuda"};
  settings.backends_from_config = true;
  CHECK(chosen_id(devices, choose_device(devices, {}, settings)) == "cuda:0");
  settings.device_policy = DevicePolicy::kMostFreeMemory;
  CHECK(chosen_id(devices, choose_device(devices, {}, settings)) == "cuda:1");
}

TEST_CASE("local_rank gives each process on a machine its own GPU", "[selection]") {
  std::vector<DeviceRecord> devices = {
      device("cuda", 0, DeviceType::kGpu, true), device("cuda", 1, DeviceType::kGpu, false),
      device("cuda", 2, DeviceType::kGpu, true), device("cuda", 3, DeviceType::kGpu, true)};
  RuntimeSettings settings;
  settings.backends = {"cuda"};
  settings.backends_from_config = true;
  settings.device_policy = DevicePolicy::kLocalRank;
  settings.local_rank = {1, "LOCAL_RANK"};
  auto choice = choose_device(devices, {}, settings);
  CHECK(chosen_id(devices, choice) == "cuda:2");  // the second usable device: cuda:1 is broken
  CHECK(choice->note ==
        "device_policy local_rank: local rank 1 (from LOCAL_RANK) -> cuda:2, one of 3 usable "
        "cuda devices");
  settings.local_rank = {4, "OMPI_COMM_WORLD_LOCAL_RANK"};  // more ranks than devices: they share
  choice = choose_device(devices, {}, settings);
  CHECK(chosen_id(devices, choice) == "cuda:2");
  CHECK(choice->note.find("ranks share devices") != std::string::npos);
  settings.local_rank = {};  // no launcher variable: rank 0, and the note says so
  choice = choose_device(devices, {}, settings);
  CHECK(chosen_id(devices, choice) == "cuda:0");
  CHECK(choice->note.find("local rank 0 (no rank variable set)") != std::string::npos);
  settings.device = "cuda:3";  // naming a device wins over the policy
  choice = choose_device(devices, {}, settings);
  CHECK(chosen_id(devices, choice) == "cuda:3");
  CHECK(choice->note.empty());
}

TEST_CASE("cpu picks the first listed backend with a CPU device", "[selection]") {
  CpuOnlyMachine m;
  RuntimeSettings settings;
  settings.device = "cpu";
  settings.backends = {"reference", "onednn"};
  settings.backends_from_config = true;
  CHECK(chosen_id(m.devices, choose_device(m.devices, m.plugins, settings)) == "reference:0");
}

TEST_CASE("an unusable named device falls back with a warning, or fails with error",
          "[selection]") {
  CpuOnlyMachine m;
  RuntimeSettings settings;
  settings.device = "cuda:0";
  auto choice = choose_device(m.devices, m.plugins, settings);
  CHECK(chosen_id(m.devices, choice) == "onednn:0");
  REQUIRE(choice->warnings.size() == 1);
  CHECK(choice->warnings[0].find("device 'cuda:0' is not usable") != std::string::npos);
  settings.fallback = FallbackPolicy::kError;
  CHECK(choose_device(m.devices, m.plugins, settings).status().code() == StatusCode::kUnavailable);
}

TEST_CASE("nothing usable is an error listing each backend's reason", "[selection]") {
  std::vector<DeviceRecord> devices = {device("onednn", 0, DeviceType::kCpu, false)};
  RuntimeSettings settings;
  settings.backends = {"cuda", "onednn"};
  settings.backends_from_config = true;
  auto choice = choose_device(devices, {}, settings);
  REQUIRE_FALSE(choice.ok());
  CHECK(choice.status().message().find("onednn is broken in this test") != std::string::npos);
  CHECK(choice.status().message().find("no plugin named 'cuda'") != std::string::npos);
}

TEST_CASE("a malformed device string is rejected", "[selection]") {
  RuntimeSettings settings;
  settings.device = "cuda:x";
  CHECK(choose_device({}, {}, settings).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("a device that is its own fallback is freed with its last owner", "[selection]") {
  // The oracle chosen as the run's device is also its fallback; an owning pointer to itself was a
  // cycle that kept the device and its memory pool alive until exit.
  std::weak_ptr<Device> watch;
  {
    auto plugin = Plugin::load(switchyard::testing::plugin_file("reference"));
    REQUIRE(plugin.ok());
    auto device = Device::create(*plugin, 0, {});
    REQUIRE(device.ok());
    (*device)->set_fallback(FallbackPolicy::kWarn, *device);
    CHECK((*device)->fallback_device() == *device);
    watch = *device;
  }
  CHECK(watch.expired());
}
