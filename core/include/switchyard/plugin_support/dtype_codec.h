// The storage types' bits: one f16/bf16 codec and one set of dtype predicates for every plugin and
// for the core (issue 28), header-only, needing nothing but the C++ standard library and
// plugin_abi.h.
//
// Rounding is to nearest, ties to even (docs/ops.md section 1), computed on the integer bits so
// that the result does not depend on the FPU's rounding mode or on flush-to-zero. NaN stays NaN:
// a quiet NaN of the same sign, its payload dropped (a backend converting in hardware may keep
// payload bits; which NaN is not specified). Values beyond the f16 range become +-inf, as does a
// value that rounds to 65536.
//
// A backend may convert with its hardware instead (onednn's _Float16, CUDA's __float2half_rn,
// a shader's conversion), provided the bits are the same: tests/plugin_support/dtype_codec_test.cpp
// checks this codec against an independent nearest-value search, and tests/ops checks every
// backend's COPY conversions against it, bit for bit.
#pragma once

#include <cstdint>
#include <cstring>

#include "switchyard/plugin_abi.h"

namespace sy_support {

inline uint32_t float_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

inline float bits_float(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

inline bool is_float_dtype(uint32_t dtype) {
  return dtype == SY_DTYPE_F32 || dtype == SY_DTYPE_F16 || dtype == SY_DTYPE_BF16;
}

inline bool is_int_dtype(uint32_t dtype) {
  return dtype == SY_DTYPE_I32 || dtype == SY_DTYPE_I64;
}

// f32 -> IEEE binary16.
inline uint16_t f32_to_f16_bits(float value) {
  const uint32_t x = float_bits(value);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);   // NaN
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520: inf
  if (magnitude < 0x38800000u) {
    // Below 2^-14: a subnormal half, round(|value| * 2^24) to nearest even, in integers.
    const uint32_t exponent = magnitude >> 23;
    if (exponent < 102) return sign;  // below half of the smallest step, 2^-25
    const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exponent;  // |value| * 2^24 = mantissa >> shift
    const uint32_t kept = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1);
    const uint32_t up = (rest > half || (rest == half && (kept & 1u) != 0)) ? 1u : 0u;
    return static_cast<uint16_t>(sign | (kept + up));
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped bits to nearest even; a
  // carry out of the mantissa moves to the next exponent, as it should.
  const uint32_t rounded = magnitude - 0x38000000u + 0xfffu + ((magnitude >> 13) & 1u);
  return static_cast<uint16_t>(sign | (rounded >> 13));
}

// IEEE binary16 -> f32, exact.
inline float f16_bits_to_f32(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1fu;
  uint32_t mantissa = half & 0x3ffu;
  if (exponent == 31) return bits_float(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
  if (exponent != 0) return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  if (mantissa == 0) return bits_float(sign);
  // Subnormal, mantissa * 2^-24: normalise until the leading bit reaches the implicit position.
  uint32_t shifts = 0;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    ++shifts;
  }
  return bits_float(sign | ((113u - shifts) << 23) | ((mantissa & 0x3ffu) << 13));
}

// f32 -> bfloat16. Written as a select, without branches, so that a loop over it vectorises (the
// onednn plugin's bulk conversion is such a loop).
inline uint16_t f32_to_bf16_bits(float value) {
  const uint32_t x = float_bits(value);
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (x >> 16) | 0x40u;
  const bool is_nan = static_cast<int32_t>(x & 0x7fffffffu) > 0x7f800000;
  return static_cast<uint16_t>(is_nan ? quiet_nan : rounded);
}

// bfloat16 -> f32, exact.
inline float bf16_bits_to_f32(uint16_t bits) {
  return bits_float(static_cast<uint32_t>(bits) << 16);
}

}  // namespace sy_support
