#include "memory_pool.h"

#include <new>

#include "error.h"

namespace sy_reference {
namespace {

constexpr std::align_val_t kBlockAlignment{64};
constexpr const char* kPoolName = "reference";

std::byte* new_block(uint64_t block_bytes) {
  return static_cast<std::byte*>(::operator new(block_bytes, kBlockAlignment, std::nothrow));
}

void free_block(std::byte* block) {
  ::operator delete(block, kBlockAlignment);
}

}  // namespace

MemoryPool::~MemoryPool() {
  for (const sy_buffer_s* buffer : live_buffers_) {
    free_block(buffer->data);
    delete buffer;
  }
  free_cache_locked();
}

sy_buffer_s* MemoryPool::allocate(uint64_t size_bytes) {
  const uint64_t block_bytes = sy_support::size_class(size_bytes);
  std::lock_guard lock(mutex_);
  const auto cached = cache_.take(block_bytes);
  std::byte* block = cached ? cached->block : allocate_system_block(size_bytes, block_bytes);
  auto* buffer = new sy_buffer_s{block, size_bytes, block_bytes};
  live_buffers_.insert(buffer);
  accounting_.on_allocate(block_bytes);
  return buffer;
}

std::byte* MemoryPool::allocate_system_block(uint64_t size_bytes, uint64_t block_bytes) {
  std::string error;
  std::byte* block = accounting_.reserve_block(
      kPoolName, size_bytes, block_bytes, new_block, [&] { free_cache_locked(); }, &error);
  if (block == nullptr) raise(SY_STATUS_RESOURCE_EXHAUSTED, error);
  return block;
}

void MemoryPool::release(sy_buffer_s* buffer) {
  std::lock_guard lock(mutex_);
  if (live_buffers_.erase(buffer) == 0) return;
  accounting_.on_release(buffer->block_bytes);
  cache_.put(buffer->block_bytes, buffer->data);
  delete buffer;
}

bool MemoryPool::owns(const sy_buffer_s* buffer) const {
  std::lock_guard lock(mutex_);
  return live_buffers_.count(buffer) != 0;
}

sy_memory_stats MemoryPool::stats() const {
  std::lock_guard lock(mutex_);
  return accounting_.stats();
}

void MemoryPool::reset_peak() {
  std::lock_guard lock(mutex_);
  accounting_.reset_peak();
}

void MemoryPool::empty_cache() {
  std::lock_guard lock(mutex_);
  free_cache_locked();
}

void MemoryPool::set_limit(uint64_t limit_bytes) {
  std::lock_guard lock(mutex_);
  accounting_.set_limit(limit_bytes);
}

void MemoryPool::free_cache_locked() {
  accounting_.on_unreserve(cache_.drain([](uint64_t, std::byte* block) { free_block(block); }));
}

}  // namespace sy_reference
