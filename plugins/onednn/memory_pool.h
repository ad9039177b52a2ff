// MemoryPool: the device's caching allocator of host memory, sy_support::HostPool
// (switchyard/plugin_support/host_pool.h: size classes, the cache, the cap and its messages,
// page-aligned large blocks), with allocation failures raised as this plugin's errors.
// Thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "error.h"
#include "switchyard/plugin_support/host_pool.h"

namespace sy_onednn {

class MemoryPool : public sy_support::HostPool {
 public:
  explicit MemoryPool(uint64_t limit_bytes) : HostPool("onednn", limit_bytes) {}

  // At least size_bytes, and the block size it occupies. Throws PluginError (RESOURCE_EXHAUSTED)
  // over the cap or out of memory, naming the sizes.
  void* allocate_or_throw(uint64_t size_bytes, uint64_t* block_bytes) {
    std::string error;
    void* data = allocate(size_bytes, block_bytes, &error);
    if (data == nullptr) fail(SY_STATUS_RESOURCE_EXHAUSTED, error);
    return data;
  }
};

}  // namespace sy_onednn
