// SiLU (v * sigmoid(v)) in place over f32, for CONV2D_FUSED's SILU: the pass that follows the
// convolution primitive instead of oneDNN's eltwise_swish post-op.
#pragma once

#include <cstdint>

namespace sy_onednn {

// y[i] = y[i] * sigmoid(y[i]) for i < count, on this thread. Relative error below 4e-7 for finite
// v (the sigmoid's exp is a degree-6 polynomial after range reduction, as fast_math.h's, and its
// reciprocal a refined estimate); NaN stays NaN; +inf stays +inf.
void silu_in_place(float* y, int64_t count);

// The same on `threads` threads, in contiguous ranges.
void silu_in_place(float* y, int64_t count, int threads);

}  // namespace sy_onednn
