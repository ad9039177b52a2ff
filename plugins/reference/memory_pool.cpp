#include "memory_pool.h"

#include <string>

#include "error.h"

namespace sy_reference {

MemoryPool::~MemoryPool() {
  for (const sy_buffer_s* buffer : live_buffers_) delete buffer;
}

sy_buffer_s* MemoryPool::allocate(uint64_t size_bytes) {
  uint64_t block_bytes = 0;
  std::string error;
  void* data = blocks_.allocate(size_bytes, &block_bytes, &error);
  if (data == nullptr) raise(SY_STATUS_RESOURCE_EXHAUSTED, error);
  auto* buffer = new sy_buffer_s{static_cast<std::byte*>(data), size_bytes, block_bytes};
  std::lock_guard lock(mutex_);
  live_buffers_.insert(buffer);
  return buffer;
}

void MemoryPool::release(sy_buffer_s* buffer) {
  {
    std::lock_guard lock(mutex_);
    if (live_buffers_.erase(buffer) == 0) return;
  }
  blocks_.release(buffer->data);
  delete buffer;
}

bool MemoryPool::owns(const sy_buffer_s* buffer) const {
  std::lock_guard lock(mutex_);
  return live_buffers_.count(buffer) != 0;
}

}  // namespace sy_reference
