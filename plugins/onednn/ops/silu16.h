// silu16: SiLU over 16 floats in AVX-512, for the SiLU pass (silu_kernel.cpp) and the depthwise
// kernel's epilogue (depthwise_kernel.cpp). Include it only from a file whose callers check
// __builtin_cpu_supports("avx512f") first.
#pragma once

#include <immintrin.h>

// GCC 12's AVX-512 intrinsics start some results from _mm512_undefined_ps(), which
// -Wmaybe-uninitialized reports inside the header (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace sy_onednn {

// Measured on a 2-core Zen 4 (one core, in L1): 0.27 ns an element here against 0.42 for the
// auto-vectorised sigmoid_approx loop (silu_kernel.cpp's silu_portable), whose division and
// separate multiplies and adds cost more than the reciprocal estimate and FMAs; oneDNN's
// eltwise_swish post-op cost about 0.55 ns an element a core inside the convolutions of
// EfficientNet-B0.
__attribute__((target("avx512f"))) inline __m512 silu16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  // t = -x clamped to [-87, 88], where exp(t) stays a normal float (a NaN x becomes a bound here;
  // the final x * s is NaN again).
  __m512 t = _mm512_sub_ps(_mm512_setzero_ps(), x);
  t = _mm512_min_ps(_mm512_max_ps(t, _mm512_set1_ps(-87.0f)), _mm512_set1_ps(88.0f));
  // t = k ln2 + r, |r| <= ln2 / 2 (ln2 split in two so that k * hi is exact).
  const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(t, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693145751953125f), t);
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.42860682030941723212e-6f), r);
  __m512 p = _mm512_set1_ps(1.0f / 720);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, one);
  p = _mm512_fmadd_ps(p, r, one);
  const __m512 d = _mm512_add_ps(one, _mm512_scalef_ps(p, k));  // 1 + exp(-x), in [1, 1.7e38]
  __m512 s = _mm512_rcp14_ps(d);                                // 1 / d to 2^-14
  s = _mm512_mul_ps(s, _mm512_fnmadd_ps(d, s, _mm512_set1_ps(2.0f)));  // one Newton step
  return _mm512_mul_ps(x, s);
}

}  // namespace sy_onednn
