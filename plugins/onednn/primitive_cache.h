// PrimitiveCache: oneDNN primitives (and what they need besides) by a key of the op's shapes,
// strides, dtypes, parameters and thread count, so that a repeated call does not re-create them.
//
// Creating a primitive descriptor costs microseconds to milliseconds (JIT code generation); a
// lookup costs one hash of a few dozen integers. Entries are immutable after insertion and shared,
// so several threads may execute one primitive at once. Least recently used entries are evicted
// beyond a fixed capacity.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "tensor_view.h"

namespace sy_onednn {

// The base of every cached entry; each op family derives its own with the primitives it needs.
struct CachedPrimitive {
  virtual ~CachedPrimitive() = default;
};

struct CacheKey {
  std::vector<int64_t> words;
  size_t hash = 0;
  bool operator==(const CacheKey& other) const { return words == other.words; }
};

struct CacheKeyHash {
  size_t operator()(const CacheKey& key) const { return key.hash; }
};

class CacheKeyBuilder {
 public:
  explicit CacheKeyBuilder(int64_t op) {
    words_.reserve(64);
    add(op);
  }
  CacheKeyBuilder& add(int64_t word) {
    words_.push_back(word);
    return *this;
  }
  CacheKeyBuilder& add_double(double value);
  // dtype, rank, shape and strides: everything of a view but its address.
  CacheKeyBuilder& add_view(const TensorView& view);
  CacheKey finish();

 private:
  std::vector<int64_t> words_;
};

class PrimitiveCache {
 public:
  explicit PrimitiveCache(size_t capacity) : capacity_(capacity) {}

  // The entry for `key`, created with make() (returning std::shared_ptr<T>) on a miss. make() runs
  // without the lock held, so two threads may both create an entry; the first insertion wins.
  template <typename T, typename Make>
  std::shared_ptr<const T> get_or_create(const CacheKey& key, Make&& make) {
    if (auto found = find(key)) return std::static_pointer_cast<const T>(found);
    std::shared_ptr<const CachedPrimitive> created = make();
    return std::static_pointer_cast<const T>(insert(key, std::move(created)));
  }

  size_t size() const;

 private:
  std::shared_ptr<const CachedPrimitive> find(const CacheKey& key);
  std::shared_ptr<const CachedPrimitive> insert(const CacheKey& key,
                                                std::shared_ptr<const CachedPrimitive> entry);

  struct Slot {
    std::shared_ptr<const CachedPrimitive> entry;
    std::list<CacheKey>::iterator lru_position;
  };

  mutable std::mutex mutex_;
  size_t capacity_;
  std::list<CacheKey> lru_;  // most recently used first
  std::unordered_map<CacheKey, Slot, CacheKeyHash> slots_;
};

}  // namespace sy_onednn
