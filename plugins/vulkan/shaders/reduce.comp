// REDUCE_SUM / REDUCE_MEAN / REDUCE_MAX. One workgroup per output element, or one invocation per
// output for short rows (ONE_INVOCATION_PER_ROW, R <= 256).
// t[0]: x seen over the kept axes (its offset is x's), t[1]: x over the reduced axes (offset 0),
// t[2]: out over the kept axes. u[0] = number of reduced elements R. OP = sy_op.
// Bindings: 1 x, 2 out.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "math.glsl"
#include "workgroup_reduce.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
layout(std430, set = 0, binding = 1) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer O { STORAGE_T o[]; };

const bool IS_MAX = OP == 26u;

float finish(float total, uint R) {
  if (OP == 25u) return R == 0u ? kNaN : total / float(R);
  return total;
}

// One row by one invocation; sums are compensated (Kahan), as they run sequentially.
float reduce_row_serially(uint base, uint R) {
  precise float acc = IS_MAX ? -kInf : 0.0;
  precise float compensation = 0.0;
  for (uint r = 0u; r < R; ++r) {
    const float v = TO_F(x[base + strided_index(1u, r)]);
    if (IS_MAX) {
      acc = max_nan(acc, v);
    } else {
      precise float y = v - compensation;
      precise float t = acc + y;
      // Once the sum is infinite, (t - acc) is inf - inf: no compensation, or an infinite sum
      // would turn NaN at the next element.
      compensation = isinf(t) ? 0.0 : (t - acc) - y;
      acc = t;
    }
  }
  return acc;
}

void main() {
  const uint R = P.u[0];
  const Cursor cx = cursor(0u), co = cursor(2u);
  if (ONE_INVOCATION_PER_ROW) {
    FOR_EACH_ITEM(row) { o[at(co, row)] = FROM_F(finish(reduce_row_serially(at(cx, row), R), R)); }
    return;
  }
  FOR_EACH_ROW(row, P.count) {
    const uint base = at(cx, row);
    float acc = IS_MAX ? -kInf : 0.0;
    for (uint r = gl_LocalInvocationID.x; r < R; r += WORKGROUP_SIZE) {
      const float v = TO_F(x[base + strided_index(1u, r)]);
      acc = IS_MAX ? max_nan(acc, v) : acc + v;
    }
    const float total = IS_MAX ? workgroup_max(acc) : workgroup_sum(acc);
    if (gl_LocalInvocationID.x == 0u) o[at(co, row)] = FROM_F(finish(total, R));
  }
}
