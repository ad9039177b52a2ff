// Direct 2-D convolution, NCHW activations, weights [O, C / groups, KH, KW] (sections 9, 9a and 9b
// of docs/ops.md): CONV2D and CONV2D_GROUPED are the cases groups = 1 and groups >= 1, and
// CONV2D_FUSED is the forward kernel with its epilogue (+ residual, then an activation). Output
// channel o belongs to group o / (O / groups), which reads input channels g * C/groups onwards.
// Every output element is computed by gathering its terms, so no kernel needs atomics and results
// are deterministic.
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

// sy_activation on the f32 value; NaN passes through every activation (docs/ops.md 9b).
__device__ __forceinline__ float activate(const SyConvArgs& a, float v) {
  if (v != v) return v;
  switch (a.activation) {
    case 1:  // SY_ACTIVATION_RELU
      return v > 0.0f ? v : 0.0f;
    case 2:  // SY_ACTIVATION_CLIP
      return v < a.low ? a.low : (v > a.high ? a.high : v);
    case 3:  // SY_ACTIVATION_SILU
      return v / (1.0f + expf(-v));
    default:
      return v;
  }
}

__device__ __forceinline__ int64_t at4(const SyTensorArg& t, int64_t a, int64_t b, int64_t c,
                                       int64_t d) {
  return a * t.strides[0] + b * t.strides[1] + c * t.strides[2] + d * t.strides[3];
}

}  // namespace
}  // namespace sy

// in0 = x [N, C, H, W], in1 = w [O, C/G, KH, KW], out = y [N, O, OH, OW]; optional residual.
extern "C" __global__ void sy_conv2d_forward(SyConvArgs a) {
  using namespace sy;
  const int64_t total = a.out.shape[0] * a.out.shape[1] * a.out.shape[2] * a.out.shape[3];
  const int64_t H = a.in0.shape[2], W = a.in0.shape[3];
  const int64_t CG = a.in1.shape[1], KH = a.in1.shape[2], KW = a.in1.shape[3];
  const int64_t OG = a.out.shape[1] / a.groups;  // output channels per group
  for (int64_t linear = global_thread(); linear < total; linear += grid_stride()) {
    const Nchw y = unravel4(a.out, linear);  // y.c is the output channel o
    const int64_t c0 = (y.c / OG) * CG;      // the group's first input channel
    float acc = a.has_bias ? load(a.bias, y.c * a.bias.strides[0]) : 0.0f;
    for (int64_t k = 0; k < CG; ++k) {
      for (int64_t kh = 0; kh < KH; ++kh) {
        const int64_t h = y.h * a.stride_h - a.pad_h + kh * a.dilation_h;
        if (h < 0 || h >= H) continue;
        for (int64_t kw = 0; kw < KW; ++kw) {
          const int64_t w = y.w * a.stride_w - a.pad_w + kw * a.dilation_w;
          if (w < 0 || w >= W) continue;
          acc +=
              load(a.in0, at4(a.in0, y.n, c0 + k, h, w)) * load(a.in1, at4(a.in1, y.c, k, kh, kw));
        }
      }
    }
    if (a.has_residual) acc += load(a.residual, at4(a.residual, y.n, y.c, y.h, y.w));
    store(a.out, at4(a.out, y.n, y.c, y.h, y.w), activate(a, acc));
  }
}

