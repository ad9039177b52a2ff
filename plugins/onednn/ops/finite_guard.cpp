#include "ops/finite_guard.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ops/strided_loop.h"
#include "ops/vector_clones.h"

namespace sy_onednn {
namespace {

// An integer maximum (vpmaxud) of the bits without their sign: for floats that are not NaN the
// order of these bit patterns is the order of the magnitudes, and NaN and inf lie above them all.
SY_VECTOR_CLONES uint32_t max_abs_bits_range(const uint32_t* bits, int64_t count) {
  uint32_t m = 0;
  for (int64_t i = 0; i < count; ++i) {
    const uint32_t v = bits[i] & 0x7fffffffu;
    m = v > m ? v : m;
  }
  return m;
}

float as_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace

uint32_t max_abs_bits(const float* x, int64_t count, int threads) {
  const auto* bits = reinterpret_cast<const uint32_t*>(x);
  if (threads <= 1) return max_abs_bits_range(bits, count);
  std::vector<uint32_t> parts(static_cast<size_t>(threads), 0);
  parallel_parts(count, threads, [&](int64_t part, int64_t first, int64_t last) {
    parts[static_cast<size_t>(part)] = max_abs_bits_range(bits + first, last - first);
  });
  uint32_t m = 0;
  for (const uint32_t p : parts) m = p > m ? p : m;
  return m;
}

void abs_weight_sums(const float* w, const int64_t* shape, const int64_t* strides, float* sums) {
  for (int64_t o = 0; o < shape[0]; ++o) {
    double sum = 0.0;
    bool finite = true;
    for (int64_t c = 0; c < shape[1]; ++c) {
      for (int64_t i = 0; i < shape[2]; ++i) {
        for (int64_t j = 0; j < shape[3]; ++j) {
          const float v = w[o * strides[0] + c * strides[1] + i * strides[2] + j * strides[3]];
          finite = finite && std::isfinite(v);
          sum += std::fabs(static_cast<double>(v));
        }
      }
    }
    const float rounded = static_cast<float>(sum);
    sums[o] =
        !finite || !std::isfinite(rounded)
            ? std::numeric_limits<float>::infinity()
            : (static_cast<double>(rounded) < sum ? std::nextafter(rounded, INFINITY) : rounded);
  }
}

bool outputs_stay_finite(uint32_t x_bits, const float* sums, int64_t out_channels,
                         const float* bias, int64_t bias_stride) {
  constexpr double kLimit = 1e37;
  if (x_bits >= 0x7f800000u) return false;  // an infinite or NaN input
  const double x_max = static_cast<double>(as_float(x_bits));
  for (int64_t o = 0; o < out_channels; ++o) {
    const double b = bias != nullptr ? std::fabs(static_cast<double>(bias[o * bias_stride])) : 0.0;
    // Written so that NaN (a NaN bias) and inf fail the test.
    if (!(x_max * static_cast<double>(sums[o]) + b < kLimit)) return false;
  }
  return true;
}

}  // namespace sy_onednn
