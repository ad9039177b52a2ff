// Device event timing on every backend built here (tests/event_timing.h): the elapsed time of a
// known amount of work is positive and grows with the work. A backend that is not built or not
// usable here is skipped with the reason, or fails where it is required (tests/backend_support.h).
// The cuda backend's case also runs in tests/cuda, which tools/gpu-check runs on a GPU.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "backend_support.h"
#include "event_timing.h"

namespace switchyard {
namespace {

TEST_CASE("device events time a known amount of work on every backend", "[runtime][events]") {
  for (const std::string backend : {"reference", "onednn", "vulkan", "cuda"}) {
    SECTION(backend) {
      const std::shared_ptr<Device> device = testing::optional_device(backend);
      if (device == nullptr) continue;
      testing::check_event_timing(*device);
    }
  }
}

}  // namespace
}  // namespace switchyard
