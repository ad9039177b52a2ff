// HostArena: bump allocation of host-visible, coherent memory for one command batch.
//
// A batch writes each dispatch's parameter block and each buffer_write's staging copy here; the
// GPU reads them when the batch runs, and the arena is reset once the batch's fence has signalled.
#pragma once

#include <cstdint>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "status.h"

namespace sy_vk {

class VulkanDevice;

// A piece of an arena chunk: bind `buffer` at `offset`, or write through `host`.
struct HostSlice {
  VkBuffer buffer = VK_NULL_HANDLE;
  uint64_t offset = 0;
  uint8_t* host = nullptr;
};

class HostArena {
 public:
  explicit HostArena(VulkanDevice& device) : device_(&device) {}
  ~HostArena();
  HostArena(HostArena&& other) noexcept;
  HostArena(const HostArena&) = delete;
  HostArena& operator=(const HostArena&) = delete;
  HostArena& operator=(HostArena&&) = delete;

  Status allocate(uint64_t size_bytes, uint64_t alignment, HostSlice* out);
  // Makes every chunk empty again; chunks much larger than usual are freed.
  void reset();
  uint64_t capacity_bytes() const;

 private:
  struct Chunk {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    uint8_t* host = nullptr;
    uint64_t capacity = 0;
    uint64_t used = 0;
  };
  Status add_chunk(uint64_t capacity_bytes);
  void destroy_chunk(Chunk& chunk);

  VulkanDevice* device_;
  std::vector<Chunk> chunks_;
  size_t current_ = 0;
};

}  // namespace sy_vk
