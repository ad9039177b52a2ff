// ContentionMonitor: whether parallel regions are cheap right now, so that ops stay on the
// calling thread when the OpenMP workers cannot be scheduled promptly.
//
// On a busy machine (more runnable work than cores: builds, another training run) a parallel
// region waits for its worker to get a time slice, which can cost milliseconds per op: measured
// here, a small CNN trained 28x slower with 2 threads than with 1 under a load of 10 on 2 cores
// (PyTorch likewise, 17x). The load average reacts too slowly to decide this, so the monitor
// measures what matters: at most every 250 ms it times an empty parallel region with the thread
// count an op asked for, and reports contention while such regions take over 250 us (two
// consecutive probes decide, so one unlucky probe does not switch modes).
#pragma once

#include <atomic>
#include <cstdint>

namespace sy_onednn {

class ContentionMonitor {
 public:
  // True while parallel regions of `threads` threads are too slow to be worth starting.
  bool oversubscribed(int threads);

 private:
  std::atomic<int64_t> next_probe_ns_{0};
  std::atomic<int> slow_probes_{0};  // consecutive slow (positive) or fast (negative) probes
  std::atomic<bool> busy_{false};
};

}  // namespace sy_onednn
