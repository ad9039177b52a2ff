// The memory-pool accounting every plugin's pool shares (switchyard/plugin_support/): statistics,
// peak, the cap and its message, size classes and the block cache. No device is needed, so this
// also covers the accounting of the cuda pool on machines without a GPU.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "switchyard/plugin_support/block_cache.h"
#include "switchyard/plugin_support/memory_accounting.h"
#include "test_support.h"

using switchyard::testing::contains;
using sy_support::BlockCache;
using sy_support::PoolAccounting;
using sy_support::size_class;

namespace {

constexpr uint64_t kMiB = 1024 * 1024;

// A pool in miniature built like the host pools (reference, onednn): reuse a cached block of the
// size class, else PoolAccounting::reserve_block. Blocks are slots of `memory`, so a block is a
// pointer as the host pools' are; `refusals` makes the "system" refuse that many allocations.
struct TestPool {
  PoolAccounting accounting;
  BlockCache<int*> cache;
  std::array<int, 16> memory{};
  int next_block = 0;
  int freed_blocks = 0;
  int refusals = 0;

  explicit TestPool(uint64_t limit_bytes) : accounting(limit_bytes) {}

  // The block's slot number, or -1 and the refusal's message in *error.
  int allocate(uint64_t size_bytes, std::string* error) {
    const uint64_t block_bytes = size_class(size_bytes);
    int* block = nullptr;
    if (auto cached = cache.take(block_bytes)) {
      block = cached->block;
    } else {
      const auto system_allocate = [&](uint64_t) -> int* {
        if (refusals > 0) {
          --refusals;
          return nullptr;
        }
        return &memory[static_cast<size_t>(next_block++)];
      };
      block = accounting.reserve_block(
          "test", size_bytes, block_bytes, system_allocate, [&] { give_back_cache(); }, error);
      if (block == nullptr) return -1;
    }
    accounting.on_allocate(block_bytes);
    return static_cast<int>(block - memory.data());
  }
  void release(int block, uint64_t size_bytes) {
    accounting.on_release(size_class(size_bytes));
    cache.put(size_class(size_bytes), &memory[static_cast<size_t>(block)]);
  }
  void give_back_cache() {
    accounting.on_unreserve(cache.drain([&](uint64_t, int*) { ++freed_blocks; }));
  }
};

}  // namespace

TEST_CASE("pool accounting: stats follow reserve, allocate, release and unreserve",
          "[plugin_support]") {
  PoolAccounting accounting(0);
  sy_memory_stats stats = accounting.stats();
  CHECK(stats.allocated_bytes == 0);
  CHECK(stats.reserved_bytes == 0);
  CHECK(stats.peak_allocated_bytes == 0);
  CHECK(stats.limit_bytes == 0);
  CHECK(stats.allocation_count == 0);

  accounting.on_reserve(4096);
  accounting.on_allocate(4096);
  accounting.on_reserve(1024);
  accounting.on_allocate(1024);
  stats = accounting.stats();
  CHECK(stats.allocated_bytes == 5120);
  CHECK(stats.reserved_bytes == 5120);
  CHECK(stats.peak_allocated_bytes == 5120);
  CHECK(stats.allocation_count == 2);

  accounting.on_release(4096);  // back to the cache: still reserved
  stats = accounting.stats();
  CHECK(stats.allocated_bytes == 1024);
  CHECK(stats.reserved_bytes == 5120);
  CHECK(stats.peak_allocated_bytes == 5120);
  CHECK(stats.allocation_count == 1);

  accounting.on_unreserve(4096);  // the cache given back
  CHECK(accounting.stats().reserved_bytes == 1024);
  CHECK(accounting.usage() == "1.0 KiB (1024 bytes) in use, 1.0 KiB (1024 bytes) reserved");
}

TEST_CASE("pool accounting: the peak holds until reset_peak, which sets it to the current bytes",
          "[plugin_support]") {
  PoolAccounting accounting;
  accounting.on_allocate(8192);
  accounting.on_allocate(512);
  accounting.on_release(8192);
  CHECK(accounting.stats().peak_allocated_bytes == 8704);
  accounting.reset_peak();
  CHECK(accounting.stats().peak_allocated_bytes == 512);
  accounting.on_allocate(1024);
  CHECK(accounting.stats().peak_allocated_bytes == 1536);
  accounting.on_release(1024);
  accounting.on_release(512);
  accounting.reset_peak();
  CHECK(accounting.stats().peak_allocated_bytes == 0);
}

