// CONV2D_FUSED's residual and activation as one pass over a dense f32 output, for the
// convolutions that run without oneDNN post-ops (conv.cpp's plain 1x1 path: oneDNN's gemm:jit
// applies post-ops in a slow pass of its own).
#pragma once

#include <cstdint>

#include "switchyard/plugin_abi.h"

namespace sy_onednn {

// y[i] = act(y[i] + residual[i]) for i < count (residual may be null), on `threads` threads.
void apply_conv_epilogue(float* y, const float* residual, int64_t count,
                         const sy_conv2d_fused_params& params, int threads);

}  // namespace sy_onednn
