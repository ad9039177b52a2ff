// What CONV2D_FUSED needs to run RELU or CLIP as oneDNN's post-op without changing a result.
//
// docs/ops.md section 9b has NaN pass through every activation; oneDNN's relu and clip post-ops
// turn NaN into 0 or `low` (conv.cpp's own_activation). A convolution's output can only be NaN
// where an input, weight or bias is not finite, or where a sum overflows (inf - inf). Where x and
// the bias are finite, the weights are, and max|x| * max_o sum|w_o| + max|b| stays far below
// FLT_MAX, every output is finite, and the post-op gives what our pass would: the same values
// (the sign of a zero aside: a -0 output may come out +0). Checking costs one read of x, a fraction
// of y in the layers that matter (MobileNetV2's 1x1 expansions: 6x more outputs than inputs), and
// saves the pass's read and write of y.
#pragma once

#include <cstdint>

namespace sy_onednn {

// max over i < count of |x[i]| as its bit pattern (sign cleared): at least 0x7f800000 when some x
// is infinite or NaN; else the bits of the largest magnitude. On `threads` threads.
uint32_t max_abs_bits(const float* x, int64_t count, int threads);

// sums[o] = sum over the rest of |w[o, ...]| for a weight [O, C / G, KH, KW] with element strides
// `strides`, in double and rounded up to float; +inf for an o whose weights are not all finite.
void abs_weight_sums(const float* w, const int64_t* shape, const int64_t* strides, float* sums);

// Whether max|x| (max_abs_bits' result) times max(sums) plus max|bias| stays below 1e37, a tenth
// of FLT_MAX and far more than a sum's rounding could add: no output can overflow, none is NaN.
// bias may be null (bias_stride unused then).
bool outputs_stay_finite(uint32_t x_bits, const float* sums, int64_t out_channels,
                         const float* bias, int64_t bias_stride);

}  // namespace sy_onednn