TEST_CASE("pool accounting: the cap bounds reserved bytes and set_limit(0) removes it",
          "[plugin_support]") {
  PoolAccounting accounting(kMiB);
  CHECK(accounting.stats().limit_bytes == kMiB);
  CHECK(accounting.fits(kMiB));
  CHECK_FALSE(accounting.fits(kMiB + 1));
  accounting.on_reserve(768 * 1024);
  accounting.on_allocate(512 * 1024);  // a quarter of the reservation is cache
  CHECK(accounting.fits(256 * 1024));
  CHECK_FALSE(accounting.fits(256 * 1024 + 512));  // reserved counts, not allocated
  CHECK_FALSE(accounting.fits(UINT64_MAX));        // no wrap-around
  CHECK_FALSE(accounting.over_cap());

  accounting.set_limit(512 * 1024);  // lowered below what is held
  CHECK(accounting.over_cap());
  CHECK_FALSE(accounting.fits(0 + 1));

  accounting.set_limit(0);
  CHECK(accounting.stats().limit_bytes == 0);
  CHECK_FALSE(accounting.over_cap());
  CHECK(accounting.fits(UINT64_MAX));
}

TEST_CASE("pool accounting: make_room gives the cache back only when the block does not fit",
          "[plugin_support]") {
  PoolAccounting accounting(4096);
  accounting.on_reserve(3072);
  int calls = 0;
  CHECK(accounting.make_room(1024, [&] { ++calls; }));
  CHECK(calls == 0);
  CHECK(accounting.make_room(2048, [&] {
    ++calls;
    accounting.on_unreserve(2048);
  }));
  CHECK(calls == 1);
  CHECK_FALSE(accounting.make_room(8192, [&] { ++calls; }));
  CHECK(calls == 2);
}

TEST_CASE("pool accounting: the over-cap message names requested, block, in-use, reserved, cap",
          "[plugin_support]") {
  PoolAccounting accounting(16 * kMiB);
  accounting.on_reserve(6 * kMiB);
  accounting.on_allocate(4 * kMiB);
  const std::string exact = accounting.over_cap_message("cuda", 13 * kMiB, 13 * kMiB);
  CHECK(exact ==
        "cuda: cannot allocate: requested 13.0 MiB (13631488 bytes), with 4.0 MiB (4194304 bytes) "
        "in use and 6.0 MiB (6291456 bytes) reserved, would exceed the memory cap of 16.0 MiB "
        "(16777216 bytes) (memory_limit_bytes / memory_fraction); try a smaller batch size or "
        "raise the cap");

  const std::string rounded = accounting.over_cap_message("vulkan", 614400, size_class(614400));
  CHECK(contains(rounded,
                 "vulkan: cannot allocate: requested 600.0 KiB (614400 bytes), rounded "
                 "to a 640.0 KiB (655360 bytes) block, with "));
  CHECK(contains(rounded, "16777216 bytes"));

  const std::string refused =
      accounting.refused_message("onednn", 1000, 1024, "the system has no memory left");
  CHECK(refused ==
        "onednn: cannot allocate: requested 1000 bytes, rounded to a 1.0 KiB (1024 bytes) block: "
        "the system has no memory left (4.0 MiB (4194304 bytes) in use, 6.0 MiB (6291456 bytes) "
        "reserved, cap 16.0 MiB (16777216 bytes))");
  accounting.set_limit(0);
  CHECK(contains(accounting.refused_message("onednn", 1024, 1024, "no"), "reserved, no cap)"));
}

TEST_CASE("size classes: monotonic, multiples of 512, at most 511 bytes or an eighth more",
          "[plugin_support]") {
  CHECK(size_class(0) == 512);
  CHECK(size_class(1) == 512);
  CHECK(size_class(512) == 512);
  CHECK(size_class(513) == 1024);
  CHECK(size_class(4096) == 4096);
  CHECK(size_class(4097) == 4608);
  CHECK(size_class(600000) == 655360);
  CHECK(size_class(13 * kMiB) == 13 * kMiB);
  CHECK(size_class(13 * kMiB + 1) == 14 * kMiB);
  CHECK(size_class(uint64_t{1} << 42) == uint64_t{1} << 42);
  CHECK(size_class(UINT64_MAX) == UINT64_MAX);  // unservable, but not wrapped to 0

  // Every size up to 64 KiB, then a spread of sizes up to 2^40 around each power of two.
  std::vector<uint64_t> sizes;
  for (uint64_t n = 1; n <= 64 * 1024; ++n) sizes.push_back(n);
  for (int bit = 16; bit <= 40; ++bit) {
    const uint64_t power = uint64_t{1} << bit;
    for (uint64_t n : {power - 1, power, power + 1, power + power / 3, power + power / 2 + 7}) {
      sizes.push_back(n);
    }
  }
  std::sort(sizes.begin(), sizes.end());
  uint64_t previous_class = 0;
  for (uint64_t n : sizes) {
    INFO(n);
    const uint64_t c = size_class(n);
    REQUIRE(c >= n);
    REQUIRE(c >= previous_class);
    REQUIRE(c % 512 == 0);
    REQUIRE(c - n <= std::max<uint64_t>(511, n / 8));
    REQUIRE(size_class(c) == c);  // a class rounds to itself
    previous_class = c;
  }
}

