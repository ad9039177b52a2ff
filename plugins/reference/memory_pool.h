// The device's buffers: 64-byte aligned host blocks from sy_support::HostPool
// (switchyard/plugin_support/host_pool.h: size classes, the cache, the cap and its messages),
// each behind a handle of the ABI. The pool knows its live handles, so that dispatch can refuse a
// handle this device did not make (or already released) without reading it, and destroying the
// pool frees every buffer the host did not release. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_set>

#include "switchyard/plugin_abi.h"
#include "switchyard/plugin_support/host_pool.h"

// The ABI's opaque buffer handle: one pool block.
struct sy_buffer_s {
  std::byte* data = nullptr;
  uint64_t size_bytes = 0;   // as requested
  uint64_t block_bytes = 0;  // as held from the system (rounded up); counted in the statistics
};

namespace sy_reference {

class MemoryPool {
 public:
  // limit_bytes = 0 means no cap.
  explicit MemoryPool(uint64_t limit_bytes) : blocks_("reference", limit_bytes) {}
  // The handles the host did not release; blocks_ then frees their memory.
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  // Raises RESOURCE_EXHAUSTED naming requested, in-use, reserved and cap bytes when over the cap
  // or when the system has no memory left.
  sy_buffer_s* allocate(uint64_t size_bytes);
  // Returns the block to the cache. A buffer this pool does not own is ignored.
  void release(sy_buffer_s* buffer);
  // True if `buffer` is a live buffer of this pool.
  bool owns(const sy_buffer_s* buffer) const;

  sy_memory_stats stats() const { return blocks_.stats(); }
  void reset_peak() { blocks_.reset_peak(); }
  void empty_cache() { blocks_.empty_cache(); }
  void set_limit(uint64_t limit_bytes) { blocks_.set_limit(limit_bytes); }

 private:
  sy_support::HostPool blocks_;
  mutable std::mutex mutex_;  // guards live_buffers_
  std::unordered_set<const sy_buffer_s*> live_buffers_;
};

}  // namespace sy_reference
