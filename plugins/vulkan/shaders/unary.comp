// RELU .. SIGN: out = f(x), elementwise. Bindings: 1 x (t[0]), 2 out (t[1]); mode = sy_op.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "math.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
layout(std430, set = 0, binding = 1) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { STORAGE_T y[]; };

float apply(uint op, float v) {
  switch (op) {
    case 1u: return (v > 0.0 || isnan(v)) ? v : 0.0;  // RELU
    case 2u: return 0.5 * v * erfc_approx(-v * 0.70710678118654752);  // GELU
    case 3u: return 1.0 / (1.0 + exp(-v));  // SIGMOID
    case 4u: return tanh_safe(v);  // TANH
    case 5u: return exp(v);  // EXP
    case 6u: return v < 0.0 ? kNaN : (v == 0.0 ? -kInf : log(v));  // LOG
    case 7u: return v < 0.0 ? kNaN : sqrt(v);  // SQRT
    case 8u: return -v;  // NEG
    case 9u: return abs(v);  // ABS
    case 10u: return v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : 0.0);  // SIGN: both zeros and NaN give +0
  }
  return kNaN;
}

void main() {
  const Cursor cx = cursor(0u), cy = cursor(1u);
  const uint op = OP;
  FOR_EACH_ITEM(i) { y[at(cy, i)] = FROM_F(apply(op, TO_F(x[at(cx, i)]))); }
}
