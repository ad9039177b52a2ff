#include "support/dtype_codec.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace switchyard::conformance {

float f16_bits_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  uint32_t out = 0;
  if (exponent == 0x1f) {
    out = sign | 0x7f800000u | (mantissa << 13);
  } else {
    out = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(out);
}

uint16_t float_to_f16_bits(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude_bits = bits & 0x7fffffffu;
  if (magnitude_bits >= 0x7f800000u) {  // inf or NaN
    const uint16_t nan_payload = magnitude_bits > 0x7f800000u ? 0x200u : 0u;
    return static_cast<uint16_t>(sign | 0x7c00u | nan_payload);
  }
  if (magnitude_bits >= 0x477ff000u) {  // rounds to above 65504: overflow to infinity
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  const int32_t exponent = static_cast<int32_t>(magnitude_bits >> 23) - 127;
  if (exponent < -14) {
    // Subnormal half: value / 2^-24 rounded to nearest even, done exactly in double.
    const double scaled = std::ldexp(static_cast<double>(std::fabs(value)), 24);
    const double rounded = std::nearbyint(scaled);  // default mode: ties to even
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(rounded));
  }
  // Normal: drop 13 mantissa bits with round-to-nearest-even; a carry moves into the exponent.
  uint32_t half =
      ((static_cast<uint32_t>(exponent + 15)) << 10) | ((magnitude_bits >> 13) & 0x3ffu);
  const uint32_t remainder = magnitude_bits & 0x1fffu;
  if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

float bf16_bits_to_float(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

uint16_t float_to_bf16_bits(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {  // NaN stays a quiet NaN
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  }
  const uint32_t rounding_bias = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding_bias) >> 16);
}

size_t dtype_size_bytes(sy_dtype dtype) {
  return sy_dtype_size(dtype);
}

std::string dtype_label(sy_dtype dtype) {
  return sy_dtype_name(dtype);
}

bool is_floating(sy_dtype dtype) {
  return dtype == SY_DTYPE_F32 || dtype == SY_DTYPE_F16 || dtype == SY_DTYPE_BF16;
}

double round_to_dtype(double value, sy_dtype dtype) {
  unsigned char bytes[8] = {};
  encode_element(value, dtype, bytes);
  return decode_element(dtype, bytes);
}

void encode_element(double value, sy_dtype dtype, unsigned char* bytes) {
  switch (dtype) {
    case SY_DTYPE_F32: {
      const float f = static_cast<float>(value);
      std::memcpy(bytes, &f, 4);
      return;
    }
    case SY_DTYPE_F16: {
      const uint16_t h = float_to_f16_bits(static_cast<float>(value));
      std::memcpy(bytes, &h, 2);
      return;
    }
    case SY_DTYPE_BF16: {
      const uint16_t h = float_to_bf16_bits(static_cast<float>(value));
      std::memcpy(bytes, &h, 2);
      return;
    }
    case SY_DTYPE_I32: {
      const int32_t i = static_cast<int32_t>(value);
      std::memcpy(bytes, &i, 4);
      return;
    }
    default: {
      const int64_t i = static_cast<int64_t>(value);
      std::memcpy(bytes, &i, 8);
      return;
    }
  }
}

double decode_element(sy_dtype dtype, const unsigned char* bytes) {
  switch (dtype) {
    case SY_DTYPE_F32: {
      float f = 0.0f;
      std::memcpy(&f, bytes, 4);
      return static_cast<double>(f);
    }
    case SY_DTYPE_F16: {
      uint16_t h = 0;
      std::memcpy(&h, bytes, 2);
      return static_cast<double>(f16_bits_to_float(h));
    }
    case SY_DTYPE_BF16: {
      uint16_t h = 0;
      std::memcpy(&h, bytes, 2);
      return static_cast<double>(bf16_bits_to_float(h));
    }
    case SY_DTYPE_I32: {
      int32_t i = 0;
      std::memcpy(&i, bytes, 4);
      return static_cast<double>(i);
    }
    default: {
      int64_t i = 0;
      std::memcpy(&i, bytes, 8);
      return static_cast<double>(i);
    }
  }
}

}  // namespace switchyard::conformance
