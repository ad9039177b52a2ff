// The plugin's handle types: device, buffer, queue, event.
//
// One device: the host CPU. Buffers are host memory from the device's caching pool. Queues run
// every call synchronously on the calling thread (so events read the host clock), each with its
// own oneDNN stream and scratch workspace.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>

#include "contention.h"
#include "cpu_info.h"
#include "memory_pool.h"
#include "primitive_cache.h"
#include "switchyard/plugin_abi.h"
#include "workspace.h"

namespace sy_onednn {

// Options from the YAML backend section; see parse_device_options.
struct DeviceOptions {
  int threads = 0;               // oneDNN / OpenMP threads for large ops
  uint64_t limit_bytes = 0;      // pool cap; 0 = none
  bool adaptive_threads = true;  // one thread while the machine is oversubscribed
};

// Accepts `threads` (integer >= 1), `memory_limit_bytes` (integer >= 0), `memory_fraction`
// (0 < x <= 1 of the total memory; with both, the smaller cap wins) and `adaptive_threads`
// (true/false, default true: see ContentionMonitor). Anything else, or a value that does not
// parse, is INVALID_ARGUMENT naming the key and value.
DeviceOptions parse_device_options(const sy_option* options, size_t count,
                                   uint64_t memory_total_bytes);

// The OpenMP thread count the process starts with (OMP_NUM_THREADS or the core count).
int default_thread_count();

}  // namespace sy_onednn

struct sy_device_s {
  sy_onednn::CpuInfo cpu;
  // Per op: oneDNN has no bf16 kernel here, so bf16 calls compute through f32 (see
  // run_dnnl_backed); set on the first UNIMPLEMENTED.
  std::atomic<bool> bf16_through_f32[SY_OP_COUNT] = {};
  int threads = 1;
  bool adaptive_threads = true;
  sy_onednn::ContentionMonitor contention;
  dnnl::engine engine;
  sy_onednn::MemoryPool pool;
  sy_onednn::PrimitiveCache primitives;

  sy_device_s(const sy_onednn::CpuInfo& cpu_info, const sy_onednn::DeviceOptions& options);
};

struct sy_buffer_s {
  void* data = nullptr;
  uint64_t size_bytes = 0;
  uint64_t block_bytes = 0;
};

struct sy_queue_s {
  sy_device_s* device = nullptr;
  dnnl::stream stream;
  sy_onednn::Workspace workspace;

  explicit sy_queue_s(sy_device_s* owner) : device(owner), stream(owner->engine) {}
};

struct sy_event_s {
  std::chrono::steady_clock::time_point time;
  bool recorded = false;
};
