// MemoryPool: the device's caching allocator for tensor memory.
//
// Each block is one VkBuffer bound to its own VkDeviceMemory. A released block goes back to a
// cache keyed by its rounded size and is handed out again without calling the driver. The pool
// keeps the statistics of the ABI (allocated / reserved / peak / limit / count) and enforces the
// cap: a request that would take reserved memory over it first frees idle cached blocks, then fails
// with RESOURCE_EXHAUSTED naming the requested, in-use and cap sizes.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_set>

#include <vulkan/vulkan_core.h>

#include "status.h"
#include "switchyard/plugin_abi.h"

namespace sy_vk {

class VulkanDevice;

// A tensor buffer. The host's sy_buffer handle points at one of these.
struct DeviceBlock {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint64_t capacity_bytes = 0;   // rounded size, what the driver gave
  uint64_t requested_bytes = 0;  // what the host asked for (while live)
  void* mapped = nullptr;        // host address when the memory is host-visible and coherent
  // Serial of the last command batch that used the block (see SerialTracker).
  std::atomic<uint64_t> last_use_serial{0};
};

class MemoryPool {
 public:
  MemoryPool(VulkanDevice& device, uint64_t limit_bytes);
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  Status allocate(uint64_t size_bytes, DeviceBlock** out);
  // Returns the block to the cache. The GPU may still be using it; it is only destroyed once
  // idle (free_cached) or at pool destruction, after the device is idle.
  void release(DeviceBlock* block);
  // Destroys cached blocks; with only_idle, only those no pending batch can touch.
  void free_cached(bool only_idle);

  sy_memory_stats stats() const;
  void reset_peak();
  void set_limit(uint64_t limit_bytes);
  bool owns(const DeviceBlock* block) const;

 private:
  Status create_block(uint64_t capacity_bytes, DeviceBlock** out);
  void destroy_block(DeviceBlock* block);
  DeviceBlock* take_cached(uint64_t capacity_bytes);
  void free_cached_locked(bool only_idle);
  Status over_limit_error(uint64_t size_bytes, uint64_t capacity_bytes) const;

  VulkanDevice& device_;
  mutable std::mutex mutex_;
  std::multimap<uint64_t, DeviceBlock*> cached_;
  std::unordered_set<DeviceBlock*> live_;
  uint64_t allocated_bytes_ = 0;
  uint64_t reserved_bytes_ = 0;
  uint64_t peak_allocated_bytes_ = 0;
  uint64_t limit_bytes_ = 0;
};

// The size class a request is rounded to: 256-byte steps below 1 MiB, then eight steps per
// power of two, so that a reused block wastes at most an eighth.
uint64_t pool_capacity_for(uint64_t size_bytes);

}  // namespace sy_vk
