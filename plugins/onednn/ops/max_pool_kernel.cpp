// The 2x2 max-pool kernels (max_pool_kernel.h). Each output row comes from a pair of input rows:
// 16 outputs at a time, the pair's 32 + 32 inputs loaded (masked at the row's end) and split into
// even and odd columns with two permutes, so a window's four values sit in one lane of four
// vectors: a (top left), b (top right), c (bottom left), d (bottom right). The first maximum is
// found as a tree, which picks the same element as a row-major scan: the first of a and b, the
// first of c and d, then the bottom one only if it beats the top one (larger, or a NaN where the
// top is not). A row of 2w inputs fills w / 2 lanes, so narrow planes (4x4, 8x8) waste most of
// each vector, and the mask compares (about a dozen a chunk, the limit here) dominate: pool.cpp
// uses the kernel from 14 columns. Threads split the row pairs.
#include "ops/max_pool_kernel.h"

#include <immintrin.h>

#include <algorithm>

#include "ops/strided_loop.h"

namespace sy_onednn {
namespace {

// Lanes 0-15 of the result: the even (or odd) elements of lo:hi, 32 floats.
__attribute__((target("avx512f"))) inline __m512 evens(__m512 lo, __m512 hi) {
  const __m512i index =
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  return _mm512_permutex2var_ps(lo, index, hi);
}

__attribute__((target("avx512f"))) inline __m512 odds(__m512 lo, __m512 hi) {
  const __m512i index =
      _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  return _mm512_permutex2var_ps(lo, index, hi);
}

// Where v replaces best as the maximum: best is not NaN, and v is larger or NaN.
__attribute__((target("avx512f"))) inline __mmask16 takes_over(__m512 v, __m512 best) {
  const __mmask16 best_ordered = _mm512_cmp_ps_mask(best, best, _CMP_ORD_Q);
  const __mmask16 larger = _mm512_cmp_ps_mask(v, best, _CMP_GT_OQ);
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  return best_ordered & (larger | nan);
}

// The masks of a row chunk of `count` outputs (1..16): its inputs are 2 * count floats of a row,
// the first 16 in the low vector.
struct ChunkMasks {
  __mmask16 out, in_lo, in_hi;
};

inline ChunkMasks chunk_masks(int64_t count) {
  const auto ones = [](int64_t n) {
    return static_cast<__mmask16>(n >= 16 ? 0xFFFF : (1u << std::max<int64_t>(n, 0)) - 1);
  };
  return {ones(count), ones(2 * count), ones(2 * count - 16)};
}

struct Window {
  __m512 a, b, c, d;  // top left, top right, bottom left, bottom right of 16 windows
};

__attribute__((target("avx512f"))) inline Window load_windows(const float* top, const float* bottom,
                                                              const ChunkMasks& m) {
  const __m512 t0 = _mm512_maskz_loadu_ps(m.in_lo, top);
  const __m512 t1 = _mm512_maskz_loadu_ps(m.in_hi, top + 16);
  const __m512 b0 = _mm512_maskz_loadu_ps(m.in_lo, bottom);
  const __m512 b1 = _mm512_maskz_loadu_ps(m.in_hi, bottom + 16);
  return {evens(t0, t1), odds(t0, t1), evens(b0, b1), odds(b0, b1)};
}

// The first maximum of 16 windows: which of a and b, which of c and d, and whether the bottom
// one wins, with its value.
struct FirstMax {
  __mmask16 right_top, right_bottom, bottom;
  __m512 value;
};

__attribute__((target("avx512f"))) inline FirstMax first_max(const Window& v) {
  FirstMax f;
  f.right_top = takes_over(v.b, v.a);
  f.right_bottom = takes_over(v.d, v.c);
  const __m512 upper = _mm512_mask_blend_ps(f.right_top, v.a, v.b);
  const __m512 lower = _mm512_mask_blend_ps(f.right_bottom, v.c, v.d);
  f.bottom = takes_over(lower, upper);
  f.value = _mm512_mask_blend_ps(f.bottom, upper, lower);
  return f;
}

// Where row pair r = plane * oh + row (the output row) is, counted up from the first one rather
// than divided out for every row pair.
struct RowPair {
  const MaxPool2x2& p;
  int64_t plane, row;

