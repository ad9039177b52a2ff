// RELU_BACKWARD .. TANH_BACKWARD: grad_in = f(grad_out, saved), elementwise.
// Bindings: 1 grad_out (t[0]), 2 saved (t[1]), 3 grad_in (t[2]); mode = sy_op.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "math.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
layout(std430, set = 0, binding = 1) readonly buffer G { STORAGE_T grad_out[]; };
layout(std430, set = 0, binding = 2) readonly buffer S { STORAGE_T saved[]; };
layout(std430, set = 0, binding = 3) writeonly buffer D { STORAGE_T grad_in[]; };

float apply(uint op, float g, float s) {
  switch (op) {
    case 11u: return s > 0.0 ? g : 0.0;  // RELU_BACKWARD, saved = x
    case 12u: {                          // GELU_BACKWARD, saved = x
      const float pdf = exp(-0.5 * s * s) * 0.39894228040143268;
      return g * (normal_cdf(s) + s * pdf);
    }
    case 13u: return g * s * (1.0 - s);  // SIGMOID_BACKWARD, saved = y
    case 14u: return g * (1.0 - s * s);  // TANH_BACKWARD, saved = y
  }
  return kNaN;
}

void main() {
  const Cursor c0 = cursor(0u), c1 = cursor(1u), c2 = cursor(2u);
  FOR_EACH_ITEM(i) {
    const float g = TO_F(grad_out[at(c0, i)]);
    const float s = TO_F(saved[at(c1, i)]);
    grad_in[at(c2, i)] = FROM_F(apply(OP, g, s));
  }
}
