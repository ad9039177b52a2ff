// A caching pool of 64-byte aligned host blocks, with the statistics and the cap the ABI exposes.
//
// Released buffers keep their block in a cache keyed by size class, so the training loop's
// repeated allocations of the same sizes do not go back to the system allocator each step. The
// cache is given back by empty_cache(), and automatically when a new block would take the bytes
// held from the system over the cap (the policy of switchyard/plugin_support/memory_accounting.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_set>

#include "switchyard/plugin_abi.h"
#include "switchyard/plugin_support/block_cache.h"
#include "switchyard/plugin_support/memory_accounting.h"

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
  explicit MemoryPool(uint64_t limit_bytes) : accounting_(limit_bytes) {}
  // Frees the cache and any buffer the host did not release (so a forgotten buffer does not leak).
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

  sy_memory_stats stats() const;
  void reset_peak();
  void empty_cache();
  void set_limit(uint64_t limit_bytes);

 private:
  std::byte* allocate_system_block(uint64_t size_bytes, uint64_t block_bytes);
  void free_cache_locked();

  mutable std::mutex mutex_;
  sy_support::PoolAccounting accounting_;
  sy_support::BlockCache<std::byte*> cache_;
  std::unordered_set<const sy_buffer_s*> live_buffers_;
};

}  // namespace sy_reference
