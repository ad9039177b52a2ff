// MemoryPool: the device's caching allocator for tensor memory.
//
// Each block is one VkBuffer bound to its own VkDeviceMemory. A released block goes back to a
// cache keyed by its size class and is handed out again without calling the driver. The pool
// keeps the statistics of the ABI (allocated / reserved / peak / limit / count) and enforces the
// cap (the policy of switchyard/plugin_support/memory_accounting.h): a request that would take
// reserved memory over it first frees idle cached blocks, then fails with RESOURCE_EXHAUSTED
// naming the requested, in-use, reserved and cap sizes.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_set>

#include <vulkan/vulkan_core.h>

#include "status.h"
#include "switchyard/plugin_abi.h"
#include "switchyard/plugin_support/block_cache.h"
#include "switchyard/plugin_support/memory_accounting.h"

namespace sy_vk {

class VulkanDevice;

// A tensor buffer. The host's sy_buffer handle points at one of these.
struct DeviceBlock {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint64_t capacity_bytes = 0;   // the size class, what the driver gave
  uint64_t requested_bytes = 0;  // what the host asked for (while live)
  void* mapped = nullptr;        // host address when the memory is host-visible and coherent
  // Serial of the last command batch that used the block (see SerialTracker).
  std::atomic<uint64_t> last_use_serial{0};
  // Captured graphs that name the block (the pool's lock guards both): a block released while
  // one does is parked, not cached, until the last of them is destroyed.
  uint32_t graph_refs = 0;
  bool parked = false;
};

class MemoryPool {
 public:
  MemoryPool(VulkanDevice& device, uint64_t limit_bytes);
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  Status allocate(uint64_t size_bytes, DeviceBlock** out);
  // Returns the block to the cache. The GPU may still be using it; it is only destroyed once
  // idle (free_cached) or at pool destruction, after the device is idle. Its next owner may use it
  // at once on the same queue (the queue runs in order); a use on another queue first submits the
  // batch of its last use (CommandQueue::order_use_locked).
  void release(DeviceBlock* block);
  // A captured graph names the block / no longer does (see DeviceBlock::graph_refs).
  void capture_ref(DeviceBlock* block);
  void capture_unref(DeviceBlock* block);
  // Destroys cached blocks; with only_idle, only those no pending batch can touch.
  void free_cached(bool only_idle);

  sy_memory_stats stats() const;
  void reset_peak();
  void set_limit(uint64_t limit_bytes);
  bool owns(const DeviceBlock* block) const;

 private:
  Status create_block(uint64_t capacity_bytes, DeviceBlock** out);
  void destroy_block(DeviceBlock* block);
  void free_cached_locked(bool only_idle);
  void release_locked(DeviceBlock* block);

  VulkanDevice& device_;
  mutable std::mutex mutex_;
  sy_support::PoolAccounting accounting_;
  sy_support::BlockCache<DeviceBlock*> cached_;
  std::unordered_set<DeviceBlock*> live_;
};

}  // namespace sy_vk
