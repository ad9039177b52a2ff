// Storage types and their conversions to and from f32.
//
// f16 and bf16 are storage types (docs/ops.md section 1): every op loads them as f32, computes in
// f32 and rounds each result once with round-to-nearest-even. bf16 goes through the plugins' codec
// (switchyard/plugin_support/dtype_codec.h), whose bit arithmetic vectorises; f16 uses the
// compiler's _Float16 (the CPU's conversion instructions where it has them), which rounds the same
// way: tests/ops checks every backend's conversions against the codec, bit for bit.
#pragma once

#include <cstdint>

#include "switchyard/plugin_abi.h"
#include "switchyard/plugin_support/dtype_codec.h"

namespace sy_onednn {

__extension__ typedef _Float16 f16_t;

// bfloat16 as its 16 stored bits; a distinct type so that templates can tell it from uint16_t.
struct bf16_t {
  uint16_t bits;
};

inline size_t dtype_size(uint32_t dtype) {
  return sy_dtype_size(dtype);
}

inline const char* dtype_name(uint32_t dtype) {
  return sy_dtype_name(dtype);
}

using sy_support::is_float_dtype;
using sy_support::is_int_dtype;

inline float bf16_to_f32(bf16_t value) {
  return sy_support::bf16_bits_to_f32(value.bits);
}

inline bf16_t f32_to_bf16(float value) {
  return bf16_t{sy_support::f32_to_bf16_bits(value)};
}

// Loads any floating storage type as f32.
inline float load_f32(float value) {
  return value;
}
inline float load_f32(bf16_t value) {
  return bf16_to_f32(value);
}
inline float load_f32(f16_t value) {
  return static_cast<float>(value);
}

// Rounds an f32 result into storage type T.
template <typename T>
T store_f32(float value);
template <>
inline float store_f32<float>(float value) {
  return value;
}
template <>
inline bf16_t store_f32<bf16_t>(float value) {
  return f32_to_bf16(value);
}
template <>
inline f16_t store_f32<f16_t>(float value) {
  return static_cast<f16_t>(value);
}

// Calls fn(T{}) with T the C++ storage type of a floating dtype. Returns false for other dtypes.
template <typename Fn>
bool visit_float_dtype(uint32_t dtype, Fn&& fn) {
  switch (dtype) {
    case SY_DTYPE_F32:
      fn(float{});
      return true;
    case SY_DTYPE_BF16:
      fn(bf16_t{});
      return true;
    case SY_DTYPE_F16:
      fn(f16_t{});
      return true;
    default:
      return false;
  }
}

}  // namespace sy_onednn
