#include "memory_pool.h"

#include <new>
#include <string>

#include "error.h"

namespace sy_reference {
namespace {

constexpr std::align_val_t kBlockAlignment{64};
constexpr uint64_t kSmallGranularityBytes = 512;
constexpr uint64_t kLargeGranularityBytes = 64 * 1024;
constexpr uint64_t kLargeBlockBytes = 1024 * 1024;

// Rounds a request up so that nearby sizes share cached blocks.
uint64_t block_size_for(uint64_t size_bytes) {
  const uint64_t granularity =
      size_bytes >= kLargeBlockBytes ? kLargeGranularityBytes : kSmallGranularityBytes;
  const uint64_t at_least_one = size_bytes == 0 ? 1 : size_bytes;
  return (at_least_one + granularity - 1) / granularity * granularity;
}

void free_block(std::byte* block) {
  ::operator delete(block, kBlockAlignment);
}

}  // namespace

MemoryPool::MemoryPool(uint64_t limit_bytes) : limit_bytes_(limit_bytes) {}

MemoryPool::~MemoryPool() {
  for (const sy_buffer_s* buffer : live_buffers_) {
    free_block(buffer->data);
    delete buffer;
  }
  free_cache_locked();
}

sy_buffer_s* MemoryPool::allocate(uint64_t size_bytes) {
  const uint64_t block_bytes = block_size_for(size_bytes);
  std::lock_guard lock(mutex_);
  std::byte* block = take_cached_block(block_bytes);
  if (block == nullptr) block = allocate_system_block(size_bytes, block_bytes);
  auto* buffer = new sy_buffer_s{block, size_bytes, block_bytes};
  live_buffers_.insert(buffer);
  allocated_bytes_ += block_bytes;
  if (allocated_bytes_ > peak_allocated_bytes_) peak_allocated_bytes_ = allocated_bytes_;
  return buffer;
}

// Reuses a cached block of exactly the rounded size (sizes are rounded, so repeated requests of a
// similar size match exactly and the statistics stay simple).
std::byte* MemoryPool::take_cached_block(uint64_t block_bytes) {
  const auto found = cached_blocks_.find(block_bytes);
  if (found == cached_blocks_.end()) return nullptr;
  std::byte* block = found->second;
  cached_blocks_.erase(found);
  return block;
}

std::byte* MemoryPool::allocate_system_block(uint64_t size_bytes, uint64_t block_bytes) {
  if (limit_bytes_ != 0 && reserved_bytes_ + block_bytes > limit_bytes_) free_cache_locked();
  if (limit_bytes_ != 0 && allocated_bytes_ + block_bytes > limit_bytes_) {
    raise(SY_STATUS_RESOURCE_EXHAUSTED,
          "reference: cannot allocate " + std::to_string(size_bytes) +
              " bytes: " + std::to_string(allocated_bytes_) +
              " bytes are in use and the memory cap is " + std::to_string(limit_bytes_) +
              " bytes (memory_limit_bytes / memory_fraction); try a smaller batch size or "
              "raise the cap");
  }
  auto* block = static_cast<std::byte*>(::operator new(block_bytes, kBlockAlignment, std::nothrow));
  if (block == nullptr) {
    free_cache_locked();
    block = static_cast<std::byte*>(::operator new(block_bytes, kBlockAlignment, std::nothrow));
  }
  if (block == nullptr) {
    raise(SY_STATUS_RESOURCE_EXHAUSTED, "reference: the system could not provide " +
                                            std::to_string(size_bytes) + " bytes (" +
                                            std::to_string(allocated_bytes_) +
                                            " bytes in use, no cap set); try a smaller batch size");
  }
  reserved_bytes_ += block_bytes;
  return block;
}

void MemoryPool::release(sy_buffer_s* buffer) {
  std::lock_guard lock(mutex_);
  if (live_buffers_.erase(buffer) == 0) return;
  allocated_bytes_ -= buffer->block_bytes;
  cached_blocks_.emplace(buffer->block_bytes, buffer->data);
  delete buffer;
}

bool MemoryPool::owns(const sy_buffer_s* buffer) const {
  std::lock_guard lock(mutex_);
  return live_buffers_.count(buffer) != 0;
}

sy_memory_stats MemoryPool::stats() const {
  std::lock_guard lock(mutex_);
  sy_memory_stats stats{};
  stats.allocated_bytes = allocated_bytes_;
  stats.reserved_bytes = reserved_bytes_;
  stats.peak_allocated_bytes = peak_allocated_bytes_;
  stats.limit_bytes = limit_bytes_;
  stats.allocation_count = live_buffers_.size();
  return stats;
}

void MemoryPool::reset_peak() {
  std::lock_guard lock(mutex_);
  peak_allocated_bytes_ = allocated_bytes_;
}

void MemoryPool::empty_cache() {
  std::lock_guard lock(mutex_);
  free_cache_locked();
}

void MemoryPool::set_limit(uint64_t limit_bytes) {
  std::lock_guard lock(mutex_);
  limit_bytes_ = limit_bytes;
}

void MemoryPool::free_cache_locked() {
  for (const auto& [block_bytes, block] : cached_blocks_) {
    free_block(block);
    reserved_bytes_ -= block_bytes;
  }
  cached_blocks_.clear();
}

}  // namespace sy_reference
