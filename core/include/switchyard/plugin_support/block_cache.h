// BlockCache: the free blocks a caching memory pool keeps for reuse, keyed by block size.
//
// Block is the pool's own handle (a host pointer, a DeviceBlock*, a struct with stream
// bookkeeping). The cache frees nothing and counts nothing itself: whoever takes or drains a block
// frees it or hands it out, and tells PoolAccounting (memory_accounting.h). Not thread-safe; each
// pool calls it under its own mutex.
//
// Part of plugin_support: header-only, depends only on the C++ standard library, and may be
// included by plugins (docs/writing-a-backend.md, section 2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <utility>

namespace sy_support {

template <typename Block>
class BlockCache {
 public:
  struct Entry {
    uint64_t bytes;
    Block block;
  };

  void put(uint64_t bytes, Block block) { blocks_.emplace(bytes, std::move(block)); }

  // Removes and returns the smallest cached block of min_bytes..max_bytes (of equal sizes, the
  // one put last: warmest in the caches); nullopt when none is in that range.
  std::optional<Entry> take(uint64_t min_bytes, uint64_t max_bytes) {
    auto it = blocks_.lower_bound(min_bytes);
    if (it == blocks_.end() || it->first > max_bytes) return std::nullopt;
    return remove(std::prev(blocks_.upper_bound(it->first)));
  }
  // A block of exactly `bytes` (a size class), as above.
  std::optional<Entry> take(uint64_t bytes) { return take(bytes, bytes); }
  // Removes and returns the largest cached block (to free just enough); nullopt when empty.
  std::optional<Entry> take_largest() {
    if (blocks_.empty()) return std::nullopt;
    return remove(std::prev(blocks_.end()));
  }

  // Removes every block for which can_free(bytes, block) holds, passing each to
  // free(bytes, block). Returns the bytes removed.
  template <typename CanFree, typename Free>
  uint64_t drain_if(CanFree&& can_free, Free&& free) {
    uint64_t removed = 0;
    for (auto it = blocks_.begin(); it != blocks_.end();) {
      if (!can_free(it->first, it->second)) {
        ++it;
        continue;
      }
      free(it->first, it->second);
      removed += it->first;
      it = blocks_.erase(it);
    }
    return removed;
  }
  // Removes every block, passing each to free(bytes, block). Returns the bytes removed.
  template <typename Free>
  uint64_t drain(Free&& free) {
    return drain_if([](uint64_t, const Block&) { return true; }, free);
  }

  // Calls visit(bytes, block) with a mutable block for each cached block (bookkeeping that keeps
  // them cached).
  template <typename Visit>
  void for_each(Visit&& visit) {
    for (auto& [bytes, block] : blocks_) visit(bytes, block);
  }

  bool empty() const { return blocks_.empty(); }
  size_t size() const { return blocks_.size(); }

 private:
  Entry remove(typename std::multimap<uint64_t, Block>::iterator it) {
    Entry entry{it->first, std::move(it->second)};
    blocks_.erase(it);
    return entry;
  }

  std::multimap<uint64_t, Block> blocks_;  // block size -> block
};

}  // namespace sy_support
