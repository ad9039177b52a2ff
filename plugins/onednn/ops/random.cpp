// RANDOM_UNIFORM and RANDOM_NORMAL (docs/ops.md section 14): Philox4x32-10 keyed by the seed,
// counter = offset + the element's row-major logical index. The plugin is compiled with
// -ffp-contract=off so that the uniform transform rounds twice exactly as defined and matches the
// reference bit for bit.
#include <algorithm>
#include <cmath>
#include <string>

#include "ops/ops.h"
#include "ops/strided_loop.h"
#include "ops/vector_clones.h"
#include "switchyard/plugin_support/philox.h"

namespace sy_onednn {

namespace {

constexpr int kBlock = 16;

// Philox4x32-10 (switchyard/plugin_support/philox.h) for the counters first, first + 1, ...
// first + kBlock - 1 (64-bit, wrapping) under one key; writes words 0 and 1 of each result. The
// lanes are independent, so the loop vectorises: each round becomes SIMD 32x32->64-bit multiplies
// (vpmuludq), compiled for AVX-512, AVX2 and the baseline.
SY_VECTOR_CLONES void philox_block(uint64_t first, uint64_t seed, uint32_t* word0,
                                   uint32_t* word1) {
#pragma omp simd
  for (int l = 0; l < kBlock; ++l) {
    const SyPhiloxWords words = sy_philox_for_element(seed, first, static_cast<uint64_t>(l));
    word0[l] = words.w[0];
    word1[l] = words.w[1];
  }
}

constexpr float kTwoToMinus24 = 5.9604644775390625e-08f;
constexpr float kTwoPi = 6.28318530717958647692f;

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
    const float z = std::sqrt(-2.0f * std::log(u1)) * std::cos(kTwoPi * u2);
    return mean + stddev * z;
  }
};

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
    for (int64_t l = 0; l < count; ++l) {
      const float value = transform(word0[l], word1[l]);
      T* target = dense ? out.as<T>() + block + l : reinterpret_cast<T*>(out.element(index));
      *target = store_f32<T>(value);
      if (!dense) {
        for (int d = out.rank - 1; d >= 0 && ++index[d] == out.shape[d]; --d) index[d] = 0;
      }
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
