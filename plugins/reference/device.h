// The reference plugin's one device: the host CPU, running every op plainly on the calling thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "memory_pool.h"
#include "switchyard/plugin_abi.h"

struct sy_device_s {
  sy_device_s(uint64_t limit_bytes, bool deterministic_mode)
      : pool(limit_bytes), deterministic(deterministic_mode) {}
  sy_reference::MemoryPool pool;
  // Reported only: every op here runs on one thread in a fixed order, so results are always
  // bit-identical run to run.
  bool deterministic = false;
};

// Queues carry no state: every call runs synchronously, so submission order is execution order.
struct sy_queue_s {
  sy_device device = nullptr;
};

// Events record the host clock: with synchronous queues that is the time the work finished.
struct sy_event_s {
  std::chrono::steady_clock::time_point time;
  bool recorded = false;
};

namespace sy_reference {

// Options from the YAML backend section. Known keys: memory_limit_bytes, memory_fraction (of the
// physical memory), threads (accepted for portability of configurations; the reference always
// runs on the calling thread), deterministic (the ABI's standard option). An unknown key or a bad
// value raises INVALID_ARGUMENT naming it.
struct DeviceOptions {
  uint64_t memory_limit_bytes = 0;  // 0 = no cap; the smaller cap wins when both are given
  bool deterministic = false;
};
DeviceOptions parse_device_options(const sy_option* options, size_t option_count);

uint64_t physical_memory_bytes();
uint64_t available_memory_bytes();  // MemAvailable from /proc/meminfo; 0 if unknown
void fill_device_properties(sy_device_properties* props);

}  // namespace sy_reference
