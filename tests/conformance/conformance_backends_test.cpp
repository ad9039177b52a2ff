// The conformance suite, with drawn cases, run against every other backend built here that has a
// usable device.
// A backend that is not built, or has no usable device on this machine, is reported as skipped
// with its reason, or fails where it is required (tests/backend_support.h); one whose device is
// created must pass the smoke test and fail no case.
#include <catch2/catch.hpp>

#include <string>

#include "backend_support.h"
#include "conformance/conformance.h"
#include "switchyard/registry.h"
#include "test_support.h"

namespace switchyard {
namespace {

void check_backend(const std::string& name, const OptionList& options) {
  std::shared_ptr<Device> device;
  const std::string reason = testing::device_or_reason(name, options, &device);
  if (device == nullptr) {
    testing::skip_backend(name, reason);  // fails here when the backend is required
    SUCCEED();
    return;
  }
  // A device that was created and then computes a wrong answer (or cannot run the smoke test's add
  // and matmul) is broken, not missing: that fails whether or not the backend is required.
  const Status smoke = smoke_test(*device);
  if (!smoke.ok()) FAIL("smoke test on " << device->id() << ": " << smoke.to_string());
  std::shared_ptr<Device> reference = testing::reference_device();
  // The fixed table, then drawn cases (cases.h) of one seed: CI draws the same ones every run;
  // `switchyard conformance --drawn N --seed S` explores others.
  conformance::Options run_options;
  run_options.drawn = 40;
  const conformance::Report report = conformance::run(*device, *reference, run_options);
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
