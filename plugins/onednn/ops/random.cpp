// RANDOM_UNIFORM and RANDOM_NORMAL (docs/ops.md section 14): Philox4x32-10 keyed by the seed,
// counter = offset + the element's row-major logical index. The plugin is compiled with
// -ffp-contract=off so that the uniform transform rounds twice exactly as defined and matches the
// reference bit for bit.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "cpu_info.h"
#include "ops/ops.h"
#include "ops/strided_loop.h"
#include "ops/vector_clones.h"
#include "switchyard/plugin_support/philox.h"

namespace sy_onednn {

namespace {

constexpr int kBlock = 32;

// Philox4x32-10 (switchyard/plugin_support/philox.h) for the counters first, first + 1, ...
// first + kBlock - 1 (64-bit, wrapping) under one key; writes words 0 and 1 of each result. The
// lanes are independent, so the loop vectorises, compiled for AVX-512, AVX2 and the baseline. GCC
// turns each 32x32->64-bit product into zero-extensions and a 64-bit vpmullq, and one 16-lane
// block ran at ~23 cycles an element on a Zen 4 (dropout's [64, 128] mask: 51 us); philox_avx512
// below is used where the CPU has AVX-512.
SY_VECTOR_CLONES void philox_block_vectorised(uint64_t first, uint64_t seed, uint32_t* word0,
                                              uint32_t* word1) {
#pragma omp simd
  for (int l = 0; l < kBlock; ++l) {
    const SyPhiloxWords words = sy_philox_for_element(seed, first, static_cast<uint64_t>(l));
    word0[l] = words.w[0];
    word1[l] = words.w[1];
  }
}

// The same rounds on 16 lanes a vector, two vectors interleaved so that one's multiplies run
// while the other's wait: vpmuludq multiplies the even 32-bit lanes into 64-bit products, and the
// odd lanes shifted down, and blends put the high and low halves back in lane order.
struct Lanes16 {
  __m512i w[4];
};

// (The maskz forms with every lane set: the plain ones start from _mm512_undefined_epi32(), which
// GCC 12 reports as used uninitialised.)
__attribute__((target("avx512f"))) inline __m512i shift_down(__m512i a) {
  return _mm512_maskz_srli_epi64(0xFF, a, 32);
}

__attribute__((target("avx512f"))) inline void mul_hi_lo(__m512i a, __m512i m, __m512i* hi,
                                                         __m512i* lo) {
  const __m512i even = _mm512_maskz_mul_epu32(0xFF, a, m);
  const __m512i odd = _mm512_maskz_mul_epu32(0xFF, shift_down(a), m);
  constexpr __mmask16 kOdd = 0xAAAA;
  *lo = _mm512_mask_blend_epi32(kOdd, even, _mm512_maskz_slli_epi64(0xFF, odd, 32));
  *hi = _mm512_mask_blend_epi32(kOdd, shift_down(even), odd);
}

__attribute__((target("avx512f"))) inline void philox_round(Lanes16& c, __m512i key0,
                                                            __m512i key1) {
  const __m512i m0 = _mm512_set1_epi32(static_cast<int>(SY_PHILOX_M0));
  const __m512i m1 = _mm512_set1_epi32(static_cast<int>(SY_PHILOX_M1));
  __m512i hi0, lo0, hi1, lo1;
  mul_hi_lo(c.w[0], m0, &hi0, &lo0);
  mul_hi_lo(c.w[2], m1, &hi1, &lo1);
  // 0x96: a ^ b ^ c
  c.w[0] = _mm512_ternarylogic_epi32(hi1, c.w[1], key0, 0x96);
  c.w[1] = lo1;
  c.w[2] = _mm512_ternarylogic_epi32(hi0, c.w[3], key1, 0x96);
  c.w[3] = lo0;
}

// Counters first + base + lane for 16 lanes: the low word, and the high word carried.
__attribute__((target("avx512f"))) inline Lanes16 counters(uint64_t first, int base) {
  const uint64_t start = first + static_cast<uint64_t>(base);
  const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i low_start = _mm512_set1_epi32(static_cast<int>(static_cast<uint32_t>(start)));
  const __m512i low = _mm512_add_epi32(low_start, lanes);
  const __mmask16 carried = _mm512_cmplt_epu32_mask(low, low_start);
  const __m512i high = _mm512_set1_epi32(static_cast<int>(static_cast<uint32_t>(start >> 32)));
  Lanes16 c;
  c.w[0] = low;
  c.w[1] = _mm512_mask_add_epi32(high, carried, high, _mm512_set1_epi32(1));
  c.w[2] = _mm512_setzero_si512();
  c.w[3] = _mm512_setzero_si512();
  return c;
}

__attribute__((target("avx512f"))) void philox_avx512(uint64_t first, uint64_t seed,
                                                      uint32_t* word0, uint32_t* word1) {
  static_assert(kBlock == 32, "two vectors of 16 lanes");
  Lanes16 a = counters(first, 0), b = counters(first, 16);
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    const __m512i key0 = _mm512_set1_epi32(static_cast<int>(k0));
    const __m512i key1 = _mm512_set1_epi32(static_cast<int>(k1));
    philox_round(a, key0, key1);
    philox_round(b, key0, key1);
    k0 += SY_PHILOX_W0;
    k1 += SY_PHILOX_W1;
  }
  _mm512_storeu_si512(word0, a.w[0]);
  _mm512_storeu_si512(word0 + 16, b.w[0]);
  _mm512_storeu_si512(word1, a.w[1]);
  _mm512_storeu_si512(word1 + 16, b.w[1]);
}

void philox_block(uint64_t first, uint64_t seed, uint32_t* word0, uint32_t* word1) {
  if (cpu_has_avx512f()) {
    philox_avx512(first, seed, word0, word1);
  } else {
    philox_block_vectorised(first, seed, word0, word1);
  }
}

constexpr float kTwoToMinus24 = 5.9604644775390625e-08f;
constexpr double kTwoPiDouble = 6.28318530717958647692;

struct Uniform {
  float low, high;
  float operator()(uint32_t word0, uint32_t) const {
    const float u = static_cast<float>(word0 >> 8) * kTwoToMinus24;
    float t = high - low;
    t = t * u;
    return low + t;
  }
};

struct Normal {
  float mean, stddev;
  float operator()(uint32_t word0, uint32_t word1) const {
    const float u1 = static_cast<float>((word0 >> 8) + 1) * kTwoToMinus24;
    const float u2 = static_cast<float>(word1 >> 8) * kTwoToMinus24;
    // The angle in double: 2 pi u2 rounded to f32 is up to 2.4e-7 off, which moves z by up to
    // 1.4e-6 where |z| is small and sqrt(-2 log u1) is not, past docs/ops.md's bound (found by
    // the drawn conformance cases over 300,000 samples).
    const auto c = static_cast<float>(std::cos(kTwoPiDouble * static_cast<double>(u2)));
    const float z = std::sqrt(-2.0f * std::log(u1)) * c;
    return mean + stddev * z;
  }
};

// One block's values into dense memory: a loop GCC vectorises for the uniform transform (the
// normal one calls libm per element).
template <typename T, typename Transform>
SY_VECTOR_CLONES void transform_block(const uint32_t* word0, const uint32_t* word1, int64_t count,
                                      T* out, const Transform& transform) {
  const Transform local = transform;  // a copy: stores to out cannot alias its members
  for (int64_t l = 0; l < count; ++l) out[l] = store_f32<T>(local(word0[l], word1[l]));
}

// Fills the logical elements [first, last) of `out`.
template <typename T, typename Transform>
void generate_range(const TensorView& out, uint64_t seed, uint64_t offset, int64_t first,
                    int64_t last, const Transform& transform) {
  const bool dense = out.is_contiguous();
  int64_t index[SY_MAX_RANK] = {};
  int64_t rest = first;
  for (int d = out.rank - 1; d >= 0; --d) {
    index[d] = rest % out.shape[d];
    rest /= out.shape[d];
  }
  uint32_t word0[kBlock], word1[kBlock];
  for (int64_t block = first; block < last; block += kBlock) {
    philox_block(offset + static_cast<uint64_t>(block), seed, word0, word1);
    const int64_t count = std::min<int64_t>(kBlock, last - block);
    if (dense) {
      transform_block(word0, word1, count, out.as<T>() + block, transform);
      continue;
    }
    for (int64_t l = 0; l < count; ++l) {
      *reinterpret_cast<T*>(out.element(index)) = store_f32<T>(transform(word0[l], word1[l]));
      for (int d = out.rank - 1; d >= 0 && ++index[d] == out.shape[d]; --d) index[d] = 0;
    }
  }
}

template <typename T, typename Transform>
void generate(OpContext& ctx, const TensorView& out, const Transform& transform) {
  const uint64_t seed = ctx.params.random.seed;
  const uint64_t offset = ctx.params.random.offset;
  const int64_t count = out.numel();
  const int threads = ctx.threads_for(count, kMinTranscendentalElements);
  // Ranges start on block boundaries so that every thread runs whole blocks.
  const int64_t blocks = (count + kBlock - 1) / kBlock;
  parallel_ranges(blocks, threads, [&](int64_t first_block, int64_t last_block) {
    generate_range<T>(out, seed, offset, first_block * kBlock, std::min(count, last_block * kBlock),
                      transform);
  });
}

}  // namespace

void run_random(OpContext& ctx) {
  ctx.require_counts(0, 1);
  const TensorView& out = ctx.out[0];
  ctx.require_float(out, "out");
  const auto& p = ctx.params.random;
  if (ctx.op == SY_OP_RANDOM_NORMAL && !(p.b >= 0.0)) {
    fail_invalid("RANDOM_NORMAL: the standard deviation (random.b) must be >= 0, got " +
                 std::to_string(p.b));
  }
  if (out.numel() == 0) return;
  visit_float_dtype(out.dtype, [&](auto type_tag) {
    using T = decltype(type_tag);
    if (ctx.op == SY_OP_RANDOM_UNIFORM) {
      generate<T>(ctx, out, Uniform{static_cast<float>(p.a), static_cast<float>(p.b)});
    } else {
      generate<T>(ctx, out, Normal{static_cast<float>(p.a), static_cast<float>(p.b)});
    }
  });
}

}  // namespace sy_onednn
