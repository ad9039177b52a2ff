// Direct 2-D convolution, NCHW / OIHW, groups = 1 (section 9 of docs/ops.md). Every output element
// is computed by gathering its terms, so no kernel needs atomics and results are deterministic.
#include "common.cuh"

namespace sy {
namespace {

struct Nchw {
  int64_t n, c, h, w;
};

__device__ __forceinline__ Nchw unravel4(const SyTensorArg& t, int64_t linear) {
  Nchw p;
  p.w = linear % t.shape[3];
  linear /= t.shape[3];
  p.h = linear % t.shape[2];
  linear /= t.shape[2];
  p.c = linear % t.shape[1];
  p.n = linear / t.shape[1];
  return p;
}

__device__ __forceinline__ int64_t at4(const SyTensorArg& t, int64_t a, int64_t b, int64_t c,
                                       int64_t d) {
  return a * t.strides[0] + b * t.strides[1] + c * t.strides[2] + d * t.strides[3];
}

}  // namespace
}  // namespace sy

// in0 = x [N, C, H, W], in1 = w [O, C, KH, KW], out = y [N, O, OH, OW].
extern "C" __global__ void sy_conv2d_forward(SyConvArgs a) {
  using namespace sy;
  const int64_t total = a.out.shape[0] * a.out.shape[1] * a.out.shape[2] * a.out.shape[3];
  const int64_t C = a.in0.shape[1], H = a.in0.shape[2], W = a.in0.shape[3];
  const int64_t KH = a.in1.shape[2], KW = a.in1.shape[3];
  for (int64_t linear = global_thread(); linear < total; linear += grid_stride()) {
    const Nchw y = unravel4(a.out, linear);  // y.c is the output channel o
    float acc = a.has_bias ? load(a.bias, y.c * a.bias.strides[0]) : 0.0f;
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t kh = 0; kh < KH; ++kh) {
        const int64_t h = y.h * a.stride_h - a.pad_h + kh * a.dilation_h;
        if (h < 0 || h >= H) continue;
        for (int64_t kw = 0; kw < KW; ++kw) {
          const int64_t w = y.w * a.stride_w - a.pad_w + kw * a.dilation_w;
          if (w < 0 || w >= W) continue;
          acc += load(a.in0, at4(a.in0, y.n, c, h, w)) * load(a.in1, at4(a.in1, y.c, c, kh, kw));
        }
      }
    }
    store(a.out, at4(a.out, y.n, y.c, y.h, y.w), acc);
  }
}

// in0 = grad_y [N, O, OH, OW], in1 = w [O, C, KH, KW], out = grad_x [N, C, H, W].
extern "C" __global__ void sy_conv2d_backward_data(SyConvArgs a) {
  using namespace sy;
  const int64_t total = a.out.shape[0] * a.out.shape[1] * a.out.shape[2] * a.out.shape[3];
  const int64_t O = a.in0.shape[1], OH = a.in0.shape[2], OW = a.in0.shape[3];
  const int64_t KH = a.in1.shape[2], KW = a.in1.shape[3];
  for (int64_t linear = global_thread(); linear < total; linear += grid_stride()) {
    const Nchw x = unravel4(a.out, linear);
    float acc = 0.0f;
    for (int64_t kh = 0; kh < KH; ++kh) {
      const int64_t ih = x.h + a.pad_h - kh * a.dilation_h;  // = i * stride_h
      if (ih < 0 || ih % a.stride_h != 0 || ih / a.stride_h >= OH) continue;
      const int64_t i = ih / a.stride_h;
      for (int64_t kw = 0; kw < KW; ++kw) {
        const int64_t jw = x.w + a.pad_w - kw * a.dilation_w;
        if (jw < 0 || jw % a.stride_w != 0 || jw / a.stride_w >= OW) continue;
        const int64_t j = jw / a.stride_w;
        for (int64_t o = 0; o < O; ++o) {
          acc += load(a.in0, at4(a.in0, x.n, o, i, j)) * load(a.in1, at4(a.in1, o, x.c, kh, kw));
        }
      }
    }
    store(a.out, at4(a.out, x.n, x.c, x.h, x.w), acc);
  }
}

// in0 = grad_y [N, O, OH, OW], in1 = x [N, C, H, W], out = grad_w [O, C, KH, KW]. A group of
// group_size threads sums the N * OH * OW terms of one weight element.
extern "C" __global__ void __launch_bounds__(256) sy_conv2d_backward_weight(SyConvArgs a) {
  using namespace sy;
  __shared__ float scratch[32];
  const int G = a.group_size;
  const int groups_per_block = blockDim.x / G;
  const int lane = threadIdx.x % G;
  const int64_t total = a.out.shape[0] * a.out.shape[1] * a.out.shape[2] * a.out.shape[3];
  const int64_t N = a.in0.shape[0], OH = a.in0.shape[2], OW = a.in0.shape[3];
  const int64_t H = a.in1.shape[2], W = a.in1.shape[3];
  const int64_t terms = N * OH * OW;
  const int64_t step = static_cast<int64_t>(gridDim.x) * groups_per_block;
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * groups_per_block; first < total;
       first += step) {
    const int64_t linear = first + threadIdx.x / G;
    const bool active = linear < total;
    const Nchw k = unravel4(a.out, active ? linear : 0);  // (o, c, kh, kw) in (n, c, h, w)
    float acc = 0.0f;
    for (int64_t t = active ? lane : terms; t < terms; t += G) {
      const int64_t j = t % OW;
      const int64_t i = (t / OW) % OH;
      const int64_t n = t / (OW * OH);
      const int64_t h = i * a.stride_h - a.pad_h + k.h * a.dilation_h;
      const int64_t w = j * a.stride_w - a.pad_w + k.w * a.dilation_w;
      if (h < 0 || h >= H || w < 0 || w >= W) continue;
      acc += load(a.in0, at4(a.in0, n, k.n, i, j)) * load(a.in1, at4(a.in1, n, k.c, h, w));
    }
    acc = group_reduce(acc, G, scratch, SumOp{});
    if (active && lane == 0) store(a.out, at4(a.out, k.n, k.c, k.h, k.w), acc);
  }
}
