#include "support/dtype_codec.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace switchyard::conformance {

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
      const uint16_t h = sy_support::f32_to_f16_bits(static_cast<float>(value));
      std::memcpy(bytes, &h, 2);
      return;
    }
    case SY_DTYPE_BF16: {
      const uint16_t h = sy_support::f32_to_bf16_bits(static_cast<float>(value));
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
      return static_cast<double>(sy_support::f16_bits_to_f32(h));
    }
    case SY_DTYPE_BF16: {
      uint16_t h = 0;
      std::memcpy(&h, bytes, 2);
      return static_cast<double>(sy_support::bf16_bits_to_f32(h));
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
