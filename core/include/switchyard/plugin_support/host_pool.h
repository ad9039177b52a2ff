// HostPool: the caching allocator of host memory that the CPU plugins (reference, onednn) share,
// with the statistics and the cap the ABI exposes (issue 28: the two pools had drifted apart).
//
// - Blocks are 64-byte aligned; from 64 KiB on they start on a 4 KiB page, so that kernels
// (oneDNN's
//   among them) see page-aligned operands.
// - A released block is kept, by size class, for reuse (block_cache.h); empty_cache() gives the
//   cache back. The cap (0 = none) bounds the bytes held from the system (reserved): a request that
//   would exceed it first drops the cache, then fails with the sizes named (the policy of
//   memory_accounting.h). Lowering the cap below what is reserved gives the cache back at once, and
//   a block released while over the cap is freed instead of cached.
// - The pool knows its live blocks: release() of a block it does not own is ignored and says so,
//   and destroying the pool frees every block, live or cached, so a buffer the host forgot to
//   release does not leak.
//
// Thread-safe: every member may be called from any thread. Part of plugin_support: header-only,
// depends only on the C++ standard library and plugin_abi.h.
#pragma once

#include <cstdint>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "switchyard/plugin_abi.h"
#include "switchyard/plugin_support/block_cache.h"
#include "switchyard/plugin_support/memory_accounting.h"

namespace sy_support {

class HostPool {
 public:
  // `name` names the pool in over-cap and out-of-memory messages ("onednn"); limit_bytes = 0 means
  // no cap.
  HostPool(std::string name, uint64_t limit_bytes)
      : name_(std::move(name)), accounting_(limit_bytes) {}
  ~HostPool() {
    std::lock_guard lock(mutex_);
    for (const auto& [data, block_bytes] : live_) free_block(const_cast<void*>(data), block_bytes);
    live_.clear();
    free_cache_locked();
  }
  HostPool(const HostPool&) = delete;
  HostPool& operator=(const HostPool&) = delete;

  // At least size_bytes of aligned memory, and (in *block_bytes) the size of the block it takes.
  // Null when over the cap or out of memory, with *error naming the requested, in-use, reserved and
  // cap sizes.
  void* allocate(uint64_t size_bytes, uint64_t* block_bytes, std::string* error) {
    const uint64_t block = size_class(size_bytes);
    std::lock_guard lock(mutex_);
    const auto cached = cache_.take(block);
    void* data =
        cached ? cached->block
               : accounting_.reserve_block(
                     name_, size_bytes, block, new_block, [&] { free_cache_locked(); }, error);
    if (data == nullptr) return nullptr;
    live_.emplace(data, block);
    accounting_.on_allocate(block);
    *block_bytes = block;
    return data;
  }

  // Gives a live block back to the cache (or to the system, over a lowered cap). False, and
  // nothing done, when `data` is not a live block of this pool.
  bool release(void* data) {
    std::lock_guard lock(mutex_);
    const auto found = live_.find(data);
    if (found == live_.end()) return false;
    const uint64_t block_bytes = found->second;
    live_.erase(found);
    accounting_.on_release(block_bytes);
    if (accounting_.over_cap()) {
      free_block(data, block_bytes);
      accounting_.on_unreserve(block_bytes);
    } else {
      cache_.put(block_bytes, data);
    }
    return true;
  }

  bool owns(const void* data) const {
    std::lock_guard lock(mutex_);
    return live_.count(data) != 0;
  }

  sy_memory_stats stats() const {
    std::lock_guard lock(mutex_);
    return accounting_.stats();
  }

  void reset_peak() {
    std::lock_guard lock(mutex_);
    accounting_.reset_peak();
  }

  void empty_cache() {
    std::lock_guard lock(mutex_);
    free_cache_locked();
  }

  void set_limit(uint64_t limit_bytes) {
    std::lock_guard lock(mutex_);
    accounting_.set_limit(limit_bytes);
    if (accounting_.over_cap()) free_cache_locked();
  }

 private:
  static constexpr uint64_t kPageAlignFromBytes = 64 * 1024;

  static std::align_val_t alignment_for(uint64_t block_bytes) {
    return std::align_val_t{block_bytes >= kPageAlignFromBytes ? size_t{4096} : size_t{64}};
  }
  static void* new_block(uint64_t block_bytes) {
    return ::operator new(block_bytes, alignment_for(block_bytes), std::nothrow);
  }
  static void free_block(void* data, uint64_t block_bytes) {
    ::operator delete(data, alignment_for(block_bytes));
  }

  void free_cache_locked() {
    accounting_.on_unreserve(
        cache_.drain([](uint64_t block_bytes, void* data) { free_block(data, block_bytes); }));
  }

  const std::string name_;
  mutable std::mutex mutex_;
  PoolAccounting accounting_;
  BlockCache<void*> cache_;
  std::unordered_map<const void*, uint64_t> live_;  // block -> its size class
};

}  // namespace sy_support
