#include "contention.h"

#include <omp.h>

#include <chrono>

namespace sy_onednn {
namespace {

constexpr int64_t kProbeIntervalNs = 250'000'000;
constexpr int64_t kSlowRegionNs = 250'000;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The wall time of an empty parallel region of `threads` threads.
int64_t time_empty_region(int threads) {
  const int64_t start = now_ns();
  int joined = 0;
#pragma omp parallel num_threads(threads) reduction(+ : joined)
  { joined += 1; }
  return joined > 0 ? now_ns() - start : 0;
}

}  // namespace

bool ContentionMonitor::oversubscribed(int threads) {
  const int64_t now = now_ns();
  int64_t next = next_probe_ns_.load(std::memory_order_relaxed);
  if (now >= next && next_probe_ns_.compare_exchange_strong(next, now + kProbeIntervalNs,
                                                            std::memory_order_relaxed)) {
    const bool slow = time_empty_region(threads) > kSlowRegionNs;
    int streak = slow_probes_.load(std::memory_order_relaxed);
    streak = slow ? (streak > 0 ? streak + 1 : 1) : (streak < 0 ? streak - 1 : -1);
    slow_probes_.store(streak, std::memory_order_relaxed);
    if (streak >= 2) busy_.store(true, std::memory_order_relaxed);
    if (streak <= -2) busy_.store(false, std::memory_order_relaxed);
  }
  return busy_.load(std::memory_order_relaxed);
}

}  // namespace sy_onednn
