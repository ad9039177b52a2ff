// The conformance suite run against every other backend built here that has a usable device.
// A backend that is not built, or has no usable device on this machine, is reported as skipped
// with its reason; one that runs must fail no case.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "switchyard/conformance.h"
#include "switchyard/registry.h"
#include "test_support.h"

namespace switchyard {
namespace {

// The first device of `name`, created and smoke-tested, or the reason there is none.
Result<std::shared_ptr<Device>> usable_device(const std::string& name, const OptionList& options) {
  const std::string path = testing::plugin_file(name);
  if (!std::filesystem::exists(path)) return not_found(path + " was not built");
  SY_ASSIGN_OR_RETURN(std::shared_ptr<Plugin> plugin, Plugin::load(path));
  SY_ASSIGN_OR_RETURN(uint32_t count, plugin->device_count());
  if (count == 0) return unavailable(name + " reports no devices");
  SY_ASSIGN_OR_RETURN(std::shared_ptr<Device> device, Device::create(plugin, 0, options));
  SY_RETURN_IF_ERROR(smoke_test(*device).with_context("smoke test on " + device->id()));
  return device;
}

void check_backend(const std::string& name, const OptionList& options) {
  Result<std::shared_ptr<Device>> device = usable_device(name, options);
  if (!device.ok()) {
    WARN("conformance " << name << " skipped: " << device.status().to_string());
    SUCCEED();
    return;
  }
  std::shared_ptr<Device> reference = testing::reference_device();
  const conformance::Report report = conformance::run(**device, *reference);
  for (const conformance::CaseResult& result : report.cases) {
    if (result.outcome != conformance::Outcome::kFailed) continue;
    FAIL_CHECK(result.name << ": " << result.reason);
  }
  WARN("conformance " << report.device_id << ": " << report.passed() << " passed, "
                      << report.failed() << " failed, " << report.skipped() << " skipped");
  CHECK(report.failed() == 0);
  CHECK(report.passed() > 0);
}

TEST_CASE("conformance: onednn matches the reference", "[conformance][onednn]") {
  check_backend("onednn", {});
}

TEST_CASE("conformance: vulkan (with validation layers) matches the reference",
          "[conformance][vulkan]") {
  check_backend("vulkan", {{"validation", "true"}});
}

TEST_CASE("conformance: cuda matches the reference", "[conformance][cuda]") {
  check_backend("cuda", {});
}

}  // namespace
}  // namespace switchyard
