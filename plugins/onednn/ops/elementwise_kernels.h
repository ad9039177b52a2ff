// Typed span kernels for the elementwise ops, run over a StridedLoop.
//
// Each kernel loads storage values as f32, applies the functor and rounds once into the storage
// type. The dense case (every inner stride equal to the element size) is a plain indexed loop that
// the compiler vectorises; broadcast operands (inner stride 0) are hoisted out of the loop.
#pragma once

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "dtype.h"
#include "ops/f16_convert.h"
#include "ops/strided_loop.h"
#include "ops/vector_clones.h"

namespace sy_onednn {

template <typename T>
inline float load_at(const char* p, int64_t i, int64_t stride) {
  return load_f32(*reinterpret_cast<const T*>(p + i * stride));
}
template <typename T>
inline void store_at(char* p, int64_t i, int64_t stride, float value) {
  *reinterpret_cast<T*>(p + i * stride) = store_f32<T>(value);
}

// Dense f16 spans go through f32 blocks converted with the F16C loops of f16_convert.h: the
// per-element _Float16 conversion is a libgcc call on the baseline ISA.
constexpr int64_t kF16Block = 256;

template <typename F>
void unary_f16_dense(const f16_t* x, f16_t* out, int64_t count, const F& f) {
  float in_block[kF16Block], out_block[kF16Block];
  for (int64_t start = 0; start < count; start += kF16Block) {
    const int64_t n = std::min(kF16Block, count - start);
    convert_f16_to_f32(x + start, in_block, n);
    for (int64_t i = 0; i < n; ++i) out_block[i] = f(in_block[i]);
    convert_f32_to_f16(out_block, out + start, n);
  }
}

// a_step / b_step: 1 for a dense operand, 0 for a broadcast one.
template <typename F>
void binary_f16_dense(const f16_t* a, int64_t a_step, const f16_t* b, int64_t b_step, f16_t* out,
                      int64_t count, const F& f) {
  float a_block[kF16Block], b_block[kF16Block], out_block[kF16Block];
  for (int64_t start = 0; start < count; start += kF16Block) {
    const int64_t n = std::min(kF16Block, count - start);
    if (a_step) convert_f16_to_f32(a + start, a_block, n);
    if (b_step) convert_f16_to_f32(b + start, b_block, n);
    if (!a_step) std::fill(a_block, a_block + n, static_cast<float>(*a));
    if (!b_step) std::fill(b_block, b_block + n, static_cast<float>(*b));
    for (int64_t i = 0; i < n; ++i) out_block[i] = f(a_block[i], b_block[i]);
    convert_f32_to_f16(out_block, out + start, n);
  }
}

// f is copied into a local: read through the reference, a functor's members (CLIP's bounds) may
// alias the stores for the compiler, which then reloads them every element and does not vectorise
// the loop (CONV2D_FUSED's Clip pass ran scalar: MobileNetV2 6.1 ms a pass against 4.5).
template <typename T, typename F>
SY_VECTOR_CLONES void unary_span(char* const* p, const int64_t* s, int64_t count,
                                 const F& functor) {
  const F f = functor;
  constexpr int64_t kSize = sizeof(T);
  if constexpr (std::is_same_v<T, f16_t>) {
    if (s[0] == kSize && s[1] == kSize) {
      return unary_f16_dense(reinterpret_cast<const T*>(p[1]), reinterpret_cast<T*>(p[0]), count,
                             f);
    }
  }
  if (s[0] == kSize && s[1] == kSize) {
    T* out = reinterpret_cast<T*>(p[0]);
    const T* x = reinterpret_cast<const T*>(p[1]);
    for (int64_t i = 0; i < count; ++i) out[i] = store_f32<T>(f(load_f32(x[i])));
    return;
  }
  char* const out = p[0];
  const char* const x = p[1];
  const int64_t s0 = s[0], s1 = s[1];  // locals: the stores may alias s and p for the compiler
  for (int64_t i = 0; i < count; ++i) store_at<T>(out, i, s0, f(load_at<T>(x, i, s1)));
}

template <typename T, typename F>
SY_VECTOR_CLONES void binary_span(char* const* p, const int64_t* s, int64_t count, const F& f) {
  constexpr int64_t kSize = sizeof(T);
  T* out = reinterpret_cast<T*>(p[0]);
  const T* a = reinterpret_cast<const T*>(p[1]);
  const T* b = reinterpret_cast<const T*>(p[2]);
  if constexpr (std::is_same_v<T, f16_t>) {
    if (s[0] == kSize && (s[1] == kSize || s[1] == 0) && (s[2] == kSize || s[2] == 0)) {
      return binary_f16_dense(a, s[1] ? 1 : 0, b, s[2] ? 1 : 0, out, count, f);
    }
  }
  if (s[0] == kSize && s[1] == kSize && s[2] == kSize) {
    for (int64_t i = 0; i < count; ++i) out[i] = store_f32<T>(f(load_f32(a[i]), load_f32(b[i])));
  } else if (s[0] == kSize && s[1] == kSize && s[2] == 0) {
    const float scalar = load_f32(*b);
    for (int64_t i = 0; i < count; ++i) out[i] = store_f32<T>(f(load_f32(a[i]), scalar));
  } else if (s[0] == kSize && s[1] == 0 && s[2] == kSize) {
    const float scalar = load_f32(*a);
    for (int64_t i = 0; i < count; ++i) out[i] = store_f32<T>(f(scalar, load_f32(b[i])));
  } else {
    char* const o = p[0];
    const char* const x = p[1];
    const char* const y = p[2];
    const int64_t s0 = s[0], s1 = s[1], s2 = s[2];  // locals: the stores may alias s and p
    for (int64_t i = 0; i < count; ++i) {
      store_at<T>(o, i, s0, f(load_at<T>(x, i, s1), load_at<T>(y, i, s2)));
    }
  }
}

// out = f(x, scalar) with the scalar already in f32 (binary ops with use_scalar).
template <typename T, typename F>
SY_VECTOR_CLONES void scalar_span(char* const* p, const int64_t* s, int64_t count, float scalar,
                                  const F& f) {
  constexpr int64_t kSize = sizeof(T);
  if constexpr (std::is_same_v<T, f16_t>) {
    if (s[0] == kSize && s[1] == kSize) {
      return unary_f16_dense(reinterpret_cast<const T*>(p[1]), reinterpret_cast<T*>(p[0]), count,
                             [&f, scalar](float v) { return f(v, scalar); });
    }
  }
  if (s[0] == kSize && s[1] == kSize) {
    T* out = reinterpret_cast<T*>(p[0]);
    const T* a = reinterpret_cast<const T*>(p[1]);
    for (int64_t i = 0; i < count; ++i) out[i] = store_f32<T>(f(load_f32(a[i]), scalar));
    return;
  }
  char* const out = p[0];
  const char* const a = p[1];
  const int64_t s0 = s[0], s1 = s[1];  // locals: the stores may alias s and p for the compiler
  for (int64_t i = 0; i < count; ++i) store_at<T>(out, i, s0, f(load_at<T>(a, i, s1), scalar));
}

template <typename T, typename F>
void run_unary_kernel(const TensorView& out, const TensorView& x, int threads, const F& f) {
  StridedLoop<2> loop = plan_loop_in_memory_order<2>({&out, &x});
  run_loop(loop, threads, [&f](char* const* p, const int64_t* s, int64_t count) {
    unary_span<T>(p, s, count, f);
  });
}

template <typename T, typename F>
void run_binary_kernel(const TensorView& out, const TensorView& a, const TensorView& b, int threads,
                       const F& f) {
  StridedLoop<3> loop = plan_loop_in_memory_order<3>({&out, &a, &b});
  run_loop(loop, threads, [&f](char* const* p, const int64_t* s, int64_t count) {
    binary_span<T>(p, s, count, f);
  });
}

template <typename T, typename F>
void run_scalar_kernel(const TensorView& out, const TensorView& a, float scalar, int threads,
                       const F& f) {
  StridedLoop<2> loop = plan_loop_in_memory_order<2>({&out, &a});
  run_loop(loop, threads, [&f, scalar](char* const* p, const int64_t* s, int64_t count) {
    scalar_span<T>(p, s, count, scalar, f);
  });
}

}  // namespace sy_onednn
