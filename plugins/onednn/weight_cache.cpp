#include "weight_cache.h"

#include <cstring>
#include <string>

#include "error.h"

namespace sy_onednn {

std::shared_ptr<const void> WeightCache::find(uint64_t buffer_id, const void* data,
                                              const dnnl::memory::desc& user,
                                              const dnnl::memory::desc& internal) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto found = entries_.find(buffer_id);
  if (found == entries_.end()) return nullptr;
  for (const Entry& entry : found->second) {
    if (entry.data == data && entry.user == user && entry.internal == internal) return entry.bytes;
  }
  return nullptr;
}

std::shared_ptr<const void> WeightCache::put(uint64_t buffer_id, const void* data,
                                             const dnnl::memory::desc& user,
                                             const dnnl::memory::desc& internal,
                                             const void* converted) {
  const size_t size = internal.get_size();
  uint64_t block_bytes = 0;
  std::string over_cap;
  void* copy = pool_.allocate(size, &block_bytes, &over_cap);
  if (copy == nullptr) return nullptr;  // over the device's cap: run without keeping it
  std::memcpy(copy, converted, size);
  MemoryPool* pool = &pool_;
  std::shared_ptr<const void> bytes(copy,
                                    [pool](const void* p) { pool->release(const_cast<void*>(p)); });
  const std::lock_guard<std::mutex> lock(mutex_);
  entries_[buffer_id].push_back(Entry{data, user, internal, bytes});
  return bytes;
}

void WeightCache::forget(uint64_t buffer_id) {
  std::vector<Entry> dropped;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto found = entries_.find(buffer_id);
    if (found == entries_.end()) return;
    dropped = std::move(found->second);
    entries_.erase(found);
  }
  // `dropped` gives its memory back to the pool here, outside the lock.
}

}  // namespace sy_onednn
