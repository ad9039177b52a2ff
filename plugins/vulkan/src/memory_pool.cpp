#include "memory_pool.h"

#include <algorithm>

#include "device.h"

namespace sy_vk {

uint64_t pool_capacity_for(uint64_t size_bytes) {
  constexpr uint64_t kSmallStep = 256;
  constexpr uint64_t kLargeThreshold = 1ull << 20;
  if (size_bytes == 0) return kSmallStep;
  if (size_bytes < kLargeThreshold) return (size_bytes + kSmallStep - 1) / kSmallStep * kSmallStep;
  const int top_bit = 63 - __builtin_clzll(size_bytes);
  const uint64_t step = (1ull << top_bit) / 8;
  return (size_bytes + step - 1) / step * step;
}

MemoryPool::MemoryPool(VulkanDevice& device, uint64_t limit_bytes)
    : device_(device), limit_bytes_(limit_bytes) {}

MemoryPool::~MemoryPool() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [capacity, block] : cached_) destroy_block(block);
  cached_.clear();
  // The host should have released everything; anything left is freed with the device.
  for (DeviceBlock* block : live_) destroy_block(block);
  live_.clear();
}

Status MemoryPool::over_limit_error(uint64_t size_bytes, uint64_t capacity_bytes) const {
  return resource_exhausted("vulkan: allocating " + format_bytes(size_bytes) + " (pool block " +
                            format_bytes(capacity_bytes) + ") would exceed the memory limit of " +
                            format_bytes(limit_bytes_) + ": " + format_bytes(allocated_bytes_) +
                            " in use by " + std::to_string(live_.size()) + " buffers, " +
                            format_bytes(reserved_bytes_) + " reserved");
}

Status MemoryPool::allocate(uint64_t size_bytes, DeviceBlock** out) {
  const uint64_t capacity = pool_capacity_for(size_bytes);
  const uint64_t max_allocation = device_.physical().maintenance3.maxMemoryAllocationSize;
  if (max_allocation != 0 && capacity > max_allocation) {
    return resource_exhausted("vulkan: cannot allocate " + format_bytes(size_bytes) +
                              " (pool block " + format_bytes(capacity) +
                              "): the device's largest single allocation is " +
                              format_bytes(max_allocation));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  DeviceBlock* block = take_cached(capacity);
  if (block == nullptr) {
    if (limit_bytes_ != 0 && reserved_bytes_ + capacity > limit_bytes_) {
      free_cached_locked(/*only_idle=*/true);
      if (reserved_bytes_ + capacity > limit_bytes_) return over_limit_error(size_bytes, capacity);
    }
    Status created = create_block(capacity, &block);
    if (created.code() == SY_STATUS_RESOURCE_EXHAUSTED) {
      free_cached_locked(/*only_idle=*/true);
      created = create_block(capacity, &block);
    }
    if (!created.ok()) {
      return Status(created.code(), "vulkan: cannot allocate " + format_bytes(size_bytes) +
                                        " (pool block " + format_bytes(capacity) + "; " +
                                        format_bytes(allocated_bytes_) + " in use, " +
                                        format_bytes(reserved_bytes_) +
                                        " reserved): " + created.message());
    }
    reserved_bytes_ += capacity;
  }
  block->requested_bytes = size_bytes;
  live_.insert(block);
  allocated_bytes_ += block->capacity_bytes;
  peak_allocated_bytes_ = std::max(peak_allocated_bytes_, allocated_bytes_);
  *out = block;
  return ok_status();
}

DeviceBlock* MemoryPool::take_cached(uint64_t capacity_bytes) {
  auto it = cached_.find(capacity_bytes);
  if (it == cached_.end()) return nullptr;
  DeviceBlock* block = it->second;
  cached_.erase(it);
  return block;
}

void MemoryPool::release(DeviceBlock* block) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (live_.erase(block) == 0) return;
  allocated_bytes_ -= block->capacity_bytes;
  block->requested_bytes = 0;
  cached_.emplace(block->capacity_bytes, block);
}

void MemoryPool::free_cached(bool only_idle) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_cached_locked(only_idle);
}

void MemoryPool::free_cached_locked(bool only_idle) {
  for (auto it = cached_.begin(); it != cached_.end();) {
    DeviceBlock* block = it->second;
    if (only_idle && !device_.serials().is_complete(block->last_use_serial.load())) {
      ++it;
      continue;
    }
    reserved_bytes_ -= block->capacity_bytes;
    destroy_block(block);
    it = cached_.erase(it);
  }
}

Status MemoryPool::create_block(uint64_t capacity_bytes, DeviceBlock** out) {
  const VulkanApi& vk = device_.api();
  const VkDevice device = device_.handle();
  auto block = std::make_unique<DeviceBlock>();
  block->capacity_bytes = capacity_bytes;
  VkBufferCreateInfo buffer_info{};
  buffer_info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  buffer_info.size = capacity_bytes;
  buffer_info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                      VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  buffer_info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  SY_VK_CALL(vk.vkCreateBuffer(device, &buffer_info, nullptr, &block->buffer), "vkCreateBuffer");
  VkMemoryRequirements requirements{};
  vk.vkGetBufferMemoryRequirements(device, block->buffer, &requirements);
  VkMemoryAllocateInfo allocate_info{};
  allocate_info.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  allocate_info.allocationSize = requirements.size;
  allocate_info.memoryTypeIndex = device_.device_memory_type();
  VkResult result = vk.vkAllocateMemory(device, &allocate_info, nullptr, &block->memory);
  if (result == VK_SUCCESS) result = vk.vkBindBufferMemory(device, block->buffer, block->memory, 0);
  if (result == VK_SUCCESS && device_.device_memory_mapped()) {
    result = vk.vkMapMemory(device, block->memory, 0, VK_WHOLE_SIZE, 0, &block->mapped);
  }
  if (result != VK_SUCCESS) {
    destroy_block(block.release());
    return vk_failure(result, "vkAllocateMemory");
  }
  *out = block.release();
  return ok_status();
}

void MemoryPool::destroy_block(DeviceBlock* block) {
  const VulkanApi& vk = device_.api();
  if (block->buffer != VK_NULL_HANDLE) vk.vkDestroyBuffer(device_.handle(), block->buffer, nullptr);
  if (block->memory != VK_NULL_HANDLE) vk.vkFreeMemory(device_.handle(), block->memory, nullptr);
  delete block;
}

sy_memory_stats MemoryPool::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  sy_memory_stats stats{};
  stats.allocated_bytes = allocated_bytes_;
  stats.reserved_bytes = reserved_bytes_;
  stats.peak_allocated_bytes = peak_allocated_bytes_;
  stats.limit_bytes = limit_bytes_;
  stats.allocation_count = live_.size();
  return stats;
}

void MemoryPool::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  peak_allocated_bytes_ = allocated_bytes_;
}

void MemoryPool::set_limit(uint64_t limit_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  limit_bytes_ = limit_bytes;
}

bool MemoryPool::owns(const DeviceBlock* block) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_.count(const_cast<DeviceBlock*>(block)) != 0;
}

}  // namespace sy_vk
