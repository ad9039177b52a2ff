// sy_support::HostPool (switchyard/plugin_support/host_pool.h), the host memory pool of the
// reference and onednn plugins: alignment, reuse, the cap, live blocks. Under the sanitizers'
// pass, LeakSanitizer checks that a pool destroyed with live and cached blocks frees them all.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "switchyard/plugin_support/host_pool.h"
#include "test_support.h"

using switchyard::testing::contains;
using sy_support::HostPool;

namespace {

constexpr uint64_t kKiB = 1024;

TEST_CASE("the host pool aligns blocks, 4 KiB pages from 64 KiB", "[plugin_support][host_pool]") {
  HostPool pool("test", 0);
  std::string error;
  uint64_t block = 0;
  void* small = pool.allocate(100, &block, &error);
  REQUIRE(small != nullptr);
  CHECK(block >= 100);
  CHECK(reinterpret_cast<uintptr_t>(small) % 64 == 0);
  void* large = pool.allocate(64 * kKiB, &block, &error);
  REQUIRE(large != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(large) % 4096 == 0);
  std::memset(large, 1, 64 * kKiB);  // the whole block is usable (ASan checks)
  CHECK(pool.release(small));
  CHECK(pool.release(large));
}

TEST_CASE("the host pool reuses a released block and counts it", "[plugin_support][host_pool]") {
  HostPool pool("test", 0);
  std::string error;
  uint64_t block = 0;
  void* first = pool.allocate(1000, &block, &error);
  REQUIRE(pool.release(first));
  CHECK(pool.stats().allocated_bytes == 0);
  CHECK(pool.stats().reserved_bytes == block);  // cached
  void* second = pool.allocate(1000, &block, &error);
  CHECK(second == first);
  CHECK(pool.owns(second));
  CHECK(pool.stats().allocated_bytes == block);
  pool.release(second);
  pool.empty_cache();
  CHECK(pool.stats().reserved_bytes == 0);
}

TEST_CASE("the host pool ignores a block it does not own", "[plugin_support][host_pool]") {
  HostPool pool("test", 0);
  const auto not_ours = std::make_unique<int>(0);
  CHECK_FALSE(pool.release(not_ours.get()));
  CHECK_FALSE(pool.owns(not_ours.get()));
  std::string error;
  uint64_t block = 0;
  void* data = pool.allocate(10, &block, &error);
  CHECK(pool.release(data));
  CHECK_FALSE(pool.release(data));  // twice: the second is ignored, the cache holds it once
  CHECK(pool.stats().reserved_bytes == block);
}

TEST_CASE("the host pool refuses past its cap, naming the sizes", "[plugin_support][host_pool]") {
  HostPool pool("test", 4 * kKiB);
  std::string error;
  uint64_t block = 0;
  void* fits = pool.allocate(3 * kKiB, &block, &error);
  REQUIRE(fits != nullptr);
  CHECK(pool.allocate(3 * kKiB, &block, &error) == nullptr);
  CHECK(contains(error, "test"));
  CHECK(contains(error, "3.0 KiB"));
  pool.release(fits);
  // The cached block is given back to make room for a different size class.
  CHECK(pool.allocate(4 * kKiB, &block, &error) != nullptr);
  CHECK(pool.stats().reserved_bytes == 4 * kKiB);
}

TEST_CASE("a lowered cap gives the cache back and frees blocks released over it",
          "[plugin_support][host_pool]") {
  HostPool pool("test", 0);
  std::string error;
  uint64_t block = 0;
  void* a = pool.allocate(8 * kKiB, &block, &error);
  void* b = pool.allocate(8 * kKiB, &block, &error);
  pool.release(a);
  CHECK(pool.stats().reserved_bytes == 16 * kKiB);
  pool.set_limit(4 * kKiB);  // over the cap: the cached block goes at once
  CHECK(pool.stats().reserved_bytes == 8 * kKiB);
  pool.release(b);  // released over the cap: freed, not cached
  CHECK(pool.stats().reserved_bytes == 0);
}

TEST_CASE("destroying the host pool frees live and cached blocks", "[plugin_support][host_pool]") {
  auto pool = std::make_unique<HostPool>("test", 0);
  std::string error;
  uint64_t block = 0;
  void* live = pool->allocate(5000, &block, &error);
  void* cached = pool->allocate(200 * kKiB, &block, &error);
  REQUIRE(live != nullptr);
  REQUIRE(cached != nullptr);
  pool->release(cached);
  pool.reset();  // LeakSanitizer (tools/test --sanitize) fails the run if either block leaks
  SUCCEED("freed");
}

}  // namespace