namespace sy {
namespace {

// One output of an f32 convolution, read through plain float pointers; Index is uint32_t when
// the output's element count fits, so the decomposition avoids 64-bit divisions.
template <typename Index>
__device__ __forceinline__ void conv_f32_element(const SyConvArgs& a, Index linear) {
  const Index OW = static_cast<Index>(a.out.shape[3]), OH = static_cast<Index>(a.out.shape[2]);
  const Index O = static_cast<Index>(a.out.shape[1]);
  const Index ow = linear % OW;
  Index rest = linear / OW;
  const Index oh = rest % OH;
  rest /= OH;
  const Index o = rest % O, n = rest / O;
  const int64_t CG = a.in1.shape[1], KH = a.in1.shape[2], KW = a.in1.shape[3];
  const int64_t H = a.in0.shape[2], W = a.in0.shape[3];
  const int64_t c0 = static_cast<int64_t>(o / (O / static_cast<Index>(a.groups))) * CG;
  const float* x = reinterpret_cast<const float*>(a.in0.data) + n * a.in0.strides[0];
  const float* w = reinterpret_cast<const float*>(a.in1.data) + o * a.in1.strides[0];
  const int64_t h0 = static_cast<int64_t>(oh) * a.stride_h - a.pad_h;
  const int64_t w0 = static_cast<int64_t>(ow) * a.stride_w - a.pad_w;
  float acc =
      a.has_bias ? reinterpret_cast<const float*>(a.bias.data)[o * a.bias.strides[0]] : 0.0f;
  for (int64_t k = 0; k < CG; ++k) {
    const float* xc = x + (c0 + k) * a.in0.strides[1];
    const float* wk = w + k * a.in1.strides[1];
    for (int64_t kh = 0; kh < KH; ++kh) {
      const int64_t h = h0 + kh * a.dilation_h;
      if (h < 0 || h >= H) continue;
      for (int64_t kw = 0; kw < KW; ++kw) {
        const int64_t col = w0 + kw * a.dilation_w;
        if (col < 0 || col >= W) continue;
        acc += xc[h * a.in0.strides[2] + col * a.in0.strides[3]] *
               wk[kh * a.in1.strides[2] + kw * a.in1.strides[3]];
      }
    }
  }
  if (a.has_residual) {
    acc += reinterpret_cast<const float*>(a.residual.data)[at4(a.residual, n, o, oh, ow)];
  }
  reinterpret_cast<float*>(a.out.data)[at4(a.out, n, o, oh, ow)] = activate(a, acc);
}

}  // namespace
}  // namespace sy

// sy_conv2d_forward for f32 (x, w, bias, residual and y all f32), where most convolutions that do
// not take the GEMM form are depthwise: the same sums in the same order.
extern "C" __global__ void sy_conv2d_forward_f32(SyConvArgs a) {
  using namespace sy;
  const int64_t total = a.out.shape[0] * a.out.shape[1] * a.out.shape[2] * a.out.shape[3];
  if (total <= 0x7fffffff) {
    for (int64_t linear = global_thread(); linear < total; linear += grid_stride()) {
      conv_f32_element<uint32_t>(a, static_cast<uint32_t>(linear));
    }
    return;
  }
  for (int64_t linear = global_thread(); linear < total; linear += grid_stride()) {
    conv_f32_element<int64_t>(a, linear);
  }
}

// in0 = grad_y [N, O, OH, OW], in1 = w [O, C/G, KH, KW], out = grad_x [N, C, H, W].
extern "C" __global__ void sy_conv2d_backward_data(SyConvArgs a) {
  using namespace sy;
  const int64_t total = a.out.shape[0] * a.out.shape[1] * a.out.shape[2] * a.out.shape[3];
  const int64_t OH = a.in0.shape[2], OW = a.in0.shape[3];
  const int64_t OG = a.in0.shape[1] / a.groups;  // output channels per group
  const int64_t CG = a.in1.shape[1], KH = a.in1.shape[2], KW = a.in1.shape[3];
  for (int64_t linear = global_thread(); linear < total; linear += grid_stride()) {
    const Nchw x = unravel4(a.out, linear);
    const int64_t g = x.c / CG, k = x.c - g * CG;  // x.c is channel k of group g
    float acc = 0.0f;
    for (int64_t kh = 0; kh < KH; ++kh) {
      const int64_t ih = x.h + a.pad_h - kh * a.dilation_h;  // = i * stride_h
      if (ih < 0 || ih % a.stride_h != 0 || ih / a.stride_h >= OH) continue;
      const int64_t i = ih / a.stride_h;
      for (int64_t kw = 0; kw < KW; ++kw) {
        const int64_t jw = x.w + a.pad_w - kw * a.dilation_w;
        if (jw < 0 || jw % a.stride_w != 0 || jw / a.stride_w >= OW) continue;
        const int64_t j = jw / a.stride_w;
        for (int64_t o = g * OG; o < (g + 1) * OG; ++o) {
          acc += load(a.in0, at4(a.in0, x.n, o, i, j)) * load(a.in1, at4(a.in1, o, k, kh, kw));
        }
      }
    }
    store(a.out, at4(a.out, x.n, x.c, x.h, x.w), acc);
  }
}

