// The plugins' f16/bf16 codec (switchyard/plugin_support/dtype_codec.h) against an independent
// definition: the nearest representable value, found by searching the sorted finite values of the
// type (decoded with ldexp), ties to the even bit pattern, and +-inf past the largest finite value
// plus half a step. Every f16 and bf16 pattern decodes to its exact value, and the codec agrees
// with the compiler's _Float16 where it has one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <vector>

#include "dtype_conversion.h"
#include "switchyard/plugin_support/dtype_codec.h"

namespace {

// The value of a 16-bit pattern with `mantissa_bits` mantissa bits and a 5- (f16) or 8-bit
// (bf16) exponent, computed from the definition of the format.
double decode(uint16_t bits, int mantissa_bits, int exponent_bits) {
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const double sign = (bits & 0x8000u) != 0 ? -1.0 : 1.0;
  const int exponent = (bits >> mantissa_bits) & ((1 << exponent_bits) - 1);
  const int mantissa = bits & ((1 << mantissa_bits) - 1);
  if (exponent == (1 << exponent_bits) - 1) {
    return mantissa == 0 ? sign * std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::quiet_NaN();
  }
  if (exponent == 0) return sign * std::ldexp(mantissa, 1 - bias - mantissa_bits);
  return sign * std::ldexp((1 << mantissa_bits) + mantissa, exponent - bias - mantissa_bits);
}

struct Format {
  int mantissa_bits;
  int exponent_bits;
  std::vector<uint16_t> positive;  // finite non-negative patterns in increasing order of value
  std::vector<double> values;
  double overflow;  // the largest finite value plus half a step: from here on, inf
};

Format make_format(int mantissa_bits, int exponent_bits) {
  Format format{mantissa_bits, exponent_bits, {}, {}, 0};
  for (uint32_t bits = 0; bits < 0x8000u; ++bits) {
    const double value = decode(static_cast<uint16_t>(bits), mantissa_bits, exponent_bits);
    if (!std::isfinite(value)) continue;
    format.positive.push_back(static_cast<uint16_t>(bits));  // already increasing
    format.values.push_back(value);
  }
  const double largest = format.values.back();
  const double step = largest - format.values[format.values.size() - 2];
  format.overflow = largest + step / 2;
  return format;
}

// The nearest pattern to `x`, ties to the even pattern; NaN stays NaN (returned as 0x7fff).
uint16_t nearest(const Format& format, float x) {
  if (std::isnan(x)) return 0x7fffu;
  const uint16_t sign = std::signbit(x) ? 0x8000u : 0u;
  const double magnitude = std::fabs(static_cast<double>(x));
  const uint16_t infinity =
      static_cast<uint16_t>(((1u << format.exponent_bits) - 1) << format.mantissa_bits);
  if (magnitude >= format.overflow) return static_cast<uint16_t>(sign | infinity);
  const auto above = std::lower_bound(format.values.begin(), format.values.end(), magnitude);
  const size_t hi = static_cast<size_t>(above - format.values.begin());
  if (hi == format.values.size()) return static_cast<uint16_t>(sign | format.positive.back());
  if (format.values[hi] == magnitude || hi == 0) {
    return static_cast<uint16_t>(sign | format.positive[hi]);
  }
  const size_t lo = hi - 1;
  const double below_distance = magnitude - format.values[lo];
  const double above_distance = format.values[hi] - magnitude;
  size_t pick = below_distance < above_distance ? lo : hi;
  if (below_distance == above_distance) pick = (format.positive[lo] & 1u) == 0 ? lo : hi;
  return static_cast<uint16_t>(sign | format.positive[pick]);
}

bool is_nan16(uint16_t bits, const Format& format) {
  return std::isnan(decode(bits, format.mantissa_bits, format.exponent_bits));
}

TEST_CASE("the f16 and bf16 codec decodes every pattern to its exact value", "[plugin_support]") {
  for (uint32_t k = 0; k < 65536; ++k) {
    const auto bits = static_cast<uint16_t>(k);
    const double f16 = decode(bits, 10, 5);
    const double bf16 = decode(bits, 7, 8);
    const float got_f16 = sy_support::f16_bits_to_f32(bits);
    const float got_bf16 = sy_support::bf16_bits_to_f32(bits);
    INFO("pattern 0x" << std::hex << k);
    if (std::isnan(f16)) {
      CHECK(std::isnan(got_f16));
    } else {
      CHECK(static_cast<double>(got_f16) == f16);
      CHECK(std::signbit(got_f16) == ((k & 0x8000u) != 0));  // -0 stays -0
    }
    if (std::isnan(bf16)) {
      CHECK(std::isnan(got_bf16));
    } else {
      CHECK(static_cast<double>(got_bf16) == bf16);
    }
  }
}

TEST_CASE("the f16 and bf16 codec rounds to the nearest value, ties to even", "[plugin_support]") {
  const Format f16 = make_format(10, 5);
  const Format bf16 = make_format(7, 8);
  size_t wrong_f16 = 0, wrong_bf16 = 0, checked = 0;
  std::ostringstream first;
  for (const uint32_t bits : switchyard::testing::conversion_probe_bits()) {
    const float x = sy_support::bits_float(bits);
    const uint16_t got_f16 = sy_support::f32_to_f16_bits(x);
    const uint16_t got_bf16 = sy_support::f32_to_bf16_bits(x);
    const uint16_t want_f16 = nearest(f16, x);
    const uint16_t want_bf16 = nearest(bf16, x);
    ++checked;
    if (std::isnan(x)) {
      wrong_f16 += is_nan16(got_f16, f16) ? 0 : 1;
      wrong_bf16 += is_nan16(got_bf16, bf16) ? 0 : 1;
      continue;
    }
    if (got_f16 != want_f16 && ++wrong_f16 <= 5) {
      first << "\n  f16 of 0x" << std::hex << bits << ": 0x" << got_f16 << ", nearest 0x"
            << want_f16 << std::dec;
    }
    if (got_bf16 != want_bf16 && ++wrong_bf16 <= 5) {
      first << "\n  bf16 of 0x" << std::hex << bits << ": 0x" << got_bf16 << ", nearest 0x"
            << want_bf16 << std::dec;
    }
  }
  CHECK(checked > 1000000);
  INFO("the first differences:" << first.str());
  CHECK(wrong_f16 == 0);
  CHECK(wrong_bf16 == 0);
  // The edges, by name.
  CHECK(sy_support::f32_to_f16_bits(65504.0f) == 0x7bffu);
  CHECK(sy_support::f32_to_f16_bits(65519.99609375f) == 0x7bffu);
  CHECK(sy_support::f32_to_f16_bits(65520.0f) == 0x7c00u);  // the tie rounds to even: inf
  CHECK(sy_support::f32_to_f16_bits(0x1p-25f) == 0x0000u);  // half the smallest step: to even 0
  CHECK(sy_support::f32_to_f16_bits(0x1.8p-25f) == 0x0001u);
  CHECK(sy_support::f32_to_f16_bits(-0.0f) == 0x8000u);
  CHECK(sy_support::f32_to_bf16_bits(0.1f) == 0x3dcdu);
  CHECK(sy_support::f32_to_bf16_bits(sy_support::bits_float(0x7f7f8000u)) == 0x7f80u);  // tie: inf
}

#if defined(__FLT16_MANT_DIG__)
TEST_CASE("the f16 codec gives the compiler's _Float16 bits", "[plugin_support]") {
  size_t wrong = 0;
  std::ostringstream first;
  for (const uint32_t bits : switchyard::testing::conversion_probe_bits()) {
    const float x = sy_support::bits_float(bits);
    __extension__ _Float16 half = static_cast<_Float16>(x);
    uint16_t compiler = 0;
    std::memcpy(&compiler, &half, sizeof(compiler));
    const uint16_t codec = sy_support::f32_to_f16_bits(x);
    using switchyard::testing::dtype_conversion_detail::f16_is_nan;
    const bool same = std::isnan(x) ? f16_is_nan(compiler) && f16_is_nan(codec) : compiler == codec;
    if (!same && ++wrong <= 5) {
      first << "\n  0x" << std::hex << bits << ": _Float16 0x" << compiler << ", codec 0x" << codec
            << std::dec;
    }
  }
  INFO("the first differences:" << first.str());
  CHECK(wrong == 0);
}
#endif

}  // namespace
