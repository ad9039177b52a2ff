// Op dispatch: how every tensor op reaches a device, what happens when the device lacks the op,
// and the hooks that let a profiler see every op.
//
// Every op is checked with Device::supports(op, dtype) first. When the device lacks it, the
// process-wide fallback policy decides: kError throws an Error naming op, dtype and backend;
// kWarn and kSilent copy the inputs to the fallback device, run the op there and copy the results
// back, counting the op and the copies (kWarn also logs once per op and dtype to stderr). The core
// never looks for plugins itself: whoever set up the run (the Trainer, a host application) passes
// the fallback device, normally the plain CPU device every build has.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "switchyard/plugin_abi.h"

namespace switchyard {

class Device;
class Queue;
enum class FallbackPolicy;  // kWarn, kError, kSilent; defined in config.h

// "matmul", "relu_backward", ... (the enum name without SY_OP_, lower case); "unknown" otherwise.
const char* op_name(sy_op op);

// Sets the policy and the device ops fall back to (may be null: then a missing op is an error
// whatever the policy says, and the message says no fallback device was given).
void set_fallback(FallbackPolicy policy, std::shared_ptr<Device> fallback_device);
FallbackPolicy fallback_policy();
std::shared_ptr<Device> fallback_device();

// One line of the fallback report: an op that ran on the fallback device instead of `backend`.
struct FallbackCount {
  std::string op;       // "conv2d"
  std::string dtype;    // "f16"
  std::string backend;  // the device's backend that lacked it
  uint64_t calls = 0;
  uint64_t copies = 0;  // tensors copied between the devices, both directions
  uint64_t bytes_copied = 0;
};

// Counts since start or the last reset, one entry per (op, dtype, backend), in first-seen order.
std::vector<FallbackCount> fallback_counts();
uint64_t total_fallback_calls();
void reset_fallback_counts();

// What an observer sees of one op: the call exactly as the plugin receives it.
struct OpEvent {
  sy_op op;
  const char* name;        // op_name(op)
  const sy_op_call* call;  // shapes, dtypes and params of the inputs and outputs
  Device* device;          // where it runs (the fallback device for a fallen-back op)
  Queue* queue;
  bool fallback = false;  // true when the op was moved off the tensor's device
};

// Sees every op dispatched by the tensor layer, e.g. to time it. on_op_end follows the dispatch
// call's return (the work may still be in flight on an asynchronous queue).
class OpObserver {
 public:
  virtual ~OpObserver() = default;
  virtual void on_op_begin(const OpEvent& event) = 0;
  virtual void on_op_end(const OpEvent& event) = 0;
};

// Installs `observer` (not owned; keep it alive until it is removed by passing nullptr). One
// observer at a time; set it before ops run on other threads.
void set_op_observer(OpObserver* observer);
OpObserver* op_observer();

// Number of ops dispatched by this process since start or the last reset (fallbacks included).
uint64_t dispatched_op_count();
void reset_dispatched_op_count();

}  // namespace switchyard
