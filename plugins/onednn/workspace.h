// Workspace: per-queue scratch memory for one dispatch (staging copies, oneDNN scratchpads).
//
// A bump allocator: acquire() hands out 64-byte aligned pieces that stay valid until reset(),
// which the dispatcher calls before every op. After a dispatch that needed several chunks, the
// next reset() merges them into one, so a steady workload settles on a single allocation.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace sy_onednn {

class Workspace {
 public:
  Workspace() = default;
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  void* acquire(size_t bytes);
  void reset();
  size_t capacity_bytes() const;

 private:
  struct FreeDeleter {
    void operator()(char* data) const;
  };
  struct Chunk {
    std::unique_ptr<char, FreeDeleter> data;
    size_t capacity = 0;
    size_t used = 0;
  };
  void add_chunk(size_t min_bytes);

  std::vector<Chunk> chunks_;
};

}  // namespace sy_onednn
