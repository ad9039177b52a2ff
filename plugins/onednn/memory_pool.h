// MemoryPool: the device's caching allocator of host memory.
//
// Freed blocks are kept, by size class, for reuse; empty_cache() returns them to the system.
// A cap (0 = none) bounds the bytes held from the system (reserved), which bounds the bytes in
// live buffers too: a request that would exceed it first drops the cache, then fails with
// RESOURCE_EXHAUSTED naming the requested, in-use, reserved and cap sizes (the policy of
// switchyard/plugin_support/memory_accounting.h). Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>

#include "switchyard/plugin_abi.h"
#include "switchyard/plugin_support/block_cache.h"
#include "switchyard/plugin_support/memory_accounting.h"

namespace sy_onednn {

class MemoryPool {
 public:
  explicit MemoryPool(uint64_t limit_bytes) : accounting_(limit_bytes) {}
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  // Returns at least size_bytes of 64-byte aligned memory and the block size it occupies, which
  // release() needs back. Throws PluginError (RESOURCE_EXHAUSTED) over the cap or out of memory.
  void* allocate(uint64_t size_bytes, uint64_t* block_bytes);
  void release(void* data, uint64_t block_bytes);

  sy_memory_stats stats() const;
  void reset_peak();
  void empty_cache();
  // Lowering the cap below what is reserved gives the cache back at once.
  void set_limit(uint64_t limit_bytes);

 private:
  void* allocate_fresh(uint64_t size_bytes, uint64_t block_bytes);
  void free_cached_locked();

  mutable std::mutex mutex_;
  sy_support::PoolAccounting accounting_;
  sy_support::BlockCache<void*> cache_;
};

}  // namespace sy_onednn
