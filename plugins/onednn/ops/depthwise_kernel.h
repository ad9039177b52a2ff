// A depthwise convolution (one input and one output channel a group) over channels-last f32
// activations in AVX-512, with CONV2D_FUSED's residual and activation applied to each vector
// before it is stored: MobileNetV2's and EfficientNet-B0's 3x3 and 5x5 layers.
//
// oneDNN 2.6's depthwise kernels on nhwc, followed by our NaN-keeping ReLU/Clip or SiLU pass
// (conv.cpp's own_activation), read and wrote each output twice; the figures against them are in
// conv.cpp's try_depthwise_kernel. Where the time goes here: ops/depthwise_kernel.cpp.
//
// Each output vector is bias + the taps in (kh, kw) order, one FMA each, then + residual, then
// the activation: the same bits whatever the thread count. NaN passes through every activation
// (docs/ops.md section 9b). Padding is zero: a tap in it adds 0 * w (see pixels_reusing).
#pragma once

#include <cstdint>

namespace sy_onednn {

struct DepthwiseProblem {
  // x[n, ih, iw, c] at x + n * x_n + ih * x_h + iw * x_w + c (channels dense), [N, H, W, C].
  const float* x = nullptr;
  int64_t x_n = 0, x_h = 0, x_w = 0;
  // The weights as [KH, KW, C], dense (depthwise_weights_hwc).
  const float* weights = nullptr;
  const float* bias = nullptr;  // [C] dense, or null
  // y[n, oh, ow, c] and residual[n, oh, ow, c] alike (residual may be null).
  float* y = nullptr;
  int64_t y_n = 0, y_h = 0, y_w = 0;
  const float* residual = nullptr;
  int64_t r_n = 0, r_h = 0, r_w = 0;
  int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0, kh = 0, kw = 0;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
  uint32_t activation = 0;  // sy_activation
  float low = 0.0f, high = 0.0f;
};

// Whether this CPU runs the kernel (AVX-512F).
bool depthwise_kernel_available();

// y = act(depthwise(x) + bias + residual) on `threads` threads. Requires
// depthwise_kernel_available().
void depthwise_nhwc_f32(const DepthwiseProblem& p, int threads);

// The weights [C, 1, KH, KW] (element strides `strides`) as [KH, KW, C] into `out`.
void depthwise_weights_hwc(const float* w, const int64_t* strides, int64_t c, int64_t kh,
                           int64_t kw, float* out);

}  // namespace sy_onednn
