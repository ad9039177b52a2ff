#include "ops/conv_epilogue.h"

#include "ops/silu_kernel.h"
#include "ops/strided_loop.h"
#include "ops/vector_clones.h"

namespace sy_onednn {
namespace {

// NaN passes through every activation (docs/ops.md section 9b): the comparisons below are false
// for it and each branch then keeps v.
SY_VECTOR_CLONES void epilogue_range(float* y, const float* residual, int64_t first, int64_t last,
                                     uint32_t activation, float low, float high) {
  if (residual != nullptr) {
    for (int64_t i = first; i < last; ++i) y[i] += residual[i];
  }
  switch (activation) {
    case SY_ACTIVATION_RELU:
      for (int64_t i = first; i < last; ++i) y[i] = y[i] < 0.0f ? 0.0f : y[i];
      break;
    case SY_ACTIVATION_CLIP:
      for (int64_t i = first; i < last; ++i) {
        const float v = y[i] < low ? low : y[i];
        y[i] = v > high ? high : v;
      }
      break;
    case SY_ACTIVATION_SILU:
      silu_in_place(y + first, last - first);
      break;
    default:
      break;
  }
}

}  // namespace

void apply_conv_epilogue(float* y, const float* residual, int64_t count,
                         const sy_conv2d_fused_params& params, int threads) {
  parallel_ranges(count, threads, [&](int64_t first, int64_t last) {
    epilogue_range(y, residual, first, last, params.activation, params.low, params.high);
  });
}

}  // namespace sy_onednn
