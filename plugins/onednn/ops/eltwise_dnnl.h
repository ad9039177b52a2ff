// oneDNN eltwise primitives for the transcendental unary ops and their backward ops on large
// f32/bf16 tensors, where oneDNN's JIT polynomial kernels beat libm calls many times over.
#pragma once

#include "op_context.h"

namespace sy_onednn {

// Runs the call with a oneDNN eltwise primitive and returns true, or returns false (having done
// nothing) when the op, dtype, size or layout is not one that path takes.
bool try_eltwise_dnnl(OpContext& ctx);

}  // namespace sy_onednn
