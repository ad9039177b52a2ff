#include "host_arena.h"

#include <algorithm>

#include "device.h"

namespace sy_vk {
namespace {
constexpr uint64_t kChunkBytes = 256 * 1024;
// Chunks above this size (big uploads) are given back when the batch is recycled.
constexpr uint64_t kKeepChunkBytes = 4 * 1024 * 1024;
}  // namespace

HostArena::~HostArena() {
  for (Chunk& chunk : chunks_) destroy_chunk(chunk);
}

HostArena::HostArena(HostArena&& other) noexcept
    : device_(other.device_), chunks_(std::move(other.chunks_)), current_(other.current_) {
  other.chunks_.clear();
  other.current_ = 0;
}

Status HostArena::allocate(uint64_t size_bytes, uint64_t alignment, HostSlice* out) {
  alignment = std::max<uint64_t>(alignment, 16);
  size_bytes = std::max<uint64_t>(size_bytes, 4);
  for (; current_ < chunks_.size(); ++current_) {
    Chunk& chunk = chunks_[current_];
    const uint64_t offset = (chunk.used + alignment - 1) / alignment * alignment;
    if (offset + size_bytes <= chunk.capacity) {
      chunk.used = offset + size_bytes;
      *out = {chunk.buffer, offset, chunk.host + offset};
      return ok_status();
    }
  }
  SY_VK_RETURN_IF_ERROR(add_chunk(std::max(kChunkBytes, size_bytes)));
  Chunk& chunk = chunks_.back();
  current_ = chunks_.size() - 1;
  chunk.used = size_bytes;
  *out = {chunk.buffer, 0, chunk.host};
  return ok_status();
}

void HostArena::reset() {
  std::vector<Chunk> kept;
  for (Chunk& chunk : chunks_) {
    if (chunk.capacity > kKeepChunkBytes) {
      destroy_chunk(chunk);
    } else {
      chunk.used = 0;
      kept.push_back(chunk);
    }
  }
  chunks_ = std::move(kept);
  current_ = 0;
}

uint64_t HostArena::capacity_bytes() const {
  uint64_t total = 0;
  for (const Chunk& chunk : chunks_) total += chunk.capacity;
  return total;
}

Status HostArena::add_chunk(uint64_t capacity_bytes) {
  const VulkanApi& vk = device_->api();
  const VkDevice device = device_->handle();
  Chunk chunk;
  chunk.capacity = capacity_bytes;
  VkBufferCreateInfo buffer_info{};
  buffer_info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  buffer_info.size = capacity_bytes;
  buffer_info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                      VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  SY_VK_CALL(vk.vkCreateBuffer(device, &buffer_info, nullptr, &chunk.buffer), "vkCreateBuffer");
  VkMemoryRequirements requirements{};
  vk.vkGetBufferMemoryRequirements(device, chunk.buffer, &requirements);
  VkMemoryAllocateInfo allocate_info{};
  allocate_info.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  allocate_info.allocationSize = requirements.size;
  allocate_info.memoryTypeIndex = device_->host_memory_type();
  VkResult result = vk.vkAllocateMemory(device, &allocate_info, nullptr, &chunk.memory);
  if (result == VK_SUCCESS) result = vk.vkBindBufferMemory(device, chunk.buffer, chunk.memory, 0);
  void* host = nullptr;
  if (result == VK_SUCCESS)
    result = vk.vkMapMemory(device, chunk.memory, 0, VK_WHOLE_SIZE, 0, &host);
  if (result != VK_SUCCESS) {
    destroy_chunk(chunk);
    return vk_failure(
        result, "vkAllocateMemory (host staging of " + std::to_string(capacity_bytes) + " bytes)");
  }
  chunk.host = static_cast<uint8_t*>(host);
  chunks_.push_back(chunk);
  return ok_status();
}

void HostArena::destroy_chunk(Chunk& chunk) {
  const VulkanApi& vk = device_->api();
  if (chunk.buffer != VK_NULL_HANDLE) vk.vkDestroyBuffer(device_->handle(), chunk.buffer, nullptr);
  if (chunk.memory != VK_NULL_HANDLE) vk.vkFreeMemory(device_->handle(), chunk.memory, nullptr);
  chunk = Chunk{};
}

}  // namespace sy_vk
