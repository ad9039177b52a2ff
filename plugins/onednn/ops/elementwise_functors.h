// The scalar definitions of the elementwise ops (docs/ops.md sections 3-5), in f32.
#pragma once

#include <cmath>

namespace sy_onednn::fn {

constexpr float kSqrtHalf = 0.70710678118654752440f;
constexpr float kInvSqrt2Pi = 0.39894228040143267794f;

struct Relu {
  float operator()(float x) const { return (x > 0.0f || x != x) ? x : 0.0f; }
};
// CONV2D_FUSED's CLIP: min(max(x, low), high), NaN kept (docs/ops.md section 9b).
struct Clip {
  float low, high;
  float operator()(float x) const {
    if (x != x) return x;
    const float clipped = x < low ? low : x;
    return clipped > high ? high : clipped;
  }
};
// Phi(x) as erfc(-x / sqrt 2) / 2, not (1 + erf(x / sqrt 2)) / 2: below x = -3 the sum cancels to
// 1e-3 of its terms, and GELU came out 1.3e-4 off (relative) there (found by the drawn
// conformance cases on single values).
struct Gelu {
  float operator()(float x) const { return 0.5f * x * std::erfc(-x * kSqrtHalf); }
};
struct Sigmoid {
  float operator()(float x) const { return 1.0f / (1.0f + std::exp(-x)); }
};
struct Silu {  // CONV2D_FUSED's activation where no kernel of ours or oneDNN's takes it
  float operator()(float x) const { return x / (1.0f + std::exp(-x)); }
};
struct Tanh {
  float operator()(float x) const { return std::tanh(x); }
};
struct Exp {
  float operator()(float x) const { return std::exp(x); }
};
struct Log {
  float operator()(float x) const { return std::log(x); }
};
struct Sqrt {
  float operator()(float x) const { return std::sqrt(x); }
};
struct Neg {
  float operator()(float x) const { return -x; }
};
struct Abs {
  float operator()(float x) const { return std::fabs(x); }
};
struct Sign {
  // Both zeros and NaN give +0 (docs/ops.md, as PyTorch).
  float operator()(float x) const { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f); }
};

// Backward: (grad_out, saved) -> grad_in.
struct ReluBackward {
  float operator()(float g, float x) const { return x > 0.0f ? g : 0.0f; }
};
struct GeluBackward {
  float operator()(float g, float x) const {
    float cdf = 0.5f * std::erfc(-x * kSqrtHalf);
    float pdf = std::exp(-0.5f * x * x) * kInvSqrt2Pi;
    return g * (cdf + x * pdf);
  }
};
struct SigmoidBackward {
  float operator()(float g, float y) const { return g * y * (1.0f - y); }
};
struct TanhBackward {
  float operator()(float g, float y) const { return g * (1.0f - y * y); }
};

// Binary.
struct Add {
  float operator()(float a, float b) const { return a + b; }
};
struct Sub {
  float operator()(float a, float b) const { return a - b; }
};
struct Mul {
  float operator()(float a, float b) const { return a * b; }
};
struct Div {
  float operator()(float a, float b) const { return a / b; }
};
struct Max {
  float operator()(float a, float b) const { return a != a ? a : (b != b ? b : (a > b ? a : b)); }
};
struct Min {
  float operator()(float a, float b) const { return a != a ? a : (b != b ? b : (a < b ? a : b)); }
};
struct Pow {
  float operator()(float a, float b) const { return std::pow(a, b); }
};
struct CmpGt {
  float operator()(float a, float b) const { return a > b ? 1.0f : 0.0f; }
};
struct CmpEq {
  float operator()(float a, float b) const { return a == b ? 1.0f : 0.0f; }
};

}  // namespace sy_onednn::fn
