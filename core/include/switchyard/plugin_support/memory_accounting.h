// The bookkeeping of a plugin's caching memory pool: the counters behind the ABI's
// sy_memory_stats, the cap, the size classes requests are rounded to, and the one wording of a
// refused allocation. It holds no memory: each pool allocates and frees its own blocks (host
// memory, VkBuffers, CUdeviceptrs) and tells the accounting what it did. Not thread-safe; each
// pool calls it under its own mutex.
//
// The policy every pool follows:
// - A request is rounded up to size_class() and served from the pool's cache of free blocks when
//   one fits (block_cache.h); such a block is already reserved, so the cap is not consulted.
// - Otherwise a new block is reserved from the system or driver. The cap bounds reserved bytes
//   (everything held, cache included), which bounds allocated bytes too. When the new block does
//   not fit, the pool first gives back cached free blocks (make_room), and only if it still does
//   not fit fails with RESOURCE_EXHAUSTED and over_cap_message().
//
// Part of plugin_support: header-only, depends only on the C++ standard library and plugin_abi.h,
// and may be included by plugins (docs/writing-a-backend.md, section 2).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "switchyard/plugin_abi.h"
#include "switchyard/plugin_support/format_bytes.h"

namespace sy_support {

// The smallest size class, and the step below 4 KiB.
inline constexpr uint64_t kSizeClassStepBytes = 512;

// The block size a request of size_bytes is rounded up to: 512-byte steps up to 4 KiB, then eight
// steps per power of two. A block is at most 511 bytes or an eighth larger than the request, and
// requests of similar size share cached blocks. Every class is a multiple of 512.
constexpr uint64_t size_class(uint64_t size_bytes) {
  if (size_bytes == 0) return kSizeClassStepBytes;
  const uint64_t step = std::max(kSizeClassStepBytes, std::bit_floor(size_bytes) / 8);
  // A request this close to 2^64 cannot be served anyway; leave it as is rather than wrap.
  if (size_bytes > std::numeric_limits<uint64_t>::max() - (step - 1)) return size_bytes;
  return (size_bytes + step - 1) / step * step;
}

class PoolAccounting {
 public:
  // limit_bytes = 0 means no cap.
  explicit PoolAccounting(uint64_t limit_bytes = 0) : limit_bytes_(limit_bytes) {}

  uint64_t allocated_bytes() const { return allocated_bytes_; }
  uint64_t reserved_bytes() const { return reserved_bytes_; }
  uint64_t limit_bytes() const { return limit_bytes_; }

  // True if reserving extra_reserved_bytes more stays within the cap (always, without one).
  bool fits(uint64_t extra_reserved_bytes) const {
    return limit_bytes_ == 0 || (reserved_bytes_ <= limit_bytes_ &&
                                 extra_reserved_bytes <= limit_bytes_ - reserved_bytes_);
  }
  // True if more is reserved than the cap allows (after the cap was lowered).
  bool over_cap() const { return limit_bytes_ != 0 && reserved_bytes_ > limit_bytes_; }

  // The policy's one step before reserving a new block: when extra_reserved_bytes do not fit,
  // calls give_back_cache() (which frees cached blocks and calls on_unreserve for each), then
  // says whether they fit now. False means: fail with over_cap_message().
  template <typename GiveBackCache>
  bool make_room(uint64_t extra_reserved_bytes, GiveBackCache&& give_back_cache) {
    if (fits(extra_reserved_bytes)) return true;
    give_back_cache();
    return fits(extra_reserved_bytes);
  }

  // The whole policy for a new block, for pools whose allocator returns null when out of memory
  // (host memory): make room under the cap, allocate, and when the system refuses, give the cache
  // back and try once more. Returns the block (already counted as reserved), or null with
  // *error set to over_cap_message() or refused_message(..., "the system has no memory left").
  template <typename Allocate, typename GiveBackCache>
  auto reserve_block(std::string_view what, uint64_t requested_bytes, uint64_t block_bytes,
                     Allocate&& allocate, GiveBackCache&& give_back_cache, std::string* error)
      -> decltype(allocate(block_bytes)) {
    if (!make_room(block_bytes, give_back_cache)) {
      *error = over_cap_message(what, requested_bytes, block_bytes);
      return nullptr;
    }
    auto block = allocate(block_bytes);
    if (block == nullptr) {
      give_back_cache();
      block = allocate(block_bytes);
    }
    if (block == nullptr) {
      *error = refused_message(what, requested_bytes, block_bytes, "the system has no memory left");
      return nullptr;
    }
    on_reserve(block_bytes);
    return block;
  }

