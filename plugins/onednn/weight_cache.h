// WeightCache: weights converted to a primitive's layout, kept for the buffers a caller promised
// constant (SY_CALL_CONSTANT_WEIGHTS; the ONNX importer's initializers). A convolution's weights
// are [O, C, KH, KW] for the caller and blocked (OIhw16i16o, ...) for oneDNN's kernels: converting
// them at every call was 5.5 of ResNet-50's 56 ms at batch 1 on a 2-core Zen 4.
//
// Entries are keyed by the buffer's id (never reused, unlike its address), the weight's address
// within it and the layout converted to, and are dropped when the buffer is released. Their
// memory comes from the device's pool, so that memory_stats counts it and the cap bounds it; a
// conversion the pool cannot hold is simply not kept. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <vector>

#include "memory_pool.h"

namespace sy_onednn {

class WeightCache {
 public:
  explicit WeightCache(MemoryPool& pool) : pool_(pool) {}
  WeightCache(const WeightCache&) = delete;
  WeightCache& operator=(const WeightCache&) = delete;

  // The bytes of the weight at `data` in buffer `buffer_id`, laid out as `user`, converted to
  // `internal`, or null. The returned pointer keeps them alive while a call uses them.
  std::shared_ptr<const void> find(uint64_t buffer_id, const void* data,
                                   const dnnl::memory::desc& user,
                                   const dnnl::memory::desc& internal) const;
  // Keeps a copy of `converted` (internal.get_size() bytes) for that key, when the pool has room;
  // returns it, or null when it was not kept.
  std::shared_ptr<const void> put(uint64_t buffer_id, const void* data,
                                  const dnnl::memory::desc& user,
                                  const dnnl::memory::desc& internal, const void* converted);
  // Drops every entry of the buffer (buffer_release).
  void forget(uint64_t buffer_id);

 private:
  struct Entry {
    const void* data;
    dnnl::memory::desc user, internal;
    std::shared_ptr<const void> bytes;
  };
  MemoryPool& pool_;
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, std::vector<Entry>> entries_;
};

}  // namespace sy_onednn
