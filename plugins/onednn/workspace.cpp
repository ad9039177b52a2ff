#include "workspace.h"

#include <algorithm>
#include <cstdlib>
#include <new>

namespace sy_onednn {

void Workspace::FreeDeleter::operator()(char* data) const {
  std::free(data);
}

void Workspace::add_chunk(size_t min_bytes) {
  size_t capacity = std::max<size_t>(min_bytes, 1 << 20);
  if (!chunks_.empty()) capacity = std::max(capacity, chunks_.back().capacity * 2);
  void* data = nullptr;
  if (posix_memalign(&data, 4096, capacity) != 0) throw std::bad_alloc();
  Chunk chunk;
  chunk.data.reset(static_cast<char*>(data));
  chunk.capacity = capacity;
  chunks_.push_back(std::move(chunk));
}

void* Workspace::acquire(size_t bytes) {
  bytes = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  if (chunks_.empty() || chunks_.back().capacity - chunks_.back().used < bytes) add_chunk(bytes);
  Chunk& chunk = chunks_.back();
  void* data = chunk.data.get() + chunk.used;
  chunk.used += bytes;
  return data;
}

void Workspace::reset() {
  if (chunks_.size() > 1) {
    size_t total = capacity_bytes();
    chunks_.clear();
    add_chunk(total);
  }
  if (!chunks_.empty()) chunks_.back().used = 0;
}

size_t Workspace::capacity_bytes() const {
  size_t total = 0;
  for (const Chunk& chunk : chunks_) total += chunk.capacity;
  return total;
}

}  // namespace sy_onednn
