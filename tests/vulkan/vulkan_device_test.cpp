// The Vulkan plugin's devices: what it reports, the options it accepts, and how it says that
// Vulkan is missing.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "switchyard/plugin.h"
#include "vulkan_test_support.h"

namespace switchyard {
namespace {

using vulkan_test::vulkan_device;
using vulkan_test::vulkan_plugin;

// The Vulkan plugin, or null after saying "skipped vulkan: <reason>" (testing::skip_backend).
std::shared_ptr<Plugin> plugin_or_skip() {
  std::string reason;
  std::shared_ptr<Plugin> plugin = vulkan_plugin(&reason);
  if (plugin == nullptr) testing::skip_backend("vulkan", reason);
  return plugin;
}

TEST_CASE("vulkan: devices report name, type, driver and device-local memory", "[vulkan]") {
  std::shared_ptr<Plugin> plugin = plugin_or_skip();
  if (plugin == nullptr) return;
  const uint32_t count = value_or_throw(plugin->device_count());
  REQUIRE(count >= 1);
  for (uint32_t index = 0; index < count; ++index) {
    const DeviceInfo info = value_or_throw(plugin->device_info(index));
    INFO(info.name << " / " << info.driver_version << " / " << info.details);
    CHECK_FALSE(info.name.empty());
    CHECK_FALSE(info.vendor.empty());
    CHECK_FALSE(info.driver_version.empty());
    CHECK(info.runtime_version.rfind("Vulkan 1.", 0) == 0);
    CHECK(info.memory_total_bytes > 0);
    CHECK(info.uuid.size() == 32);
    // lavapipe and SwiftShader are software: they must never pass for a GPU.
    if (info.name.find("llvmpipe") != std::string::npos ||
        info.name.find("SwiftShader") != std::string::npos) {
      CHECK(info.type == DeviceType::kEmulated);
    }
  }
}

TEST_CASE("vulkan: an unknown option is INVALID_ARGUMENT naming the key", "[vulkan]") {
  std::shared_ptr<Plugin> plugin = plugin_or_skip();
  if (plugin == nullptr) return;
  Result<std::shared_ptr<Device>> device = Device::create(plugin, 0, {{"threads", "4"}});
  REQUIRE_FALSE(device.ok());
  CHECK(device.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(device.status().message(), Catch::Contains("'threads'"));
}

TEST_CASE("vulkan: malformed option values are INVALID_ARGUMENT naming key and value", "[vulkan]") {
  std::shared_ptr<Plugin> plugin = plugin_or_skip();
  if (plugin == nullptr) return;
  const OptionList cases[] = {{{"validation", "maybe"}},
                              {{"memory_limit_bytes", "-5"}},
                              {{"memory_fraction", "1.5"}},
                              {{"cooperative_matrix", "sometimes"}}};
  for (const OptionList& options : cases) {
    Result<std::shared_ptr<Device>> device = Device::create(plugin, 0, options);
    REQUIRE_FALSE(device.ok());
    CHECK(device.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(device.status().message(),
               Catch::Contains(options[0].first) && Catch::Contains(options[0].second));
  }
}

TEST_CASE("vulkan: f32 supports every op; 16-bit follows the device", "[vulkan]") {
  std::shared_ptr<Device> device = vulkan_device();
  if (device == nullptr) return;
  for (uint32_t op = 0; op < SY_OP_COUNT; ++op) {
    INFO("op " << op);
    CHECK(device->supports(static_cast<sy_op>(op), SY_DTYPE_F32));
  }

  const bool f16 = device->info().details.find("f16 yes") != std::string::npos;
  CHECK(device->supports(SY_OP_MATMUL, SY_DTYPE_F16) == f16);
  CHECK(device->supports(SY_OP_LSTM_SEQUENCE, SY_DTYPE_F16) == f16);
  CHECK(device->supports(SY_OP_COPY, SY_DTYPE_I64));
  CHECK(device->supports(SY_OP_GATHER, SY_DTYPE_I32));
  CHECK_FALSE(device->supports(SY_OP_MATMUL, SY_DTYPE_I32));
  CHECK_FALSE(device->supports(static_cast<sy_op>(SY_OP_COUNT), SY_DTYPE_F32));
}

// The tensor-core path (gemm_coopmat.glsl): where the device lists an f16 x f16 -> f32 shape the
// shader has and the other things it needs, `auto` and `on` use it and say which shape in the
// settings line; elsewhere (lavapipe) `on` is UNAVAILABLE naming the option and the reason, and
// `auto` runs without it. `off` never uses it.
TEST_CASE("vulkan: cooperative_matrix auto | on | off follows the device and says so", "[vulkan]") {
  std::shared_ptr<Plugin> plugin = plugin_or_skip();
  if (plugin == nullptr) return;
  const DeviceInfo info = value_or_throw(plugin->device_info(0));
  INFO(info.name << ": " << info.details);
  const bool listed = info.details.find("cooperative matrix f16->f32:") != std::string::npos;
  const bool used = info.details.find('*') != std::string::npos;
  CHECK((listed || info.details.find("cooperative matrix: none") != std::string::npos));
  CHECK((used || !listed || info.details.find("(unused: the device") != std::string::npos));

  std::shared_ptr<Device> automatic = value_or_throw(Device::create(plugin, 0, {}));
  const std::string settings = automatic->settings();
  INFO(settings);
  CHECK((settings.find("cooperative_matrix=off") == std::string::npos) == used);
  CHECK(settings.find("gemms_coopmat=0 gemms_shader=0") != std::string::npos);

  std::shared_ptr<Device> off =
      value_or_throw(Device::create(plugin, 0, {{"cooperative_matrix", "off"}}));
  CHECK(off->settings().find("cooperative_matrix=off") != std::string::npos);

  Result<std::shared_ptr<Device>> on = Device::create(plugin, 0, {{"cooperative_matrix", "on"}});
  if (used) {
    REQUIRE(on.ok());
    CHECK((*on)->settings().find("cooperative_matrix=off") == std::string::npos);
  } else {
    REQUIRE_FALSE(on.ok());
    CHECK(on.status().code() == StatusCode::kUnavailable);
    CHECK_THAT(on.status().message(),
               Catch::Contains("cooperative_matrix=on") && Catch::Contains(info.name));
  }
}

// Runs in a child process (see below), where SWITCHYARD_VULKAN_LOADER names a missing file.
TEST_CASE("vulkan child: device_count is UNAVAILABLE with the dlerror text",
          "[.vulkan-missing-loader-child]") {
  const char* loader = std::getenv("SWITCHYARD_VULKAN_LOADER");
  REQUIRE(loader != nullptr);
  std::shared_ptr<Plugin> plugin = value_or_throw(Plugin::load(testing::plugin_file("vulkan")));
  Result<uint32_t> count = plugin->device_count();
  REQUIRE_FALSE(count.ok());
  CHECK(count.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(count.status().message(),
             Catch::Contains(loader) && Catch::Contains("No such file or directory"));
}

TEST_CASE("vulkan: the plugin loads without a Vulkan loader and says why it cannot run",
          "[vulkan]") {
  // The loader is opened once per process, so the missing-loader case runs in a fresh one.
  const testing::CommandResult child =
      testing::run_command("SWITCHYARD_VULKAN_LOADER=/nonexistent/libvulkan.so.1 /proc/" +
                           std::to_string(getpid()) + "/exe '[.vulkan-missing-loader-child]'");
  INFO(child.output);
  CHECK(child.exit_code == 0);
  CHECK_THAT(child.output, Catch::Contains("All tests passed"));
}

}  // namespace
}  // namespace switchyard
