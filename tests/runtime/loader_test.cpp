#include <catch2/catch.hpp>

#include <algorithm>

#include "switchyard/buffer.h"
#include "switchyard/plugin.h"
#include "switchyard/queue.h"
#include "switchyard/registry.h"
#include "test_support.h"

using namespace switchyard;
using switchyard::testing::contains;
using switchyard::testing::fixture_dir;
using switchyard::testing::plugin_file;

namespace {

const PluginRecord& record_named(const Registry& registry, const std::string& name) {
  for (const auto& r : registry.plugins()) {
    if (r.name == name) return r;
  }
  FAIL("no record for plugin " << name);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("the reference plugin loads and reports its name and ABI", "[loader]") {
  auto plugin = Plugin::load(plugin_file("reference"));
  REQUIRE(plugin.ok());
  CHECK((*plugin)->name() == "reference");
  CHECK_FALSE((*plugin)->version().empty());
  auto count = (*plugin)->device_count();
  REQUIRE(count.ok());
  CHECK(*count == 1);
}

TEST_CASE("each broken plugin is rejected with a reason that names the fault", "[loader]") {
  DiscoverOptions options;
  options.isolate = true;  // the crashing fixture would otherwise end this test process
  Registry registry = Registry::discover({fixture_dir("broken")}, options);
  REQUIRE(registry.plugins().size() == 7);
  for (const auto& r : registry.plugins()) {
    INFO(r.name << ": " << r.reason);
    CHECK(r.state == PluginState::kRejected);
    CHECK(r.plugin == nullptr);
    CHECK(contains(r.reason, fixture_dir("broken")));  // the search path is part of every reason
  }
  CHECK(contains(record_named(registry, "wrongabi").reason, "built for plugin ABI 42"));
  CHECK(contains(record_named(registry, "wrongabi").reason, "host speaks ABI 1"));
  CHECK(contains(record_named(registry, "missingdep").reason,
                 "libsy_fixture_dependency.so: cannot open shared object file"));
  CHECK(contains(record_named(registry, "undefinedsym").reason,
                 "undefined symbol: sy_fixture_symbol_that_does_not_exist"));
  CHECK(contains(record_named(registry, "noentry").reason,
                 "does not export switchyard_plugin_entry"));
  CHECK(contains(record_named(registry, "throws").reason, "threw an exception"));
  CHECK(contains(record_named(registry, "crashes").reason, "crashed with signal 11"));
  CHECK(contains(record_named(registry, "garbage").reason, "libswitchyard-garbage.so"));
}

TEST_CASE("a throwing entry is rejected even without process isolation", "[loader]") {
  auto plugin = Plugin::load(fixture_dir("broken") + "/libswitchyard-throws.so");
  REQUIRE_FALSE(plugin.ok());
  CHECK(plugin.status().code() == StatusCode::kFailedPrecondition);
  CHECK(contains(plugin.status().message(), "fixture entry throws on purpose"));
}

TEST_CASE("the first of two plugins with one name wins and the other is shadowed", "[loader]") {
  Registry registry = Registry::discover({fixture_dir("twin-a"), fixture_dir("twin-b")});
  REQUIRE(registry.plugins().size() == 2);
  const auto& first = registry.plugins()[0];
  const auto& second = registry.plugins()[1];
  CHECK(first.state == PluginState::kLoaded);
  CHECK(contains(first.path.string(), "twin-a"));
  CHECK(second.state == PluginState::kShadowed);
  CHECK(contains(second.reason, "shadowed by " + first.path.string()));
  CHECK(registry.find("twin")->path() == first.path);
}

TEST_CASE("a device that computes wrong answers fails the smoke test", "[loader]") {
  Registry registry = Registry::discover({fixture_dir("wrong")});
  auto devices = registry.probe("wrongmath", {});
  REQUIRE(devices.size() == 1);
  CHECK_FALSE(devices[0].usable);
  CHECK(contains(devices[0].reason, "smoke test gave a wrong answer"));
  CHECK(record_named(registry, "wrongmath").state == PluginState::kUnusable);
}

TEST_CASE("a plugin without its driver is unusable and says why", "[loader]") {
  Registry registry = Registry::discover({fixture_dir("wrong")});
  auto devices = registry.probe("nodriver", {});
  CHECK(devices.empty());
  const auto& record = record_named(registry, "nodriver");
  CHECK(record.state == PluginState::kUnusable);
  CHECK(contains(record.reason, "libfixture-driver.so.1: cannot open shared object file"));
  // Shown after the backend's name ("nodriver: no devices (unusable: <reason>)"), so the reason
  // does not start with it again.
  CHECK(record.reason.rfind("device_count: libfixture-driver.so.1", 0) == 0);
}

TEST_CASE("isolated probing gives the same verdict as probing in process", "[loader]") {
  Registry registry = Registry::discover({fixture_dir("wrong"), SWITCHYARD_TEST_PLUGIN_DIR});
  auto isolated = registry.probe_isolated("wrongmath", {});
  REQUIRE(isolated.size() == 1);
  CHECK_FALSE(isolated[0].usable);
  CHECK(contains(isolated[0].reason, "smoke test gave a wrong answer"));
  auto reference = registry.probe_isolated("reference", {});
  REQUIRE(reference.size() == 1);
  CHECK(reference[0].usable);
  CHECK(reference[0].info.name.size() > 0);
}

TEST_CASE("the reference device passes the smoke test and keeps its plugin alive", "[loader]") {
  std::shared_ptr<Device> device;
  {
    Registry registry = Registry::discover({SWITCHYARD_TEST_PLUGIN_DIR});
    auto devices = registry.probe("reference", {});
    REQUIRE(devices.size() == 1);
    REQUIRE(devices[0].usable);
    device = devices[0].device;
  }
  // The registry is gone; the device still works because it holds its plugin.
  REQUIRE(smoke_test(*device).ok());
}

TEST_CASE("the template plugin creates a host-memory device that supports no op", "[loader]") {
  auto plugin = Plugin::load(std::string(SWITCHYARD_TEST_PLUGIN_DIR) +
                             "/../switchyard-examples/libswitchyard-template.so");
  REQUIRE(plugin.ok());
  CHECK((*plugin)->name() == "template");
  auto count = (*plugin)->device_count();
  REQUIRE(count.ok());
  CHECK(*count == 1);
  auto device = Device::create(*plugin, 0, {{"deterministic", "true"}});
  REQUIRE(device.ok());
  const float written[3] = {1.5f, -2.0f, 3.25f};
  float read[3] = {};
  auto buffer = (*device)->allocate(sizeof(written));
  REQUIRE(buffer.ok());
  REQUIRE((*device)->default_queue().write(**buffer, 0, written, sizeof(written)).ok());
  REQUIRE((*device)->default_queue().read(**buffer, 0, read, sizeof(read)).ok());
  CHECK(std::equal(read, read + 3, written));
  CHECK_FALSE((*device)->supports(SY_OP_ADD, SY_DTYPE_F32));
  const Status smoke = smoke_test(**device);
  CHECK(smoke.code() == StatusCode::kUnimplemented);
  CHECK(smoke.message() ==
        "the device does not support f32 add and matmul, which the smoke test needs");
  auto unknown = Device::create(*plugin, 0, {{"threads", "2"}});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().code() == StatusCode::kInvalidArgument);
  CHECK(contains(unknown.status().message(),
                 "template: unknown option 'threads', expected only: deterministic"));
}
