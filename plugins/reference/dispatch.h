// Validation of an op call's descriptors and routing to the op implementation.
#pragma once

#include <cstdint>

#include "switchyard/plugin_abi.h"

namespace sy_reference {

// Whether the reference runs `op` with key dtype `dtype` (docs/ops.md, section 1).
bool reference_supports_op(uint32_t op, uint32_t dtype);

// Checks every descriptor (dtype, rank, sizes, strides, bounds, output overlap) and runs the op
// synchronously. Raises PluginError on any problem.
void dispatch_op(sy_device device, const sy_op_call& call);

}  // namespace sy_reference
