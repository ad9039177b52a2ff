// SerialTracker: which command batches of a device are still in flight.
//
// Each batch takes a serial when it starts recording; a buffer remembers the serial of the last
// batch that used it. A cached buffer may be destroyed only when no batch with that serial or an
// earlier one is pending, because the GPU may still read it.
#pragma once

#include <cstdint>
#include <mutex>
#include <set>

namespace sy_vk {

class SerialTracker {
 public:
  uint64_t begin() {
    std::lock_guard<std::mutex> lock(mutex_);
    const uint64_t serial = ++last_;
    pending_.insert(serial);
    return serial;
  }
  void complete(uint64_t serial) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = pending_.find(serial);
    if (it != pending_.end()) pending_.erase(it);
  }
  // True when every batch with a serial <= `serial` has completed.
  bool is_complete(uint64_t serial) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return pending_.empty() || *pending_.begin() > serial;
  }

 private:
  mutable std::mutex mutex_;
  uint64_t last_ = 0;
  std::set<uint64_t> pending_;
};

}  // namespace sy_vk
