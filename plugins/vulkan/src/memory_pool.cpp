#include "memory_pool.h"

#include <memory>

#include "device.h"

namespace sy_vk {
namespace {

constexpr const char* kPoolName = "vulkan";

}  // namespace

MemoryPool::MemoryPool(VulkanDevice& device, uint64_t limit_bytes)
    : device_(device), accounting_(limit_bytes) {}

MemoryPool::~MemoryPool() {
  std::lock_guard<std::mutex> lock(mutex_);
  free_cached_locked(/*only_idle=*/false);
  // The host should have released everything; anything left is freed with the device.
  for (DeviceBlock* block : live_) destroy_block(block);
  live_.clear();
}

Status MemoryPool::allocate(uint64_t size_bytes, DeviceBlock** out) {
  const uint64_t capacity = sy_support::size_class(size_bytes);
  const uint64_t max_allocation = device_.physical().maintenance3.maxMemoryAllocationSize;
  std::lock_guard<std::mutex> lock(mutex_);
  if (max_allocation != 0 && capacity > max_allocation) {
    return resource_exhausted(accounting_.refused_message(
        kPoolName, size_bytes, capacity,
        "the device's largest single allocation is " + format_bytes(max_allocation)));
  }
  const auto cached = cached_.take(capacity);
  DeviceBlock* block = cached ? cached->block : nullptr;
  if (block == nullptr) {
    if (!accounting_.make_room(capacity, [&] { free_cached_locked(/*only_idle=*/true); })) {
      return resource_exhausted(accounting_.over_cap_message(kPoolName, size_bytes, capacity));
    }
    Status created = create_block(capacity, &block);
    if (created.code() == SY_STATUS_RESOURCE_EXHAUSTED) {
      free_cached_locked(/*only_idle=*/true);
      created = create_block(capacity, &block);
    }
    if (!created.ok()) {
      return Status(created.code(), accounting_.refused_message(kPoolName, size_bytes, capacity,
                                                                created.message()));
    }
    accounting_.on_reserve(capacity);
  }
  block->requested_bytes = size_bytes;
  live_.insert(block);
  accounting_.on_allocate(block->capacity_bytes);
  *out = block;
  return ok_status();
}

void MemoryPool::release(DeviceBlock* block) {
  std::lock_guard<std::mutex> lock(mutex_);
  release_locked(block);
}

void MemoryPool::release_locked(DeviceBlock* block) {
  if (live_.count(block) == 0) return;
  if (block->graph_refs > 0) {  // a graph will use it again: cached only once none does
    block->parked = true;
    return;
  }
  live_.erase(block);
  accounting_.on_release(block->capacity_bytes);
  block->requested_bytes = 0;
  cached_.put(block->capacity_bytes, block);
}

void MemoryPool::capture_ref(DeviceBlock* block) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++block->graph_refs;
}

void MemoryPool::capture_unref(DeviceBlock* block) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (block->graph_refs > 0 && --block->graph_refs == 0 && block->parked) {
    block->parked = false;
    release_locked(block);
  }
}

void MemoryPool::free_cached(bool only_idle) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_cached_locked(only_idle);
}

void MemoryPool::free_cached_locked(bool only_idle) {
  const auto can_free = [&](uint64_t, DeviceBlock* block) {
    return !only_idle || device_.serials().is_complete(block->last_use_serial.load());
  };
  accounting_.on_unreserve(
      cached_.drain_if(can_free, [&](uint64_t, DeviceBlock* block) { destroy_block(block); }));
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
  return accounting_.stats();
}

void MemoryPool::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  accounting_.reset_peak();
}

void MemoryPool::set_limit(uint64_t limit_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  accounting_.set_limit(limit_bytes);
}

bool MemoryPool::owns(const DeviceBlock* block) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_.count(const_cast<DeviceBlock*>(block)) != 0;
}

}  // namespace sy_vk
