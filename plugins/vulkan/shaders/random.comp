// RANDOM_UNIFORM / RANDOM_NORMAL with Philox4x32-10 (docs/ops.md section 14). Element i (row-major
// logical index) uses counter offset + i. t[0] out. u[0..1] seed (lo, hi), u[2..3] offset (lo, hi);
// f[0] = a, f[1] = b; mode = sy_op. Binding 1: out.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "switchyard/plugin_support/philox.h"  // the plugins' one Philox (issue 28)

layout(local_size_x = WORKGROUP_SIZE) in;
layout(std430, set = 0, binding = 1) writeonly buffer O { STORAGE_T o[]; };

// log(x) for x in (0, 1] to about one ulp, whatever the driver's log precision (Vulkan allows
// 2^-21 absolute near 1, too coarse for sqrt(-2 log u1) when u1 is close to 1).
float log_accurate(float x) {
  int e;
  float m = frexp(x, e);  // x = m * 2^e, m in [0.5, 1)
  if (m < 0.70710678) {
    m *= 2.0;
    e -= 1;
  }
  const float s = (m - 1.0) / (m + 1.0);  // |s| <= 0.1716
  const float s2 = s * s;
  const float tail =
      s2 * (0.33333333 + s2 * (0.2 + s2 * (0.14285714 + s2 * (0.11111111 + s2 * 0.09090909))));
  return float(e) * 0.693145752 + (float(e) * 1.42860677e-06 + (2.0 * s + 2.0 * s * tail));
}

float cos_poly(float x) {  // |x| <= pi/4
  const float x2 = x * x;
  return 1.0 + x2 * (-0.5 + x2 * (4.16666667e-02 + x2 * (-1.38888889e-03 +
                                                    x2 * (2.48015873e-05 + x2 * -2.75573192e-07))));
}

float sin_poly(float x) {  // |x| <= pi/4
  const float x2 = x * x;
  return x * (1.0 + x2 * (-0.166666667 + x2 * (8.33333333e-03 +
                                               x2 * (-1.98412698e-04 + x2 * 2.75573192e-06))));
}

// cos(2 pi u) by exact reduction to an octant.
float cos_2pi(float u) {
  const float a = abs(u - round(u));  // in [0, 0.5], exact
  const float two_pi = 6.28318530717958648;
  if (a <= 0.125) return cos_poly(a * two_pi);
  if (a <= 0.375) return sin_poly((0.25 - a) * two_pi);
  return -cos_poly((0.5 - a) * two_pi);
}

void main() {
  const uvec2 key = uvec2(P.u[0], P.u[1]);
  const float a = P.f[0], b = P.f[1];
  const uint offset_lo = P.u[2], offset_hi = P.u[3];
  const Cursor co = cursor(0u);
  FOR_EACH_ITEM(i) {
    uint carry;
    const uint lo = uaddCarry(offset_lo, i, carry);
    SyPhiloxWords counter;  // offset + i as 64 bits, the high half of the counter zero
    counter.w[0] = lo;
    counter.w[1] = offset_hi + carry;
    counter.w[2] = 0u;
    counter.w[3] = 0u;
    const SyPhiloxWords result = sy_philox4x32_10(counter, key.x, key.y);
    const uvec4 words = uvec4(result.w[0], result.w[1], result.w[2], result.w[3]);
    float value;
    if (OP == 47u) {
      const float u = float(words.x >> 8) * 5.9604644775390625e-08;  // 2^-24
      // Two separate roundings, no fused multiply-add: bit-identical on every backend.
      precise float t = b - a;
      precise float scaled = t * u;
      precise float sum = a + scaled;
      value = sum;
    } else {
      const float u1 = float((words.x >> 8) + 1u) * 5.9604644775390625e-08;
      const float u2 = float(words.y >> 8) * 5.9604644775390625e-08;
      const float z = sqrt(-2.0 * log_accurate(u1)) * cos_2pi(u2);
      value = a + b * z;
    }
    o[at(co, i)] = FROM_F(value);
  }
}
