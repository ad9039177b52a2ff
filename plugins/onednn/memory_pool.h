// MemoryPool: the device's caching allocator of host memory.
//
// Freed blocks are kept, by rounded size, for reuse; empty_cache() returns them to the system.
// A cap (0 = none) bounds the bytes held from the system (reserved), which bounds the bytes in
// live buffers too: a request that would exceed it first drops the cache, then fails with
// RESOURCE_EXHAUSTED naming the requested, in-use and cap sizes. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "switchyard/plugin_abi.h"

namespace sy_onednn {

class MemoryPool {
 public:
  explicit MemoryPool(uint64_t limit_bytes) : limit_bytes_(limit_bytes) {}
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
  void set_limit(uint64_t limit_bytes);

  // The block size a request occupies: at most 1/8 more than asked for, so cached blocks are
  // reused by requests of similar size without wasting much.
  static uint64_t block_size_for(uint64_t size_bytes);

 private:
  void* take_cached(uint64_t block_bytes);
  void* allocate_fresh(uint64_t size_bytes, uint64_t block_bytes);
  void free_cached_locked();

  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, std::vector<void*>> cached_blocks_;
  uint64_t allocated_bytes_ = 0;
  uint64_t reserved_bytes_ = 0;
  uint64_t peak_allocated_bytes_ = 0;
  uint64_t allocation_count_ = 0;
  uint64_t limit_bytes_ = 0;
};

}  // namespace sy_onednn
