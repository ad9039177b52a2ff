// MemoryObjects: the oneDNN memory objects a queue hands to primitives, kept and pointed at each
// call's data (dnnl_memory_set_data_handle) instead of made anew for every argument of every call.
// Making one allocates a descriptor of over 1 KiB, which with the std::unordered_map that
// dnnl::primitive::execute takes cost about 4 us per convolution: 0.2 of MobileNetV2's 4.8 ms at
// batch 1 on a 2-core Zen 4.
//
// Keyed by the descriptor's address (a cached primitive's member) and the argument it is passed
// as, and checked by value, so that a descriptor at a reused address still gets a memory object of
// its own layout. Not thread-safe: one per queue, like the queue's workspace.
#pragma once

#include <cstddef>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <utility>

namespace sy_onednn {

class MemoryObjects {
 public:
  MemoryObjects() = default;
  MemoryObjects(const MemoryObjects&) = delete;
  MemoryObjects& operator=(const MemoryObjects&) = delete;

  // A memory object of layout `desc` over `data`, valid until the next trim(). Throws
  // dnnl::error.
  dnnl_memory_t get(const dnnl::memory::desc& desc, int arg, const dnnl::engine& engine,
                    void* data);
  // Lets every kept object go once more than kMaxKept are held (descriptors of evicted
  // primitives); call before a call's first get().
  void trim();

 private:
  static constexpr size_t kMaxKept = 4096;
  struct KeyHash {
    size_t operator()(const std::pair<const void*, int>& key) const {
      return std::hash<const void*>()(key.first) ^ (static_cast<size_t>(key.second) << 1);
    }
  };
  struct Entry {
    dnnl::memory::desc desc;
    dnnl::memory memory;
  };
  std::unordered_map<std::pair<const void*, int>, Entry, KeyHash> entries_;
};

}  // namespace sy_onednn
