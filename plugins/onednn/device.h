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
#include "memory_objects.h"
#include "memory_pool.h"
#include "primitive_cache.h"
#include "switchyard/plugin_abi.h"
#include "weight_cache.h"
#include "workspace.h"

namespace sy_onednn {

// Options from the YAML backend section; see parse_device_options.
struct DeviceOptions {
  int threads = 0;               // oneDNN / OpenMP threads for large ops
  uint64_t limit_bytes = 0;      // pool cap; 0 = none
  bool adaptive_threads = true;  // one thread while the machine is oversubscribed
  // Bit-identical results run to run: the thread count of every op depends on its shape only
  // (adaptive_threads is forced off), because a split over threads fixes the summation order.
  bool deterministic = false;
  // May oneDNN compute f32 matmul/convolution through lower-precision hardware (bf16/f16)?
  dnnl::fpmath_mode fpmath = dnnl::fpmath_mode::strict;
};

// Accepts `threads` (integer >= 1), `memory_limit_bytes` (integer >= 0), `memory_fraction`
// (0 < x <= 1 of the total memory; with both, the smaller cap wins), `adaptive_threads`
// (true/false, default true: see ContentionMonitor), `deterministic` (true/false, the ABI's
// standard option; true turns adaptive_threads off) and `fpmath` (strict | bf16 | f16 | any,
// default strict: oneDNN's fpmath mode). Anything else, or a value that does not parse, is
// INVALID_ARGUMENT naming the key and value.
DeviceOptions parse_device_options(const sy_option* options, size_t count,
                                   uint64_t memory_total_bytes);

// "strict", "bf16", "f16" or "any", as the `fpmath` option spells them.
const char* fpmath_name(dnnl::fpmath_mode mode);

// The device_settings line: "threads=2 adaptive_threads=off deterministic=on fpmath=strict".
std::string settings_line(const sy_device_s& device);

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
  bool deterministic = false;
  dnnl::fpmath_mode fpmath = dnnl::fpmath_mode::strict;
  sy_onednn::ContentionMonitor contention;
  dnnl::engine engine;
  sy_onednn::MemoryPool pool;
  // After the pool: its entries give their memory back to it when destroyed.
  sy_onednn::WeightCache weights;
  sy_onednn::PrimitiveCache primitives;

  sy_device_s(const sy_onednn::CpuInfo& cpu_info, const sy_onednn::DeviceOptions& options);
};

struct sy_buffer_s {
  uint64_t id = 0;  // unique for the process's life (an address may be reused): WeightCache's key
  void* data = nullptr;
  uint64_t size_bytes = 0;
  uint64_t block_bytes = 0;
};

struct sy_queue_s {
  sy_device_s* device = nullptr;
  dnnl::stream stream;
  sy_onednn::Workspace workspace;
  sy_onednn::MemoryObjects memories;  // for the primitives its calls run (dnnl_util.h)

  explicit sy_queue_s(sy_device_s* owner) : device(owner), stream(owner->engine) {}
};

struct sy_event_s {
  std::chrono::steady_clock::time_point time;
  bool recorded = false;
};
