#include "memory_pool.h"

#include <algorithm>
#include <bit>
#include <cstdlib>

#include "error.h"

namespace sy_onednn {
namespace {

constexpr uint64_t kMinBlockBytes = 512;
// Large blocks start on a page so that oneDNN's kernels see page-aligned operands.
constexpr uint64_t kPageAlignFromBytes = 64 * 1024;

}  // namespace

MemoryPool::~MemoryPool() {
  std::lock_guard<std::mutex> lock(mutex_);
  free_cached_locked();
}

uint64_t MemoryPool::block_size_for(uint64_t size_bytes) {
  if (size_bytes <= kMinBlockBytes) return kMinBlockBytes;
  if (size_bytes <= 4096)
    return (size_bytes + kMinBlockBytes - 1) / kMinBlockBytes * kMinBlockBytes;
  uint64_t step = std::bit_floor(size_bytes) / 8;
  return (size_bytes + step - 1) / step * step;
}

void* MemoryPool::take_cached(uint64_t block_bytes) {
  auto it = cached_blocks_.find(block_bytes);
  if (it == cached_blocks_.end() || it->second.empty()) return nullptr;
  void* data = it->second.back();
  it->second.pop_back();
  return data;
}

void* MemoryPool::allocate_fresh(uint64_t size_bytes, uint64_t block_bytes) {
  if (limit_bytes_ != 0 && reserved_bytes_ + block_bytes > limit_bytes_) free_cached_locked();
  if (limit_bytes_ != 0 && reserved_bytes_ + block_bytes > limit_bytes_) {
    fail(SY_STATUS_RESOURCE_EXHAUSTED,
         cat("onednn: cannot allocate ", size_bytes, " bytes (block of ", block_bytes,
             " bytes): ", allocated_bytes_, " bytes in use, ", reserved_bytes_,
             " bytes reserved, cap ", limit_bytes_, " bytes"));
  }
  size_t alignment = block_bytes >= kPageAlignFromBytes ? 4096 : 64;
  void* data = nullptr;
  if (posix_memalign(&data, alignment, block_bytes) != 0) {
    free_cached_locked();
    if (posix_memalign(&data, alignment, block_bytes) != 0) {
      fail(SY_STATUS_RESOURCE_EXHAUSTED,
           cat("onednn: the system refused ", block_bytes, " bytes for a buffer of ", size_bytes,
               " bytes: ", allocated_bytes_, " bytes in use, cap ", limit_bytes_, " bytes"));
    }
  }
  reserved_bytes_ += block_bytes;
  return data;
}

void* MemoryPool::allocate(uint64_t size_bytes, uint64_t* block_bytes) {
  uint64_t block = block_size_for(size_bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  void* data = take_cached(block);
  if (data == nullptr) data = allocate_fresh(size_bytes, block);
  allocated_bytes_ += block;
  allocation_count_ += 1;
  peak_allocated_bytes_ = std::max(peak_allocated_bytes_, allocated_bytes_);
  *block_bytes = block;
  return data;
}

void MemoryPool::release(void* data, uint64_t block_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  allocated_bytes_ -= block_bytes;
  allocation_count_ -= 1;
  if (limit_bytes_ != 0 && reserved_bytes_ > limit_bytes_) {
    std::free(data);  // over a lowered cap: give the block back instead of caching it
    reserved_bytes_ -= block_bytes;
    return;
  }
  cached_blocks_[block_bytes].push_back(data);
}

void MemoryPool::free_cached_locked() {
  for (auto& [block_bytes, blocks] : cached_blocks_) {
    for (void* data : blocks) std::free(data);
    reserved_bytes_ -= block_bytes * blocks.size();
  }
  cached_blocks_.clear();
}

sy_memory_stats MemoryPool::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  sy_memory_stats stats{};
  stats.allocated_bytes = allocated_bytes_;
  stats.reserved_bytes = reserved_bytes_;
  stats.peak_allocated_bytes = peak_allocated_bytes_;
  stats.limit_bytes = limit_bytes_;
  stats.allocation_count = allocation_count_;
  return stats;
}

void MemoryPool::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  peak_allocated_bytes_ = allocated_bytes_;
}

void MemoryPool::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  free_cached_locked();
}

void MemoryPool::set_limit(uint64_t limit_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  limit_bytes_ = limit_bytes;
  if (limit_bytes_ != 0 && reserved_bytes_ > limit_bytes_) free_cached_locked();
}

}  // namespace sy_onednn
