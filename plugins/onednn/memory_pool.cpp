#include "memory_pool.h"

#include <cstdlib>

#include "error.h"

namespace sy_onednn {
namespace {

// Large blocks start on a page so that oneDNN's kernels see page-aligned operands.
constexpr uint64_t kPageAlignFromBytes = 64 * 1024;
constexpr const char* kPoolName = "onednn";

void* new_block(uint64_t block_bytes) {
  const size_t alignment = block_bytes >= kPageAlignFromBytes ? 4096 : 64;
  void* data = nullptr;
  return posix_memalign(&data, alignment, block_bytes) == 0 ? data : nullptr;
}

}  // namespace

MemoryPool::~MemoryPool() {
  std::lock_guard<std::mutex> lock(mutex_);
  free_cached_locked();
}

void* MemoryPool::allocate_fresh(uint64_t size_bytes, uint64_t block_bytes) {
  std::string error;
  void* data = accounting_.reserve_block(
      kPoolName, size_bytes, block_bytes, new_block, [&] { free_cached_locked(); }, &error);
  if (data == nullptr) fail(SY_STATUS_RESOURCE_EXHAUSTED, error);
  return data;
}

void* MemoryPool::allocate(uint64_t size_bytes, uint64_t* block_bytes) {
  const uint64_t block = sy_support::size_class(size_bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  const auto cached = cache_.take(block);
  void* data = cached ? cached->block : allocate_fresh(size_bytes, block);
  accounting_.on_allocate(block);
  *block_bytes = block;
  return data;
}

void MemoryPool::release(void* data, uint64_t block_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  accounting_.on_release(block_bytes);
  if (accounting_.over_cap()) {
    std::free(data);  // over a lowered cap: give the block back instead of caching it
    accounting_.on_unreserve(block_bytes);
    return;
  }
  cache_.put(block_bytes, data);
}

void MemoryPool::free_cached_locked() {
  accounting_.on_unreserve(cache_.drain([](uint64_t, void* data) { std::free(data); }));
}

sy_memory_stats MemoryPool::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return accounting_.stats();
}

void MemoryPool::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  accounting_.reset_peak();
}

void MemoryPool::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  free_cached_locked();
}

void MemoryPool::set_limit(uint64_t limit_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  accounting_.set_limit(limit_bytes);
  if (accounting_.over_cap()) free_cached_locked();
}

}  // namespace sy_onednn
