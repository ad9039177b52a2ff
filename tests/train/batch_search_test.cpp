// The batch-size search on its own (train/batch_search.h): which sizes it tries, the exact
// boundary it reports, and the peak and cap it reads from a real capped reference device.
#include <catch2/catch.hpp>

#include "switchyard/buffer.h"
#include "test_support.h"
#include "train/batch_search.h"

using namespace switchyard;
using namespace switchyard::detail;

namespace {

std::shared_ptr<Device> capped_reference(uint64_t cap) {
  auto plugin = value_or_throw(Plugin::load(testing::plugin_file("reference")));
  return value_or_throw(Device::create(plugin, 0, {{"memory_limit_bytes", std::to_string(cap)}}));
}

// A trial that fits up to `largest` samples, as an allocation failure would say it.
std::function<void(int64_t)> fits_up_to(int64_t largest) {
  return [largest](int64_t batch_size) {
    if (batch_size > largest)
      throw_error(resource_exhausted("over by " + std::to_string(batch_size - largest)));
  };
}

std::vector<int64_t> tried(const BatchSearchResult& result) {
  std::vector<int64_t> sizes;
  for (const BatchTrial& t : result.trials) sizes.push_back(t.batch_size);
  return sizes;
}

}  // namespace

TEST_CASE("batch search: powers of two from the top, then the exact boundary", "[train][memory]") {
  const auto device = testing::reference_device();
  BatchSearchOptions options;
  options.max_batch_size = 256;

  const BatchSearchResult powers = search_batch_size(*device, options, fits_up_to(100));
  CHECK(powers.batch_size == 64);
  CHECK(tried(powers) == std::vector<int64_t>{256, 128, 64});
  REQUIRE(powers.smallest_failure() != nullptr);
  CHECK(powers.smallest_failure()->batch_size == 128);
  CHECK(powers.smallest_failure()->error == "over by 28");

  options.exact = true;
  const BatchSearchResult exact = search_batch_size(*device, options, fits_up_to(100));
  CHECK(exact.batch_size == 100);
  CHECK(tried(exact) == std::vector<int64_t>{256, 128, 64, 96, 112, 104, 100, 102, 101});
  CHECK(exact.smallest_failure()->batch_size == 101);

  // Everything up to the bound fits: the bound itself is tried when it is no power of two.
  options.max_batch_size = 300;
  CHECK(tried(search_batch_size(*device, options, fits_up_to(1000))) ==
        std::vector<int64_t>{256, 300});
  const BatchSearchResult between = search_batch_size(*device, options, fits_up_to(280));
  CHECK(between.batch_size == 280);
  CHECK(between.smallest_failure()->batch_size == 281);

  const BatchSearchResult none = search_batch_size(*device, options, fits_up_to(0));
  CHECK(none.batch_size == 0);
  CHECK(tried(none) == std::vector<int64_t>{256, 128, 64, 32, 16, 8, 4, 2, 1});

  // Only running out of memory means "does not fit"; any other error is the caller's.
  CHECK_THROWS_WITH(search_batch_size(*device, options,
                                      [](int64_t) { throw_error(invalid_argument("bad model")); }),
                    Catch::Contains("bad model"));
}

TEST_CASE("batch search reads the cap and each trial's peak from the device", "[train][memory]") {
  constexpr uint64_t kCap = 1 << 20;
  const auto device = capped_reference(kCap);
  BatchSearchOptions options;
  options.max_batch_size = 1000;
  options.exact = true;
  // Each sample takes 4 KiB of real device memory, held for the trial.
  const BatchSearchResult result = search_batch_size(*device, options, [&](int64_t batch_size) {
    const auto buffer = value_or_throw(device->allocate(static_cast<uint64_t>(batch_size) * 4096));
  });
  INFO(describe_choice(result, "none"));
  CHECK(result.memory_known);
  CHECK(result.limit_bytes == kCap);
  CHECK(result.batch_size == 256);  // exactly the cap: 256 x 4 KiB = 1 MiB
  CHECK(result.peak_bytes == kCap);
  for (const BatchTrial& t : result.trials) {
    INFO(t.batch_size);
    CHECK(t.fits == (t.batch_size <= 256));
    if (!t.fits) CHECK_THAT(t.error, Catch::Contains(std::to_string(kCap) + " bytes"));
  }
  CHECK(result.smallest_failure()->batch_size == 257);
  CHECK_THAT(describe_choice(result, "none"),
             Catch::StartsWith("256 (peak 1048576 bytes of a 1048576-byte cap; 257 did not fit: "));
}
