// Vectorisable exp, sigmoid and tanh for the LSTM's pointwise parts (LSTM_CELL, and the
// small-batch LSTM_SEQUENCE recurrence): no library call and no branch, so that GCC vectorises the
// loops that call them. A file that includes this needs -fno-trapping-math (CMakeLists.txt) for
// the clamps to become vector min/max.
#pragma once

#include <cstdint>
#include <cstring>

namespace sy_onednn {

// exp(x) in a form GCC vectorises (no library call, no branch): x = n ln2 + r with |r| <= ln2 / 2,
// exp(r) by its degree-6 Taylor polynomial (relative error below 2e-7), 2^n from the exponent
// bits. x is clamped to [-87, 88], where the result is a normal float. libm's scalar expf and
// tanhf made LSTM_CELL 50% slower than the composed oneDNN eltwise ops it replaces on a 2-core
// AVX-512 machine (the LSTM step of `bench sequence`: 147 ms composed, 220 ms with scalar calls).
inline float exp_approx(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;  // ln 2 = kLn2Hi + kLn2Lo, kLn2Hi exact in 16 bits
  constexpr float kLn2Lo = 1.42860682030941723212e-6f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding and subtracting rounds to an integer
  x = x < -87.0f ? -87.0f : x;           // vectorised min/max (CMakeLists: -fno-trapping-math)
  x = x > 88.0f ? 88.0f : x;
  const float n = (x * kLog2e + kRound) - kRound;
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;
  const float p =
      1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 +
                                          r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720))))));
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale = 0.0f;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}

inline float sigmoid_approx(float v) {
  return 1.0f / (1.0f + exp_approx(-v));
}

// tanh(v) = 1 - 2 / (exp(2v) + 1): absolute error about 1e-7 (the f32 tolerance is relative to
// the whole tensor, docs/ops.md).
inline float tanh_approx(float v) {
  return 1.0f - 2.0f / (exp_approx(2.0f * v) + 1.0f);
}

}  // namespace sy_onednn
