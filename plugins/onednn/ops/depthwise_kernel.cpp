// The depthwise kernel (depthwise_kernel.h). A 3x3 layer does 9 multiply-adds per output value and
// reads each input value for 9 outputs, so the kernel is bound by loads and FMA latency unless
// registers carry the reuse:
// - pixels_reusing (3x3 and 5x5, stride 1 or 2, dilation 1): a run of 8 (or 4, 2, 1) output
//   pixels along a row loads each input vector of a tap row once for all the FMAs that use it, 8
//   accumulators in flight. One thread of a 2-core Zen 4 then reaches 40-60% of its FMA peak
//   (25-30% with a load per FMA; GCC folded loads held in a variable into each FMA again until
//   the asm barrier in pixels_reusing kept them in registers).
// - pixels and edge_pixel: any other kernel width, stride or dilation.
// - The runs that touch the padding load zeros there (masked loads) instead of taking a slow
//   per-tap path: a 7x7 image has 2 edge pixels of 7 in every row.
// Work is split over threads by output rows, as the convolution after it splits its pixels (the
// next layer then reads what its own core wrote), each row all channels.
#include "ops/depthwise_kernel.h"

#include <algorithm>
#include <cstdint>

#include "cpu_info.h"
#include "ops/silu16.h"
#include "ops/strided_loop.h"
#include "switchyard/plugin_abi.h"

