// The op dispatcher: resolves an sy_op_call into an OpContext and runs its op family.
#pragma once

#include "device.h"

namespace sy_onednn {

// Validates and runs one call synchronously. Throws PluginError on a bad call.
void dispatch_call(sy_device_s& device, sy_queue_s& queue, const sy_op_call& call);

// supports_op: 1 if this plugin runs `op` with key dtype `dtype` (docs/ops.md section 1).
int supports_op_dtype(uint32_t op, uint32_t dtype);

}  // namespace sy_onednn
