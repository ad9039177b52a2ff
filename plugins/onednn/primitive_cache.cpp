#include "primitive_cache.h"

#include <cstring>

namespace sy_onednn {

CacheKeyBuilder& CacheKeyBuilder::add_double(double value) {
  int64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return add(bits);
}

CacheKeyBuilder& CacheKeyBuilder::add_view(const TensorView& view) {
  add(static_cast<int64_t>(view.dtype) << 8 | view.rank);
  for (int d = 0; d < view.rank; ++d) add(view.shape[d]).add(view.strides[d]);
  return *this;
}

CacheKey CacheKeyBuilder::finish() {
  CacheKey key;
  uint64_t hash = 1469598103934665603ull;  // FNV-1a over the words
  for (int64_t word : words_) {
    hash ^= static_cast<uint64_t>(word);
    hash *= 1099511628211ull;
    hash ^= hash >> 29;
  }
  key.hash = static_cast<size_t>(hash);
  key.words = std::move(words_);
  return key;
}

std::shared_ptr<const CachedPrimitive> PrimitiveCache::find(const CacheKey& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = slots_.find(key);
  if (it == slots_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second.lru_position);
  return it->second.entry;
}

std::shared_ptr<const CachedPrimitive> PrimitiveCache::insert(
    const CacheKey& key, std::shared_ptr<const CachedPrimitive> entry) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = slots_.find(key);
  if (it != slots_.end()) return it->second.entry;
  lru_.push_front(key);
  slots_.emplace(key, Slot{entry, lru_.begin()});
  while (slots_.size() > capacity_) {
    slots_.erase(lru_.back());
    lru_.pop_back();
  }
  return entry;
}

size_t PrimitiveCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return slots_.size();
}

}  // namespace sy_onednn
