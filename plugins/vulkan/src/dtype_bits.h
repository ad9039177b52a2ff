// Host-side conversions to the bit patterns of the storage types (round-to-nearest-even), used
// where the host computes a value for the shaders (FILL).
#pragma once

#include <cstdint>
#include <cstring>

namespace sy_vk {

inline uint32_t f32_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

inline uint16_t f32_to_bf16_bits(float value) {
  const uint32_t x = f32_bits(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

inline uint16_t f32_to_f16_bits(float value) {
  const uint32_t x = f32_bits(value);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (magnitude < 0x38800000u) {
    // Subnormal half: round(|value| * 2^24) to nearest even, done in integers.
    const uint32_t exponent = magnitude >> 23;
    if (exponent < 102) return static_cast<uint16_t>(sign);  // below half of the smallest step
    const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exponent;  // value * 2^24 = mantissa >> shift
    const uint32_t kept = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1);
    const uint32_t rounded = kept + ((rest > half || (rest == half && (kept & 1u))) ? 1u : 0u);
    return static_cast<uint16_t>(sign | rounded);
  }
  return static_cast<uint16_t>(
      sign | ((magnitude - 0x38000000u + 0xfffu + ((magnitude >> 13) & 1u)) >> 13));
}

}  // namespace sy_vk
