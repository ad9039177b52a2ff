// 2-D max and average pooling, forward and backward (section 10 of docs/ops.md). The backward
// kernels gather per input element over the windows that contain it, in output row-major order,
// so they need no atomics and are deterministic.
#include <math.h>

#include "common.cuh"

namespace sy {
namespace {

struct Window {
  int64_t h0, h1, w0, w1;  // in-range rows [h0, h1) and columns [w0, w1)
};

__device__ __forceinline__ Window window_of(const SyPoolArgs& a, int64_t i, int64_t j, int64_t H,
                                            int64_t W) {
  const int64_t hs = i * a.stride_h - a.pad_h;
  const int64_t ws = j * a.stride_w - a.pad_w;
  return {max(hs, int64_t{0}), min(hs + a.kernel_h, H), max(ws, int64_t{0}),
          min(ws + a.kernel_w, W)};
}

__device__ __forceinline__ float divisor_of(const SyPoolArgs& a, const Window& win) {
  if (a.count_include_pad) return static_cast<float>(a.kernel_h * a.kernel_w);
  return static_cast<float>((win.h1 - win.h0) * (win.w1 - win.w0));
}

__device__ __forceinline__ int64_t at4(const SyTensorArg& t, int64_t n, int64_t c, int64_t h,
                                       int64_t w) {
  return n * t.strides[0] + c * t.strides[1] + h * t.strides[2] + w * t.strides[3];
}

// Position (h * W + w) of the window's maximum: the first maximum in row-major order, a NaN
// counting as the maximum (the first NaN wins).
__device__ int64_t window_argmax(const SyTensorArg& x, int64_t n, int64_t c, const Window& win,
                                 int64_t W) {
  float best = 0.0f;
  int64_t best_pos = -1;
  for (int64_t h = win.h0; h < win.h1; ++h) {
    for (int64_t w = win.w0; w < win.w1; ++w) {
      const float v = load(x, at4(x, n, c, h, w));
      const bool take = best_pos < 0 || (best == best && (v > best || v != v));
      if (take) {
        best = v;
        best_pos = h * W + w;
      }
    }
  }
  return best_pos;
}

// Range of output indices whose windows (start = i * stride - pad, length kernel) contain p.
__device__ __forceinline__ void windows_containing(int64_t p, int32_t stride, int32_t pad,
                                                   int32_t kernel, int64_t out_extent,
                                                   int64_t* first, int64_t* last) {
  const int64_t hi = p + pad;               // i * stride <= p + pad
  const int64_t lo = p + pad - kernel + 1;  // i * stride >= p + pad - kernel + 1
  *first = lo <= 0 ? 0 : (lo + stride - 1) / stride;
  *last = min(hi / stride, out_extent - 1);
}

}  // namespace
}  // namespace sy

// op 37 (max) or 39 (avg): in0 = x, out = y.
extern "C" __global__ void sy_pool2d_forward(SyPoolArgs a) {
  using namespace sy;
  const int64_t C = a.out.shape[1], OH = a.out.shape[2], OW = a.out.shape[3];
  const int64_t H = a.in0.shape[2], W = a.in0.shape[3];
  const int64_t total = a.out.shape[0] * C * OH * OW;
  for (int64_t linear = global_thread(); linear < total; linear += grid_stride()) {
    const int64_t j = linear % OW, i = (linear / OW) % OH;
    const int64_t c = (linear / (OW * OH)) % C, n = linear / (OW * OH * C);
    const Window win = window_of(a, i, j, H, W);
    float result;
    if (a.op == kMaxPool) {
      result = -INFINITY;
      for (int64_t h = win.h0; h < win.h1; ++h)
        for (int64_t w = win.w0; w < win.w1; ++w)
          result = nan_max(result, load(a.in0, at4(a.in0, n, c, h, w)));
    } else {
      float sum = 0.0f;
      for (int64_t h = win.h0; h < win.h1; ++h)
        for (int64_t w = win.w0; w < win.w1; ++w) sum += load(a.in0, at4(a.in0, n, c, h, w));
      result = sum / divisor_of(a, win);
    }
    store(a.out, at4(a.out, n, c, i, j), result);
  }
}

// op 38 (max: in0 = grad_y, in1 = x) or 40 (avg: in0 = grad_y); out = grad_x [N, C, H, W].
extern "C" __global__ void sy_pool2d_backward(SyPoolArgs a) {
  using namespace sy;
  const int64_t C = a.out.shape[1], H = a.out.shape[2], W = a.out.shape[3];
  const int64_t OH = a.in0.shape[2], OW = a.in0.shape[3];
  const int64_t total = a.out.shape[0] * C * H * W;
  for (int64_t linear = global_thread(); linear < total; linear += grid_stride()) {
    const int64_t w = linear % W, h = (linear / W) % H;
    const int64_t c = (linear / (W * H)) % C, n = linear / (W * H * C);
    int64_t i0, i1, j0, j1;
    windows_containing(h, a.stride_h, a.pad_h, a.kernel_h, OH, &i0, &i1);
    windows_containing(w, a.stride_w, a.pad_w, a.kernel_w, OW, &j0, &j1);
    float acc = 0.0f;
    for (int64_t i = i0; i <= i1; ++i) {
      for (int64_t j = j0; j <= j1; ++j) {
        const Window win = window_of(a, i, j, H, W);
        const float g = load(a.in0, at4(a.in0, n, c, i, j));
        if (a.op == kMaxPoolBackward) {
          if (window_argmax(a.in1, n, c, win, W) == h * W + w) acc += g;
        } else {
          acc += g / divisor_of(a, win);
        }
      }
    }
    store(a.out, at4(a.out, n, c, h, w), acc);
  }
}
