// Device: one device of one plugin, with its default queue.
//
// Ownership: Device::create returns a shared_ptr. Buffers and queues hold the Device (and so the
// Plugin), so a device outlives everything allocated on it. Destroying the last reference
// destroys the plugin's device handle.
//
// Threads: a Device may be shared by any number of threads. Every call into the plugin for one
// device (ops, copies, allocations, releases, events, statistics) runs under that device's lock,
// one call at a time, so a plugin keeps no locks of its own for a device's state (plugin_abi.h).
// Different devices run concurrently.
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "switchyard/plugin_abi.h"
#include "switchyard/status.h"

namespace switchyard {

class Plugin;
class Buffer;
class Queue;

enum class DeviceType { kCpu, kGpu, kIntegratedGpu, kEmulated, kOther };
const char* device_type_name(DeviceType type);  // "cpu", "gpu", "integrated", "emulated", "other"

struct DeviceInfo {
  std::string backend;  // the plugin name
  uint32_t index = 0;
  std::string name;
  std::string vendor;
  DeviceType type = DeviceType::kOther;
  std::string driver_version;
  std::string runtime_version;
  std::string uuid;
  std::string bus_id;
  std::string details;
  uint64_t memory_total_bytes = 0;
  uint64_t memory_free_bytes = 0;
  uint32_t compute_units = 0;

  std::string id() const { return backend + ":" + std::to_string(index); }  // "cuda:0"
};

struct MemoryStats {
  uint64_t allocated_bytes = 0;
  uint64_t reserved_bytes = 0;
  uint64_t peak_allocated_bytes = 0;
  uint64_t limit_bytes = 0;  // 0 = no cap
  uint64_t allocation_count = 0;
};

using OptionList = std::vector<std::pair<std::string, std::string>>;

// What happens to an op a device does not support (see dispatch.h): kError throws, kWarn and
// kSilent run it on the device's fallback device with copies (kWarn logs once per op and dtype).
enum class FallbackPolicy { kWarn, kError, kSilent };

// One line of a device's fallback report: an op that ran on the fallback device instead.
struct FallbackCount {
  std::string op;       // "conv2d"
  std::string dtype;    // "f16"
  std::string backend;  // the device's backend, which lacked it
  uint64_t calls = 0;
  uint64_t copies = 0;  // tensors copied between the devices, both directions
  uint64_t bytes_copied = 0;
};

class Device : public std::enable_shared_from_this<Device> {
 public:
  static Result<std::shared_ptr<Device>> create(std::shared_ptr<const Plugin> plugin,
                                                uint32_t index, const OptionList& options = {});
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceInfo& info() const { return info_; }
  const std::string& backend() const { return info_.backend; }
  std::string id() const { return info_.id(); }
  const Plugin& plugin() const { return *plugin_; }
  sy_device handle() const { return handle_; }
  const sy_plugin_functions& functions() const;

  // The queue that tensors and ops use unless told otherwise.
  Queue& default_queue() { return *default_queue_; }
  Result<std::shared_ptr<Queue>> create_queue();

  Result<std::shared_ptr<Buffer>> allocate(uint64_t size_bytes);

  bool supports(sy_op op, sy_dtype dtype) const;

  // The plugin's one-line "key=value ..." account of the settings in effect ("threads=2
  // adaptive_threads=off deterministic=on fpmath=strict"); "" when the plugin does not say
  // (no device_settings slot, or the call failed).
  std::string settings() const;

  Result<MemoryStats> memory_stats() const;
  Status reset_peak_memory();
  Status empty_cache();
  Status set_memory_limit(uint64_t limit_bytes);  // 0 removes the cap

  // Turns a plugin return code into a Status with the plugin's message and this device's id.
  Status check(sy_status code, const char* what) const;

  // Held around a call into the plugin for this device made outside Device, Queue and Buffer
  // (the profiler's events): the lock every call of theirs takes. Not recursive: hold it only
  // around the plugin call itself.
  class PluginCall {
   public:
    explicit PluginCall(const Device& device);
    ~PluginCall();
    PluginCall(const PluginCall&) = delete;
    PluginCall& operator=(const PluginCall&) = delete;

   private:
    const Device& device_;
  };
  // Runs `call` (one call into the plugin) under the lock and returns what it returned.
  template <typename Call>
  auto locked(Call&& call) const {
    const PluginCall lock(*this);
    return call();
  }

  // ---- Ops this device lacks
  // The policy and the device such ops move to (null: a missing op is an error whatever the
  // policy says). Each device has its own, so two runs in one process (two embedded trainers,
  // say) with different policies do not interfere. Default: kWarn with no fallback device.
  void set_fallback(FallbackPolicy policy, std::shared_ptr<Device> fallback_device);
  FallbackPolicy fallback_policy() const;
  std::shared_ptr<Device> fallback_device() const;
  // Ops that ran on the fallback device instead of this one since creation or the last reset,
  // one entry per (op, dtype) in first-seen order; fallback_calls() is the sum of their calls.
  std::vector<FallbackCount> fallback_counts() const;
  uint64_t fallback_calls() const;
  void reset_fallback_counts();
  // Called by the dispatcher after an op ran on the fallback device; true the first time this
  // (op, dtype) fell back, which is when kWarn logs.
  bool record_fallback(const char* op, const char* dtype, uint64_t copies, uint64_t bytes);

 private:
  struct FallbackRoute;
  struct CallLock;
  Device();

  std::shared_ptr<const Plugin> plugin_;
  sy_device handle_ = nullptr;
  DeviceInfo info_;
  std::shared_ptr<Queue> default_queue_;
  std::unique_ptr<FallbackRoute> fallback_;
  std::unique_ptr<CallLock> calls_;
};

}  // namespace switchyard

#pragma GCC visibility pop