// in0 = grad_y [N, O, OH, OW], in1 = x [N, C, H, W], out = grad_w [O, C/G, KH, KW]. A group of
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
  const int64_t OG = a.in0.shape[1] / a.groups, CG = a.out.shape[1];
  const int64_t step = static_cast<int64_t>(gridDim.x) * groups_per_block;
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * groups_per_block; first < total;
       first += step) {
    const int64_t linear = first + threadIdx.x / G;
    const bool active = linear < total;
    const Nchw k = unravel4(a.out, active ? linear : 0);  // (o, c, kh, kw) in (n, c, h, w)
    const int64_t c = (k.n / OG) * CG + k.c;              // x's channel for grad_w[o, c]
    float acc = 0.0f;
    for (int64_t t = active ? lane : terms; t < terms; t += G) {
      const int64_t j = t % OW;
      const int64_t i = (t / OW) % OH;
      const int64_t n = t / (OW * OH);
      const int64_t h = i * a.stride_h - a.pad_h + k.h * a.dilation_h;
      const int64_t w = j * a.stride_w - a.pad_w + k.w * a.dilation_w;
      if (h < 0 || h >= H || w < 0 || w >= W) continue;
      acc += load(a.in0, at4(a.in0, n, k.n, i, j)) * load(a.in1, at4(a.in1, n, c, h, w));
    }
    acc = group_reduce(acc, G, scratch, SumOp{});
    if (active && lane == 0) store(a.out, at4(a.out, k.n, k.c, k.h, k.w), acc);
  }
}

namespace sy {
namespace {

// One im2col element; Index is uint32_t when the chunk's element count fits (the usual case: the
// host bounds a chunk to 256 MiB), so the decomposition avoids 64-bit divisions.
template <typename Index>
__device__ __forceinline__ void im2col_element(const SyIm2colArgs& a, Index linear, Index P,
                                               Index K, float* col) {
  const Index p = linear % P, k = (linear / P) % K, i = linear / (P * K);
  const Index ow = p % static_cast<Index>(a.out_w), oh = p / static_cast<Index>(a.out_w);
  const Index kw = k % static_cast<Index>(a.kernel_w);
  const Index kh = (k / static_cast<Index>(a.kernel_w)) % static_cast<Index>(a.kernel_h);
  const Index c = k / static_cast<Index>(a.kernel_w * a.kernel_h);
  const int64_t h =
      static_cast<int64_t>(oh) * a.stride_h - a.pad_h + static_cast<int64_t>(kh) * a.dilation_h;
  const int64_t w =
      static_cast<int64_t>(ow) * a.stride_w - a.pad_w + static_cast<int64_t>(kw) * a.dilation_w;
  col[linear] = h < 0 || h >= a.x.shape[2] || w < 0 || w >= a.x.shape[3]
                    ? 0.0f
                    : load(a.x, at4(a.x, i, c, h, w));
}

}  // namespace
}  // namespace sy

// col[i, (c * KH + kh) * KW + kw, oh * OW + ow] = x[i, c, oh * stride_h - pad_h + kh * dilation_h,
// ow * stride_w - pad_w + kw * dilation_w], or 0 in the padding.
extern "C" __global__ void sy_conv2d_im2col(SyIm2colArgs a) {
  using namespace sy;
  const int64_t P = a.out_h * a.out_w, K = a.channels * a.kernel_h * a.kernel_w;
  const int64_t total = a.images * K * P;
  float* col = reinterpret_cast<float*>(a.col);
  if (total <= 0x7fffffff) {
    for (int64_t linear = global_thread(); linear < total; linear += grid_stride()) {
      im2col_element<uint32_t>(a, static_cast<uint32_t>(linear), static_cast<uint32_t>(P),
                               static_cast<uint32_t>(K), col);
    }
    return;
  }
  for (int64_t linear = global_thread(); linear < total; linear += grid_stride()) {
    im2col_element<int64_t>(a, linear, P, K, col);
  }
}

// The GEMM form's epilogue, in place on y (a.out, dense NCHW): + bias[o], + residual, then the
// activation.
extern "C" __global__ void sy_conv2d_epilogue(SyConvArgs a) {
  using namespace sy;
  const int64_t O = a.out.shape[1], P = a.out.shape[2] * a.out.shape[3];
  const int64_t total = a.out.shape[0] * O * P;
  for (int64_t linear = global_thread(); linear < total; linear += grid_stride()) {
    float v = load(a.out, linear);
    if (a.has_bias) v += load(a.bias, ((linear / P) % O) * a.bias.strides[0]);
    if (a.has_residual) {
      const Nchw r = unravel4(a.out, linear);
      v += load(a.residual, at4(a.residual, r.n, r.c, r.h, r.w));
    }
    store(a.out, linear, activate(a, v));
  }
}