  RowPair(const MaxPool2x2& pool, int64_t r) : p(pool), plane(r / pool.oh), row(r % pool.oh) {}
  int64_t offset() const { return (plane * p.h + 2 * row) * p.w; }  // of its top input row
  void next() {
    if (++row == p.oh) row = 0, ++plane;
  }
};

__attribute__((target("avx512f"))) void forward_rows(const MaxPool2x2& p, const float* x, float* y,
                                                     int64_t first, int64_t last) {
  RowPair at(p, first);
  for (int64_t r = first; r < last; ++r, at.next()) {
    const float* top = x + at.offset();
    float* out = y + r * p.ow;
    for (int64_t j = 0; j < p.ow; j += 16) {
      const ChunkMasks m = chunk_masks(std::min<int64_t>(16, p.ow - j));
      const FirstMax f = first_max(load_windows(top + 2 * j, top + p.w + 2 * j, m));
      _mm512_mask_storeu_ps(out + j, m.out, f.value);
    }
  }
}

// Interleaves even and odd lanes back into row order: the row chunk's 2 * count floats.
__attribute__((target("avx512f"))) inline void store_pairs(float* row, __m512 even, __m512 odd,
                                                           const ChunkMasks& m) {
  const __m512i low = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i high =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  _mm512_mask_storeu_ps(row, m.in_lo, _mm512_permutex2var_ps(even, low, odd));
  if (m.in_hi != 0)
    _mm512_mask_storeu_ps(row + 16, m.in_hi, _mm512_permutex2var_ps(even, high, odd));
}

__attribute__((target("avx512f"))) void backward_rows(const MaxPool2x2& p, const float* grad_y,
                                                      const float* x, float* grad_x, int64_t first,
                                                      int64_t last) {
  const auto lanes = [](int bits) { return static_cast<__mmask16>(bits); };
  RowPair at(p, first);
  for (int64_t r = first; r < last; ++r, at.next()) {
    const float* top = x + at.offset();
    float* grad_top = grad_x + at.offset();
    const float* g_row = grad_y + r * p.ow;
    for (int64_t j = 0; j < p.ow; j += 16) {
      const ChunkMasks m = chunk_masks(std::min<int64_t>(16, p.ow - j));
      const FirstMax f = first_max(load_windows(top + 2 * j, top + p.w + 2 * j, m));
      const __m512 g = _mm512_maskz_loadu_ps(m.out, g_row + j);
      store_pairs(grad_top + 2 * j, _mm512_maskz_mov_ps(lanes(~f.bottom & ~f.right_top), g),
                  _mm512_maskz_mov_ps(lanes(~f.bottom & f.right_top), g), m);
      store_pairs(grad_top + p.w + 2 * j, _mm512_maskz_mov_ps(lanes(f.bottom & ~f.right_bottom), g),
                  _mm512_maskz_mov_ps(lanes(f.bottom & f.right_bottom), g), m);
    }
    if (p.w % 2 != 0) {  // the last column is in no window
      grad_top[p.w - 1] = 0.0f;
      grad_top[2 * p.w - 1] = 0.0f;
    }
    if (p.h % 2 != 0 && at.row == p.oh - 1) {  // nor is an odd plane's last row
      std::fill(grad_x + (at.plane * p.h + p.h - 1) * p.w, grad_x + (at.plane + 1) * p.h * p.w,
                0.0f);
    }
  }
}

}  // namespace

void max_pool_2x2_f32(const MaxPool2x2& p, const float* x, float* y, int threads) {
  parallel_ranges(p.planes * p.oh, threads,
                  [&](int64_t first, int64_t last) { forward_rows(p, x, y, first, last); });
}

void max_pool_2x2_backward_f32(const MaxPool2x2& p, const float* grad_y, const float* x,
                               float* grad_x, int threads) {
  parallel_ranges(p.planes * p.oh, threads, [&](int64_t first, int64_t last) {
    backward_rows(p, grad_y, x, grad_x, first, last);
  });
}

}  // namespace sy_onednn
