// Conversions between f32 and the 16-bit storage types, with round-to-nearest-even.
//
// The reference computes every f16/bf16 op in f32 and rounds each result once with these helpers,
// so they define what "rounded to the storage dtype" means for the whole op set (docs/ops.md).
#pragma once

#include <bit>
#include <cstdint>

namespace sy_reference {

// f32 -> IEEE binary16, round-to-nearest-even; NaN stays a quiet NaN and overflow gives +-inf.
// The subnormal branch lets the FPU do the rounding by adding a magic number whose exponent lines
// the ten mantissa bits up at the bottom of the float (F. Giesen's well-known construction).
inline uint16_t f32_to_f16(float value) {
  constexpr uint32_t kF32Infinity = 255u << 23;
  constexpr uint32_t kF16OverflowThreshold = (127u + 16u) << 23;  // 65536.0f
  constexpr uint32_t kDenormMagic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
  uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint32_t sign = bits & 0x80000000u;
  bits ^= sign;
  uint32_t half = 0;
  if (bits >= kF16OverflowThreshold) {
    half = bits > kF32Infinity ? 0x7E00u : 0x7C00u;
  } else if (bits < (113u << 23)) {
    const float shifted = std::bit_cast<float>(bits) + std::bit_cast<float>(kDenormMagic);
    half = std::bit_cast<uint32_t>(shifted) - kDenormMagic;
  } else {
    const uint32_t mantissa_odd = (bits >> 13) & 1u;
    bits += (static_cast<uint32_t>(15 - 127) << 23) + 0xFFFu;
    bits += mantissa_odd;
    half = bits >> 13;
  }
  return static_cast<uint16_t>(half | (sign >> 16));
}

// IEEE binary16 -> f32, exact.
inline float f16_to_f32(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1Fu;
  const uint32_t mantissa = half & 0x3FFu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24 is exact in f32.
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return std::bit_cast<float>(std::bit_cast<uint32_t>(magnitude) | sign);
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

// f32 -> bfloat16, round-to-nearest-even; NaN stays a quiet NaN.
inline uint16_t f32_to_bf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  const uint32_t rounding_bias = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding_bias) >> 16);
}

// bfloat16 -> f32, exact.
inline float bf16_to_f32(uint16_t value) {
  return std::bit_cast<float>(static_cast<uint32_t>(value) << 16);
}

}  // namespace sy_reference