namespace sy_onednn {
namespace {

constexpr int64_t kLanes = 16;

// Floor division for a possibly negative numerator and a positive denominator.
int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// What one output row needs: its input rows' starts (the valid kh taps only) and their weights,
// where the output and residual rows start.
struct Row {
  const float* x_rows[16];  // x_rows[t]: the input row of the t-th valid tap row
  const float* w_rows[16];  // that tap row's weights: [KW][C]
  int64_t taps = 0;         // valid kh taps
  float* y = nullptr;
  const float* r = nullptr;  // residual row, or null
};

// The activation after the residual, NaN kept: vmaxps/vminps return their second operand when
// either is NaN, and v is always the second operand here (as the scalar `v < low ? low : v`).
struct Epilogue {
  uint32_t activation;
  __m512 low, high;
};

__attribute__((target("avx512f"))) inline __m512 finish(const Epilogue& e, __m512 v) {
  switch (e.activation) {
    case SY_ACTIVATION_RELU:
      return _mm512_max_ps(_mm512_setzero_ps(), v);
    case SY_ACTIVATION_CLIP:
      return _mm512_min_ps(e.high, _mm512_max_ps(e.low, v));
    case SY_ACTIVATION_SILU:
      return silu16(v);
    default:
      return v;
  }
}

// 16 channels under mask m: unmasked loads and stores where the mask is full (masked stores cost
// more on some CPUs, Zen 4 among them).
template <bool Full>
__attribute__((target("avx512f"))) inline __m512 load(__mmask16 m, const float* at) {
  return Full ? _mm512_loadu_ps(at) : _mm512_maskz_loadu_ps(m, at);
}

template <bool Full>
__attribute__((target("avx512f"))) inline void store(__mmask16 m, float* at, __m512 v) {
  if (Full) {
    _mm512_storeu_ps(at, v);
  } else {
    _mm512_mask_storeu_ps(at, m, v);
  }
}

// R adjacent output pixels (ow0 .. ow0 + R - 1) times B channel blocks (c, c + 16, ...): R x B
// independent accumulators, so that the FMAs' latency overlaps, and each weight vector loaded once
// for the R pixels. The taps kw in [kw_first, kw_last) fall inside the input row for every pixel
// here; KW > 0 fixes that range to [0, KW) at compile time. !Full: one block under mask m.
template <int R, int B, int KW, bool Full>
__attribute__((target("avx512f"))) inline void pixels(const DepthwiseProblem& p, const Row& row,
                                                      int64_t c, __mmask16 m, const Epilogue& e,
                                                      int64_t ow0, int64_t kw_first,
                                                      int64_t kw_last) {
  static_assert(Full || B == 1, "a masked run covers one block");
  if (KW > 0) kw_first = 0, kw_last = KW;
  __m512 acc[R][B];
#pragma GCC unroll 4
  for (int b = 0; b < B; ++b) {
    const __m512 bias =
        p.bias != nullptr ? load<Full>(m, p.bias + c + b * kLanes) : _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int j = 0; j < R; ++j) acc[j][b] = bias;
  }
  const int64_t step = p.stride_w * p.x_w;
  const int64_t tap_step = p.dilation_w * p.x_w;
  const int64_t first = (ow0 * p.stride_w - p.pad_w) * p.x_w + c;
  for (int64_t t = 0; t < row.taps; ++t) {
    const float* xr = row.x_rows[t] + first;
    const float* wr = row.w_rows[t] + c;
#pragma GCC unroll 5
    for (int64_t kw = kw_first; kw < kw_last; ++kw) {
      const float* xk = xr + kw * tap_step;
#pragma GCC unroll 4
      for (int b = 0; b < B; ++b) {
        const __m512 wv = load<Full>(m, wr + kw * p.c + b * kLanes);
#pragma GCC unroll 8
        for (int j = 0; j < R; ++j) {
          acc[j][b] = _mm512_fmadd_ps(load<Full>(m, xk + j * step + b * kLanes), wv, acc[j][b]);
        }
      }
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < R; ++j) {
#pragma GCC unroll 4
    for (int b = 0; b < B; ++b) {
      const int64_t at = (ow0 + j) * p.y_w + c + b * kLanes;
      __m512 v = acc[j][b];
      if (row.r != nullptr) {
        v = _mm512_add_ps(v, load<Full>(m, row.r + (ow0 + j) * p.r_w + c + b * kLanes));
      }
      store<Full>(m, row.y + at, finish(e, v));
    }
  }
}

// R adjacent output pixels (ow0 .. ow0 + R - 1) times B channel blocks (c, c + 16, ...) at
// compile-time stride S, kernel width KW and dilation 1: each tap row's (R - 1) * S + KW input
// vectors of a block are loaded once and each serves up to KW accumulators, instead of one load
// per FMA (0.54 loads an FMA at R = 8, S = 1, KW = 3, against 1.1 in `pixels`).
//
// Masked: a run that reaches into the padding, or the channel tail (mask m, B = 1). An input
// vector outside the row is zero (an empty load mask: nothing is read), and its FMAs add 0 * w:
// zero padding taken literally, as an im2col convolution computes it. That is `pixels`' sum
// (which skips those taps) for every finite weight; an infinite or NaN weight makes the padded
// taps NaN here.
template <int R, int B, int S, int KW, bool Masked>
__attribute__((target("avx512f"))) inline void pixels_reusing(const DepthwiseProblem& p,
                                                              const Row& row, int64_t c,
                                                              __mmask16 m, const Epilogue& e,
                                                              int64_t ow0) {
  constexpr int kInputs = (R - 1) * S + KW;
  const int64_t first_iw = ow0 * S - p.pad_w;
  __mmask16 valid[kInputs];
  const float* at[kInputs];  // a valid address for every input (column 0 where outside)
#pragma GCC unroll 16
  for (int i = 0; i < kInputs; ++i) {
    const int64_t iw = first_iw + i;
    const bool inside = iw >= 0 && iw < p.w;
    valid[i] = Masked && !inside ? 0 : m;
    at[i] = reinterpret_cast<const float*>(static_cast<intptr_t>(inside ? iw * p.x_w : 0));
  }
  __m512 acc[R][B];
#pragma GCC unroll 4
  for (int b = 0; b < B; ++b) {
    const __m512 bias =
        p.bias != nullptr ? load<!Masked>(m, p.bias + c + b * kLanes) : _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int j = 0; j < R; ++j) acc[j][b] = bias;
  }
  for (int64_t t = 0; t < row.taps; ++t) {
#pragma GCC unroll 4
    for (int b = 0; b < B; ++b) {
      const float* xr = row.x_rows[t] + c + b * kLanes;
      const float* wr = row.w_rows[t] + c + b * kLanes;
      __m512 xv[kInputs];
      if (Masked) {
#pragma GCC unroll 16
        for (int i = 0; i < kInputs; ++i) {
          xv[i] = _mm512_maskz_loadu_ps(valid[i], xr + reinterpret_cast<intptr_t>(at[i]));
          asm("" : "+v"(xv[i]));
        }
      } else {
        const float* next = xr + first_iw * p.x_w;
#pragma GCC unroll 16
        for (int i = 0; i < kInputs; ++i) {
          xv[i] = _mm512_loadu_ps(next);
          next += p.x_w;
          // In a register from here on: GCC would otherwise fold the load into each of the KW
          // FMAs that use it, loading it KW times.
          asm("" : "+v"(xv[i]));
        }
      }
#pragma GCC unroll 5
      for (int kw = 0; kw < KW; ++kw) {
        const __m512 wv = load<!Masked>(m, wr + kw * p.c);
#pragma GCC unroll 8
        for (int j = 0; j < R; ++j) acc[j][b] = _mm512_fmadd_ps(xv[j * S + kw], wv, acc[j][b]);
      }
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < R; ++j) {
#pragma GCC unroll 4
    for (int b = 0; b < B; ++b) {
      const int64_t channel = c + b * kLanes;
      __m512 v = acc[j][b];
      if (row.r != nullptr) {
        v = _mm512_add_ps(v, load<!Masked>(m, row.r + (ow0 + j) * p.r_w + channel));
      }
      store<!Masked>(m, row.y + (ow0 + j) * p.y_w + channel, finish(e, v));
    }
  }
}

// Pixels [ow0, ow0 + R) of every channel (see pixels_reusing): B blocks at a time, so that a run
// has 4 to 8 accumulators, then single blocks; the channel tail under its mask. Edge: the run
// reaches into the padding.
template <int R, int S, int KW, bool Edge>
__attribute__((target("avx512f"))) inline void reusing_run(const DepthwiseProblem& p,
                                                           const Row& row, const Epilogue& e,
                                                           int64_t ow0) {
  constexpr int B = R >= 8 ? 1 : R >= 4 ? 2 : 4;
  int64_t c = 0;
  for (; c + B * kLanes <= p.c; c += B * kLanes) {
    pixels_reusing<R, B, S, KW, Edge>(p, row, c, 0xFFFF, e, ow0);
  }
  for (; c + kLanes <= p.c; c += kLanes) {
    pixels_reusing<R, 1, S, KW, Edge>(p, row, c, 0xFFFF, e, ow0);
  }
  if (c < p.c) {
    const __mmask16 m = static_cast<__mmask16>((1u << (p.c - c)) - 1u);
    pixels_reusing<R, 1, S, KW, true>(p, row, c, m, e, ow0);
  }
}

// The run of R pixels from ow0: without masks where it lies inside [ow_lo, ow_hi), the output
// columns whose taps read no padding.
template <int R, int S, int KW>
__attribute__((target("avx512f"))) inline void reusing_run_at(const DepthwiseProblem& p,
                                                              const Row& row, const Epilogue& e,
                                                              int64_t ow0, int64_t ow_lo,
                                                              int64_t ow_hi) {
  if (ow0 >= ow_lo && ow0 + R <= ow_hi) {
    reusing_run<R, S, KW, false>(p, row, e, ow0);
  } else {
    reusing_run<R, S, KW, true>(p, row, e, ow0);
  }
}

// A whole output row at stride S, width KW, dilation 1: runs of 8 (S = 1) or 4 pixels, then one
// each of 4, 2 and 1 for what is left.
template <int S, int KW>
__attribute__((target("avx512f"))) void reusing_row(const DepthwiseProblem& p, const Row& row,
                                                    const Epilogue& e, int64_t ow_lo,
                                                    int64_t ow_hi) {
  constexpr int kLong = S == 1 ? 8 : 4;
  int64_t ow = 0;
  for (; ow + kLong <= p.ow; ow += kLong) reusing_run_at<kLong, S, KW>(p, row, e, ow, ow_lo, ow_hi);
  if (kLong > 4 && ow + 4 <= p.ow) {
    reusing_run_at<4, S, KW>(p, row, e, ow, ow_lo, ow_hi);
    ow += 4;
  }
  if (ow + 2 <= p.ow) {
    reusing_run_at<2, S, KW>(p, row, e, ow, ow_lo, ow_hi);
    ow += 2;
  }
  if (ow < p.ow) reusing_run_at<1, S, KW>(p, row, e, ow, ow_lo, ow_hi);
}

// Pixels [ow0, ow0 + R) of every channel: the channels inner, so that the loads walk each pixel's
// channels in order; blocks in pairs (R = 4) or fours (R = 1) where there are that many, for 8 or 4
// accumulators.
template <int R, int KW>
__attribute__((target("avx512f"))) inline void pixel_run(const DepthwiseProblem& p, const Row& row,
                                                         const Epilogue& e, int64_t ow0,
                                                         int64_t kw_first, int64_t kw_last) {
  constexpr int kWide = R == 1 ? 4 : 2;
  int64_t c = 0;
  for (; c + kWide * kLanes <= p.c; c += kWide * kLanes) {
    pixels<R, kWide, KW, true>(p, row, c, 0xFFFF, e, ow0, kw_first, kw_last);
  }
  for (; c + kLanes <= p.c; c += kLanes) {
    pixels<R, 1, KW, true>(p, row, c, 0xFFFF, e, ow0, kw_first, kw_last);
  }
  if (c < p.c) {
    const __mmask16 m = static_cast<__mmask16>((1u << (p.c - c)) - 1u);
    pixels<R, 1, KW, false>(p, row, c, m, e, ow0, kw_first, kw_last);
  }
}

// One output pixel near the row's ends: only its kw taps inside the row.
__attribute__((target("avx512f"))) void edge_pixel(const DepthwiseProblem& p, const Row& row,
                                                   const Epilogue& e, int64_t ow) {
  // 0 <= ow * sw - pw + kw * dw <= W - 1
  const int64_t left = ow * p.stride_w - p.pad_w;
  const int64_t kw_first = std::max<int64_t>(0, -floor_div(left, p.dilation_w));
  const int64_t kw_last = std::min<int64_t>(p.kw, floor_div(p.w - 1 - left, p.dilation_w) + 1);
  pixel_run<1, 0>(p, row, e, ow, kw_first, std::max(kw_first, kw_last));
}

// Output row `r` (n * OH + oh), every channel.
template <int KW>
__attribute__((target("avx512f"))) void row_range(const DepthwiseProblem& p, int64_t r,
                                                  const Epilogue& e, int64_t ow_lo, int64_t ow_hi) {
  const int64_t n = r / p.oh;
  const int64_t oh = r % p.oh;
  Row row;
  const float* xn = p.x + n * p.x_n;
  for (int64_t kh = 0; kh < p.kh; ++kh) {
    const int64_t ih = oh * p.stride_h - p.pad_h + kh * p.dilation_h;
    if (ih < 0 || ih >= p.h) continue;
    row.x_rows[row.taps] = xn + ih * p.x_h;
    row.w_rows[row.taps] = p.weights + kh * p.kw * p.c;
    ++row.taps;
  }
  row.y = p.y + n * p.y_n + oh * p.y_h;
  if (p.residual != nullptr) row.r = p.residual + n * p.r_n + oh * p.r_h;
  if constexpr (KW > 0) {
    if (p.dilation_w == 1 && p.stride_w == 1) {
      return reusing_row<1, KW>(p, row, e, ow_lo, ow_hi);
    }
    if (p.dilation_w == 1 && p.stride_w == 2) {
      return reusing_row<2, KW>(p, row, e, ow_lo, ow_hi);
    }
  }
  int64_t ow = 0;
  for (; ow < ow_lo; ++ow) edge_pixel(p, row, e, ow);
  for (; ow + 4 <= ow_hi; ow += 4) pixel_run<4, KW>(p, row, e, ow, 0, p.kw);
  for (; ow < ow_hi; ++ow) pixel_run<1, KW>(p, row, e, ow, 0, p.kw);
  for (; ow < p.ow; ++ow) edge_pixel(p, row, e, ow);
}

// Output rows [r0, r1) (of N * OH), all channels of each before the next row: a row's input rows
// and its output row are then contiguous memory that streams, and the next output row finds KH - 1
// of its input rows in L2. With the two orders alternating in one process (2 threads, 2-core Zen
// 4), against groups of 16-64 channels sized to L1, each group through all the rows: batch 1
// [96, 112, 112] at stride 2 92 -> 85 us, [960, 7, 7] 23 -> 16, the others level; batch 32
// [144, 56, 56] 11.3 -> 10.7 ms, [384, 14, 14] 1.39 -> 1.19 ms.
__attribute__((target("avx512f"))) void depthwise_avx512(const DepthwiseProblem& p, int64_t r0,
                                                         int64_t r1) {
  const Epilogue e{p.activation, _mm512_set1_ps(p.low), _mm512_set1_ps(p.high)};
  // Output columns whose kw taps all fall inside the input row: ow * sw - pw >= 0 and
  // ow * sw - pw + (KW - 1) * dw <= W - 1.
  const int64_t ow_lo = std::min(p.ow, (p.pad_w + p.stride_w - 1) / p.stride_w);
  const int64_t ow_hi = std::clamp(
      floor_div(p.w - 1 + p.pad_w - (p.kw - 1) * p.dilation_w, p.stride_w) + 1, ow_lo, p.ow);
  for (int64_t r = r0; r < r1; ++r) {
    if (p.kw == 3) {
      row_range<3>(p, r, e, ow_lo, ow_hi);
    } else if (p.kw == 5) {
      row_range<5>(p, r, e, ow_lo, ow_hi);
    } else {
      row_range<0>(p, r, e, ow_lo, ow_hi);
    }
  }
}

}  // namespace

bool depthwise_kernel_available() {
  return cpu_has_avx512f();
}

void depthwise_nhwc_f32(const DepthwiseProblem& p, int threads) {
  // The threads split the output rows, as oneDNN's convolutions split the pixels: the 1x1
  // convolution that follows then finds its rows in the cache of the core that wrote them.
  parallel_ranges(p.n * p.oh, threads,
                  [&](int64_t first, int64_t last) { depthwise_avx512(p, first, last); });
}

void depthwise_weights_hwc(const float* w, const int64_t* strides, int64_t c, int64_t kh,
                           int64_t kw, float* out) {
  for (int64_t i = 0; i < kh; ++i) {
    for (int64_t j = 0; j < kw; ++j) {
      for (int64_t ch = 0; ch < c; ++ch) {
        out[(i * kw + j) * c + ch] = w[ch * strides[0] + i * strides[2] + j * strides[3]];
      }
    }
  }
}

}  // namespace sy_onednn
