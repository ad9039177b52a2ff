// The Vulkan plugin's memory pool: statistics, the cap, and failures that are statuses, not
// crashes.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "vulkan_test_support.h"

namespace switchyard {
namespace {

using vulkan_test::vulkan_device;

TEST_CASE("vulkan: an allocation over the cap is RESOURCE_EXHAUSTED with the sizes", "[vulkan]") {
  std::shared_ptr<Device> device =
      vulkan_device({{"validation", "true"}, {"memory_limit_bytes", "1048576"}});
  if (device == nullptr) return;
  CHECK(value_or_throw(device->memory_stats()).limit_bytes == 1048576);
  std::shared_ptr<Buffer> held = value_or_throw(device->allocate(600 * 1024));
  Result<std::shared_ptr<Buffer>> refused = device->allocate(600 * 1024);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kResourceExhausted);
  const std::string message = refused.status().message();
  CHECK_THAT(message, Catch::Contains("614400 bytes"));   // requested
  CHECK_THAT(message, Catch::Contains("1048576 bytes"));  // the cap
  CHECK_THAT(message, Catch::Contains("in use"));
  // Once the first buffer is gone, the same request fits.
  held.reset();
  CHECK(device->allocate(600 * 1024).ok());
}

TEST_CASE("vulkan: set_memory_limit applies to later allocations and 0 removes it", "[vulkan]") {
  std::shared_ptr<Device> device = vulkan_device();
  if (device == nullptr) return;
  throw_if_error(device->set_memory_limit(4096));
  Result<std::shared_ptr<Buffer>> refused = device->allocate(8192);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kResourceExhausted);
  throw_if_error(device->set_memory_limit(0));
  CHECK(device->allocate(8192).ok());
}

TEST_CASE("vulkan: a request beyond the device's largest allocation fails cleanly", "[vulkan]") {
  std::shared_ptr<Device> device = vulkan_device();
  if (device == nullptr) return;
  Result<std::shared_ptr<Buffer>> refused = device->allocate(uint64_t{1} << 42);  // 4 TiB
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kResourceExhausted);
  CHECK_THAT(refused.status().message(), Catch::Contains("4398046511104 bytes"));
  // The device still works afterwards.
  CHECK(device->allocate(1024).ok());
}

TEST_CASE("vulkan: memory_fraction caps at that share of device-local memory", "[vulkan]") {
  std::shared_ptr<Device> device = vulkan_device({{"memory_fraction", "0.25"}});
  if (device == nullptr) return;
  const MemoryStats stats = value_or_throw(device->memory_stats());
  CHECK(stats.limit_bytes == device->info().memory_total_bytes / 4);
}

TEST_CASE("vulkan: pool statistics track live, cached and peak memory", "[vulkan]") {
  std::shared_ptr<Device> device = vulkan_device();
  if (device == nullptr) return;
  const MemoryStats before = value_or_throw(device->memory_stats());
  std::shared_ptr<Buffer> a = value_or_throw(device->allocate(1000));
  std::shared_ptr<Buffer> b = value_or_throw(device->allocate(3 << 20));
  MemoryStats live = value_or_throw(device->memory_stats());
  CHECK(live.allocation_count == before.allocation_count + 2);
  CHECK(live.allocated_bytes >= before.allocated_bytes + 1000 + (3 << 20));
  CHECK(live.reserved_bytes >= live.allocated_bytes);
  CHECK(live.peak_allocated_bytes >= live.allocated_bytes);
  b.reset();
  const MemoryStats cached = value_or_throw(device->memory_stats());
  CHECK(cached.allocated_bytes < live.allocated_bytes);
  CHECK(cached.reserved_bytes == live.reserved_bytes);  // kept in the cache
  CHECK(cached.peak_allocated_bytes == live.peak_allocated_bytes);
  // A request of the same size class reuses the cached block.
  std::shared_ptr<Buffer> again = value_or_throw(device->allocate(3 << 20));
  CHECK(value_or_throw(device->memory_stats()).reserved_bytes == live.reserved_bytes);
  again.reset();
  throw_if_error(device->reset_peak_memory());
  CHECK(value_or_throw(device->memory_stats()).peak_allocated_bytes == cached.allocated_bytes);
  throw_if_error(device->empty_cache());
  const MemoryStats emptied = value_or_throw(device->memory_stats());
  CHECK(emptied.reserved_bytes == emptied.allocated_bytes);
  a.reset();
}

}  // namespace
}  // namespace switchyard
