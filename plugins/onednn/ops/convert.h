// Value conversion between any two storage types, as COPY defines it (docs/ops.md section 13).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "dtype.h"

namespace sy_onednn {

template <typename T>
constexpr bool kIsFloatStorage =
    std::is_same_v<T, float> || std::is_same_v<T, bf16_t> || std::is_same_v<T, f16_t>;

// FILL's double to integer: truncation toward zero, saturating, NaN gives 0.
template <typename I>
I double_to_int(double value) {
  if (std::isnan(value)) return 0;
  constexpr double kLow = static_cast<double>(std::numeric_limits<I>::min());
  constexpr double kHigh = static_cast<double>(std::numeric_limits<I>::max());
  double truncated = std::trunc(value);
  if (truncated <= kLow) return std::numeric_limits<I>::min();
  if (truncated >= kHigh) return std::numeric_limits<I>::max();
  return static_cast<I>(truncated);
}

// Float to integer: truncation toward zero; NaN gives 0 and out-of-range values saturate (as the
// reference does; the op leaves them unspecified).
template <typename I>
I float_to_int(float value) {
  return double_to_int<I>(static_cast<double>(value));
}

template <typename To, typename From>
To convert_value(From value) {
  if constexpr (std::is_same_v<To, From>) {
    return value;
  } else if constexpr (kIsFloatStorage<From> && kIsFloatStorage<To>) {
    return store_f32<To>(load_f32(value));
  } else if constexpr (kIsFloatStorage<From>) {
    return float_to_int<To>(load_f32(value));
  } else if constexpr (kIsFloatStorage<To>) {
    return store_f32<To>(static_cast<float>(value));
  } else {
    return static_cast<To>(value);
  }
}

// Calls fn(T{}) with T the C++ storage type of any dtype. Returns false for an invalid dtype.
template <typename Fn>
bool visit_dtype(uint32_t dtype, Fn&& fn) {
  if (visit_float_dtype(dtype, fn)) return true;
  switch (dtype) {
    case SY_DTYPE_I32:
      fn(int32_t{});
      return true;
    case SY_DTYPE_I64:
      fn(int64_t{});
      return true;
    default:
      return false;
  }
}

}  // namespace sy_onednn