TEST_CASE("block cache: best fit within a range, last put first, largest, drain",
          "[plugin_support]") {
  BlockCache<int> cache;
  CHECK(cache.empty());
  CHECK_FALSE(cache.take(512).has_value());
  CHECK_FALSE(cache.take_largest().has_value());
  cache.put(1024, 1);
  cache.put(1024, 2);
  cache.put(4096, 3);
  cache.put(8192, 4);
  CHECK(cache.size() == 4);

  const auto exact = cache.take(1024);
  REQUIRE(exact.has_value());
  CHECK(exact->bytes == 1024);
  CHECK(exact->block == 2);  // the one put last
  CHECK_FALSE(cache.take(2048).has_value());
  const auto fit = cache.take(2048, 6144);  // the smallest in range: the 4096 block
  REQUIRE(fit.has_value());
  CHECK(fit->block == 3);
  const auto largest = cache.take_largest();
  REQUIRE(largest.has_value());
  CHECK(largest->bytes == 8192);
  CHECK(largest->block == 4);

  cache.put(2048, 5);
  cache.for_each([](uint64_t, int& block) { block *= 10; });
  std::vector<int> freed;
  const uint64_t kept_small = cache.drain_if([](uint64_t bytes, int) { return bytes > 1024; },
                                             [&](uint64_t, int block) { freed.push_back(block); });
  CHECK(kept_small == 2048);
  CHECK(freed == std::vector<int>{50});
  CHECK(cache.drain([&](uint64_t, int block) { freed.push_back(block); }) == 1024);
  CHECK(freed == std::vector<int>{50, 10});
  CHECK(cache.empty());
}

TEST_CASE("the shared policy: reuse the cache, give it back before refusing, refuse over the cap",
          "[plugin_support]") {
  TestPool pool(kMiB);
  std::string error;
  const int first = pool.allocate(600 * 1024, &error);  // 640 KiB class
  REQUIRE(first >= 0);
  CHECK(pool.allocate(600 * 1024, &error) == -1);
  CHECK(contains(error, "requested 600.0 KiB (614400 bytes)"));
  CHECK(contains(error, "640.0 KiB (655360 bytes) in use"));
  CHECK(contains(error, "memory cap of 1.0 MiB (1048576 bytes)"));

  // The released block is reused by a request of the same class, without reserving more.
  pool.release(first, 600 * 1024);
  CHECK(pool.allocate(610 * 1024, &error) == first);
  CHECK(pool.accounting.reserved_bytes() == 655360);
  pool.release(first, 610 * 1024);

  // A request of another class fits only once the cached block is given back.
  const int second = pool.allocate(700 * 1024, &error);
  CHECK(second == 1);
  CHECK(pool.freed_blocks == 1);
  const sy_memory_stats stats = pool.accounting.stats();
  CHECK(stats.reserved_bytes == size_class(700 * 1024));
  CHECK(stats.allocated_bytes == size_class(700 * 1024));
  CHECK(stats.allocation_count == 1);
  CHECK(stats.peak_allocated_bytes == size_class(700 * 1024));

  pool.accounting.set_limit(0);
  CHECK(pool.allocate(64 * kMiB, &error) == 2);
}

TEST_CASE("reserve_block: a refusing system gets one more try after the cache is given back",
          "[plugin_support]") {
  TestPool pool(0);
  std::string error;
  const int cached = pool.allocate(4096, &error);
  pool.release(cached, 4096);
  REQUIRE(pool.accounting.reserved_bytes() == 4096);
  pool.refusals = 1;  // the first try fails, the cache goes back, the second try succeeds
  CHECK(pool.allocate(8192, &error) == 1);
  CHECK(pool.freed_blocks == 1);
  CHECK(pool.accounting.reserved_bytes() == 8192);
  pool.refusals = 2;  // both tries fail: refused, and nothing more is counted
  CHECK(pool.allocate(100, &error) == -1);
  CHECK(error ==
        "test: cannot allocate: requested 100 bytes, rounded to a 512 bytes block: the system "
        "has no memory left (8.0 KiB (8192 bytes) in use, 8.0 KiB (8192 bytes) reserved, no "
        "cap)");
  CHECK(pool.accounting.reserved_bytes() == 8192);
  CHECK(pool.accounting.allocated_bytes() == 8192);
}
