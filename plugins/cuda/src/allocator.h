// A caching allocator for one device, in the spirit of PyTorch's: freed blocks stay reserved and
// are reused by later allocations of a similar size; empty_cache returns them to the driver. The
// statistics, size classes and cap follow switchyard/plugin_support/memory_accounting.h: a new
// block that would take reserved memory over the cap first returns cached blocks, largest first,
// until it fits.
//
// Reuse is stream-ordered and costs nothing in the common one-queue case. A freed block
// remembers the streams whose queued work may still touch it. Its next owner's first use on one
// of those streams needs nothing (the stream runs in order); its first use on another stream
// records an event on each remembered stream at that moment (after all of the old work) and makes
// the new stream wait for it on the GPU. The host never blocks to recycle memory, except in
// empty_cache and when the cap forces cached blocks back to the driver.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "driver.h"
#include "status.h"
#include "switchyard/plugin_abi.h"
#include "switchyard/plugin_support/block_cache.h"
#include "switchyard/plugin_support/memory_accounting.h"

namespace sy_cuda {

struct CudaBuffer {
  CUdeviceptr ptr = 0;
  uint64_t size_bytes = 0;              // as requested; tensor bounds are checked against this
  uint64_t block_bytes = 0;             // as held from the pool (a size class or a cached fit)
  std::vector<CUstream> used_on;        // streams with work that refers to this buffer
  std::vector<CUstream> inherited;      // streams whose earlier owners' work may still run
  std::vector<CUstream> ordered_after;  // streams already made to wait for `inherited`
};

class CachingAllocator {
 public:
  // The device's context must be current whenever any member is called.
  CachingAllocator(const DriverApi& api, uint64_t device_total_bytes);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // RESOURCE_EXHAUSTED over the cap (naming requested, in-use, reserved and cap sizes) or when the
  // device is out of memory even after the cache was returned to the driver.
  Status allocate(uint64_t size_bytes, CudaBuffer** out);
  // Ignores a buffer it does not hold (a second release).
  void release(CudaBuffer* buffer);
  // Orders `stream` after the earlier owners' work and records that `stream` uses the buffer.
  // Every op, read and write calls it for each buffer it touches, before enqueueing.
  Status use_on(CudaBuffer* buffer, CUstream stream);
  // After `stream` was synchronised and before it is destroyed: forgets it everywhere.
  void forget_stream(CUstream stream);

  Status empty_cache();
  sy_memory_stats stats() const;
  void reset_peak();
  void set_limit(uint64_t limit_bytes);  // 0 removes the cap

 private:
  struct FreeBlock {
    CUdeviceptr ptr;
    std::vector<CUstream> pending;  // streams whose queued work may still touch the block
  };

  Status allocate_block(uint64_t size_bytes, uint64_t rounded, CUdeviceptr* ptr);
  void free_cached_until(uint64_t reserved_target);  // frees cached blocks, largest first
  Status order_after(CUstream stream, CUstream earlier);

  const DriverApi& api_;
  const uint64_t device_total_bytes_;
  mutable std::mutex mutex_;
  sy_support::PoolAccounting accounting_;
  sy_support::BlockCache<FreeBlock> free_blocks_;
  std::unordered_set<CudaBuffer*> live_;
  CUevent ordering_event_ = nullptr;  // re-recorded for every cross-stream ordering
};

}  // namespace sy_cuda
