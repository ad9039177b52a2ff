#include "ops/silu_kernel.h"

#include "cpu_info.h"
#include "ops/fast_math.h"
#include "ops/silu16.h"
#include "ops/strided_loop.h"
#include "ops/vector_clones.h"

namespace sy_onednn {
namespace {

__attribute__((target("avx512f"))) void silu_avx512(float* y, int64_t count) {
  int64_t i = 0;
  for (; i + 16 <= count; i += 16) _mm512_storeu_ps(y + i, silu16(_mm512_loadu_ps(y + i)));
  if (i < count) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (count - i)) - 1u);
    _mm512_mask_storeu_ps(y + i, tail, silu16(_mm512_maskz_loadu_ps(tail, y + i)));
  }
}

// Without AVX-512: fast_math.h's sigmoid, which GCC vectorises (NaN passes through its clamps).
SY_VECTOR_CLONES void silu_portable(float* y, int64_t count) {
  for (int64_t i = 0; i < count; ++i) y[i] = y[i] * sigmoid_approx(y[i]);
}

}  // namespace

void silu_in_place(float* y, int64_t count) {
  if (cpu_has_avx512f()) {
    silu_avx512(y, count);
  } else {
    silu_portable(y, count);
  }
}

void silu_in_place(float* y, int64_t count, int threads) {
  parallel_ranges(count, threads,
                  [&](int64_t first, int64_t last) { silu_in_place(y + first, last - first); });
}

}  // namespace sy_onednn
