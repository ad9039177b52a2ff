// Op dispatch: how every tensor op reaches a device, what happens when the device lacks the op,
// and the hooks that let a profiler see every op.
//
// Every op is checked with Device::supports(op, dtype) first. When the device lacks it, that
// device's fallback policy decides (Device::set_fallback): kError throws an Error naming op, dtype
// and backend; kWarn and kSilent copy the inputs to the device's fallback device, run the op there
// and copy the results back, counting the op and the copies on the device (Device::
// fallback_counts; kWarn also logs once per op and dtype to stderr). The core never looks for
// plugins itself: whoever set up the run (open_run_device, a host application) gives the device its
// fallback device, normally the runtime's oracle device (host memory, every op).
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstdint>

#include "switchyard/plugin_abi.h"

namespace switchyard {

class Device;
class Queue;

// "matmul", "relu_backward", ... (the enum name without SY_OP_, lower case); "unknown" otherwise.
const char* op_name(sy_op op);

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

#pragma GCC visibility pop
