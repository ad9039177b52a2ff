// The standard `deterministic` option on its way from RuntimeSettings to device_create, and the
// optional device_settings slot read back through Device::settings().
#include <catch2/catch.hpp>

#include "switchyard/config.h"
#include "switchyard/plugin.h"
#include "switchyard/registry.h"
#include "test_support.h"

using namespace switchyard;
using switchyard::testing::fixture_dir;
using switchyard::testing::plugin_file;

namespace {

std::shared_ptr<const Plugin> reference_plugin() {
  return value_or_throw(Plugin::load(plugin_file("reference")));
}

}  // namespace

TEST_CASE("device_options adds deterministic=true only when the run asks for it", "[settings]") {
  RuntimeSettings settings;
  settings.backend_options["onednn"] = {{"threads", "2"}, {"deterministic", "false"}};
  CHECK(settings.device_options("reference").empty());
  CHECK(settings.device_options("onednn") ==
        OptionList{{"threads", "2"}, {"deterministic", "false"}});

  settings.deterministic = true;
  // The top-level promise wins over a per-backend value, and every backend gets it.
  CHECK(settings.device_options("onednn") ==
        OptionList{{"threads", "2"}, {"deterministic", "true"}});
  CHECK(settings.device_options("reference") == OptionList{{"deterministic", "true"}});
}

TEST_CASE("the reference reports its settings and accepts deterministic", "[settings]") {
  auto plain = value_or_throw(Device::create(reference_plugin(), 0));
  CHECK(plain->settings() == "threads=1 deterministic=off");
  auto deterministic =
      value_or_throw(Device::create(reference_plugin(), 0, {{"deterministic", "true"}}));
  CHECK(deterministic->settings() == "threads=1 deterministic=on");
  auto bad = Device::create(reference_plugin(), 0, {{"deterministic", "maybe"}});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(bad.status().message(), Catch::Contains("deterministic"));
  CHECK_THAT(bad.status().message(), Catch::Contains("maybe"));
}

TEST_CASE("a plugin without the device_settings slot reports an empty line", "[settings]") {
  // The fixture's table leaves the slot NULL, as every plugin built before the slot existed does.
  auto plugin = value_or_throw(Plugin::load(fixture_dir("wrong") + "/libswitchyard-wrongmath.so"));
  REQUIRE(plugin->functions().device_settings == nullptr);
  auto device = value_or_throw(Device::create(plugin, 0, {{"deterministic", "true"}}));
  CHECK(device->settings().empty());
}

TEST_CASE("select_device opens the device with the run's deterministic setting", "[settings]") {
  Registry registry = Registry::discover({SWITCHYARD_TEST_PLUGIN_DIR});
  RuntimeSettings settings;
  settings.backends = {"reference"};
  settings.backends_from_config = true;
  settings.deterministic = true;
  auto selection = value_or_throw(select_device(registry, settings));
  REQUIRE(selection.device != nullptr);
  CHECK(selection.device->settings() == "threads=1 deterministic=on");
  for (const DeviceRecord& record : selection.devices) {
    if (record.info.backend == "reference") CHECK(record.settings == "threads=1 deterministic=on");
  }
}
