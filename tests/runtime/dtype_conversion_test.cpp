// Every backend built here converts between f32, f16 and bf16 as the plugins' codec does, bit for
// bit (tests/dtype_conversion.h). A backend that is not built or not usable here is skipped with
// the reason, or fails where it is required (tests/backend_support.h). The cuda backend's case
// also runs in tests/cuda, which tools/gpu-check runs on a GPU.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "backend_support.h"
#include "dtype_conversion.h"

namespace switchyard {
namespace {

TEST_CASE("every backend converts f32, f16 and bf16 with the plugins' codec, bit for bit",
          "[runtime][dtype]") {
  for (const std::string backend : {"reference", "onednn", "vulkan", "cuda"}) {
    SECTION(backend) {
      const std::shared_ptr<Device> device = testing::optional_device(backend);
      if (device == nullptr) continue;
      testing::check_dtype_conversions(*device);
    }
  }
}

}  // namespace
}  // namespace switchyard