  // A block was taken from / given back to the system or driver.
  void on_reserve(uint64_t block_bytes) { reserved_bytes_ += block_bytes; }
  void on_unreserve(uint64_t block_bytes) { reserved_bytes_ -= block_bytes; }
  // A block was handed out in a live buffer / came back from one.
  void on_allocate(uint64_t block_bytes) {
    allocated_bytes_ += block_bytes;
    allocation_count_ += 1;
    peak_allocated_bytes_ = std::max(peak_allocated_bytes_, allocated_bytes_);
  }
  void on_release(uint64_t block_bytes) {
    allocated_bytes_ -= block_bytes;
    allocation_count_ -= 1;
  }

  sy_memory_stats stats() const {
    sy_memory_stats stats{};
    stats.allocated_bytes = allocated_bytes_;
    stats.reserved_bytes = reserved_bytes_;
    stats.peak_allocated_bytes = peak_allocated_bytes_;
    stats.limit_bytes = limit_bytes_;
    stats.allocation_count = allocation_count_;
    return stats;
  }
  // Peak := current allocated.
  void reset_peak() { peak_allocated_bytes_ = allocated_bytes_; }
  // 0 removes the cap. Lowering it frees nothing by itself; later reservations must fit.
  void set_limit(uint64_t limit_bytes) { limit_bytes_ = limit_bytes; }

  // "1.0 MiB (1048576 bytes) in use, 2.0 MiB (2097152 bytes) reserved".
  std::string usage() const {
    return format_bytes(allocated_bytes_) + " in use, " + format_bytes(reserved_bytes_) +
           " reserved";
  }

  // The message of a request refused by the cap; `what` names the pool ("cuda", "vulkan", ...):
  //   "cuda: cannot allocate: requested 13.0 MiB (13631488 bytes), with 4.0 MiB (4194304 bytes)
  //   in use and 4.0 MiB (4194304 bytes) reserved, would exceed the memory cap of 16.0 MiB
  //   (16777216 bytes) (memory_limit_bytes / memory_fraction); try a smaller batch size or raise
  //   the cap"
  // A block larger than the request is named too (", rounded to a 640.0 KiB (655360 bytes) block").
  std::string over_cap_message(std::string_view what, uint64_t requested_bytes,
                               uint64_t block_bytes) const {
    return request_text(what, requested_bytes, block_bytes) + ", with " +
           format_bytes(allocated_bytes_) + " in use and " + format_bytes(reserved_bytes_) +
           " reserved, would exceed the memory cap of " + format_bytes(limit_bytes_) +
           " (memory_limit_bytes / memory_fraction); try a smaller batch size or raise the cap";
  }

  // The message of a request the system or driver refused, `reason` saying how:
  //   "vulkan: cannot allocate: requested 4.0 TiB (4398046511104 bytes): <reason> (0 bytes in use,
  //   0 bytes reserved, no cap)"
  std::string refused_message(std::string_view what, uint64_t requested_bytes, uint64_t block_bytes,
                              std::string_view reason) const {
    const std::string cap =
        limit_bytes_ == 0 ? std::string("no cap") : "cap " + format_bytes(limit_bytes_);
    return request_text(what, requested_bytes, block_bytes) + ": " + std::string(reason) + " (" +
           usage() + ", " + cap + ")";
  }

 private:
  static std::string request_text(std::string_view what, uint64_t requested_bytes,
                                  uint64_t block_bytes) {
    std::string text =
        std::string(what) + ": cannot allocate: requested " + format_bytes(requested_bytes);
    if (block_bytes != requested_bytes) {
      text += ", rounded to a " + format_bytes(block_bytes) + " block";
    }
    return text;
  }

  uint64_t allocated_bytes_ = 0;       // in live buffers, as block sizes
  uint64_t reserved_bytes_ = 0;        // held from the system or driver, cache included
  uint64_t peak_allocated_bytes_ = 0;  // since creation or reset_peak()
  uint64_t allocation_count_ = 0;      // live buffers
  uint64_t limit_bytes_ = 0;           // 0 = no cap
};

}  // namespace sy_support
