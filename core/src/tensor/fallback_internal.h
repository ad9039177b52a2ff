// The fallback path of op dispatch. Private to the core.
#pragma once

#include <initializer_list>

#include "switchyard/plugin_abi.h"
#include "switchyard/tensor.h"

namespace switchyard {

class Device;

// Dispatches a prepared call on `device`, notifying the observer and counting the op.
void dispatch_on_device(Device& device, const sy_op_call& call, bool fallback);

// Runs an op that `device` lacks according to the fallback policy: throws under kError (or with
// no fallback device), otherwise moves the tensors to the fallback device, runs the op there and
// writes the results back, counting calls and copies.
void run_op_on_fallback(sy_op op, sy_dtype dtype, Device& device,
                        std::initializer_list<Tensor> inputs, std::initializer_list<Tensor> outputs,
                        const sy_op_params& params);

}  // namespace switchyard
