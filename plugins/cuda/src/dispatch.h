// The op entry points of the function table, behind the boundary in entry.cpp.
#pragma once

#include "ops.h"

namespace sy_cuda {

// True when the device runs `op` with key dtype `dtype` (docs/ops.md: floats for every op,
// integers for GATHER, SCATTER_ADD, COPY and FILL).
bool supports(uint32_t op, uint32_t dtype);

// Validates and enqueues one op on `queue`. The device's context must be current.
Status dispatch(CudaDevice& device, CudaQueue& queue, const sy_op_call& call);

}  // namespace sy_cuda
