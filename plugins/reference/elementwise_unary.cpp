// Unary elementwise ops (RELU ... SIGN) and their backward ops (grad_out, saved) -> grad_in.
//
// Transcendental functions are evaluated in double and rounded to f32 once, so the oracle is as
// close to the true value as an f32 result can be; the exact ops (RELU, NEG, ABS, SIGN) are exact.
#include <cmath>
#include <numbers>
#include <vector>

#include "ops.h"

namespace sy_reference {
namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

float relu(float x) {
  return std::isnan(x) ? x : (x > 0.0f ? x : 0.0f);
}

float gelu(float x) {
  const double v = static_cast<double>(x);
  return static_cast<float>(0.5 * v * (1.0 + std::erf(v * kInvSqrt2)));
}

float sigmoid(float x) {
  return static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(x))));
}

// NaN compares false both ways and gives 0, as in PyTorch.
float sign(float x) {
  return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
}

float apply_unary(sy_op op, float x) {
  switch (op) {
    case SY_OP_RELU:
      return relu(x);
    case SY_OP_GELU:
      return gelu(x);
    case SY_OP_SIGMOID:
      return sigmoid(x);
    case SY_OP_TANH:
      return static_cast<float>(std::tanh(static_cast<double>(x)));
    case SY_OP_EXP:
      return static_cast<float>(std::exp(static_cast<double>(x)));
    case SY_OP_LOG:
      return static_cast<float>(std::log(static_cast<double>(x)));
    case SY_OP_SQRT:
      return std::sqrt(x);  // correctly rounded in f32 already
    case SY_OP_NEG:
      return -x;
    case SY_OP_ABS:
      return std::fabs(x);
    default:
      return sign(x);
  }
}

float gelu_derivative(float x) {
  const double v = static_cast<double>(x);
  const double cdf = 0.5 * (1.0 + std::erf(v * kInvSqrt2));
  const double pdf = std::exp(-0.5 * v * v) * kInvSqrt2Pi;
  return static_cast<float>(cdf + v * pdf);
}

float apply_backward(sy_op op, float grad, float saved) {
  const double g = static_cast<double>(grad);
  const double s = static_cast<double>(saved);
  switch (op) {
    case SY_OP_RELU_BACKWARD:
      return saved > 0.0f ? grad : 0.0f;
    case SY_OP_GELU_BACKWARD:
      return static_cast<float>(g * static_cast<double>(gelu_derivative(saved)));
    case SY_OP_SIGMOID_BACKWARD:
      return static_cast<float>(g * s * (1.0 - s));
    default:  // SY_OP_TANH_BACKWARD
      return static_cast<float>(g * (1.0 - s * s));
  }
}

}  // namespace

void run_unary(const OpContext& ctx) {
  require_io_counts(ctx, 1, 1);
  const TensorRef x = ctx.input(0);
  const TensorRef out = ctx.output(0);
  require_float(ctx, "x", x);
  require_same_dtype(ctx, "out", out, "x", x);
  require_shape(ctx, "out", out, x.shape);
  std::vector<float> values = read_f32(x);
  for (float& value : values) value = apply_unary(ctx.op, value);
  write_f32(out, values);
}

void run_unary_backward(const OpContext& ctx) {
  require_io_counts(ctx, 2, 1);
  const TensorRef grad_out = ctx.input(0);
  const TensorRef saved = ctx.input(1);
  const TensorRef grad_in = ctx.output(0);
  require_float(ctx, "grad_out", grad_out);
  require_same_dtype(ctx, "saved", saved, "grad_out", grad_out);
  require_same_dtype(ctx, "grad_in", grad_in, "grad_out", grad_out);
  require_shape(ctx, "saved", saved, grad_out.shape);
  require_shape(ctx, "grad_in", grad_in, grad_out.shape);
  std::vector<float> grads = read_f32(grad_out);
  const std::vector<float> saved_values = read_f32(saved);
  for (size_t i = 0; i < grads.size(); ++i) {
    grads[i] = apply_backward(ctx.op, grads[i], saved_values[i]);
  }
  write_f32(grad_in, grads);
}

}  // namespace sy_reference
