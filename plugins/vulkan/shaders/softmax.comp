// The softmax family along one axis; one workgroup per row (every position off the axis), or one
// invocation per row for short rows (ONE_INVOCATION_PER_ROW). t[k] are the row views of the
// tensors (the axis removed); u[0] = axis length L, u[1 + k] = axis stride of tensor k. OP = sy_op.
// Bindings: 1 in0 (x or grad_out, t[0]), 2 in1 (y for the backward ops, else in0 again, t[1]),
// 3 out (t[2]).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "math.glsl"
#include "workgroup_reduce.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
layout(std430, set = 0, binding = 1) readonly buffer In0 { STORAGE_T in0[]; };
layout(std430, set = 0, binding = 2) readonly buffer In1 { STORAGE_T in1[]; };
layout(std430, set = 0, binding = 3) writeonly buffer O { STORAGE_T o[]; };

void main() {
  const uint L = P.u[0];
  const uint s0 = P.u[1], s1 = P.u[2], s2 = P.u[3];
  const Cursor c0 = cursor(0u), c1 = cursor(1u), c2 = cursor(2u);
  FOR_EACH_ROW_ANY(row, P.count) {
    const uint b0 = at(c0, row), b1 = at(c1, row), b2 = at(c2, row);
    if (OP == 28u || OP == 29u) {  // SOFTMAX, LOG_SOFTMAX
      float m = -kInf;
      for (uint i = ROW_LANE; i < L; i += ROW_STEP) m = max_nan(m, TO_F(in0[b0 + i * s0]));
      m = row_max(m);
      float s = 0.0;
      for (uint i = ROW_LANE; i < L; i += ROW_STEP) s += exp(TO_F(in0[b0 + i * s0]) - m);
      s = row_sum(s);
      const float log_s = log(s);
      for (uint i = ROW_LANE; i < L; i += ROW_STEP) {
        const float shifted = TO_F(in0[b0 + i * s0]) - m;
        o[b2 + i * s2] = FROM_F(OP == 28u ? exp(shifted) / s : shifted - log_s);
      }
    } else if (OP == 30u) {  // SOFTMAX_BACKWARD: y * (g - sum(g * y))
      float dot = 0.0;
      for (uint i = ROW_LANE; i < L; i += ROW_STEP)
        dot += TO_F(in0[b0 + i * s0]) * TO_F(in1[b1 + i * s1]);
      dot = row_sum(dot);
      for (uint i = ROW_LANE; i < L; i += ROW_STEP) {
        const float y = TO_F(in1[b1 + i * s1]);
        o[b2 + i * s2] = FROM_F(y * (TO_F(in0[b0 + i * s0]) - dot));
      }
    } else {  // LOG_SOFTMAX_BACKWARD: g - exp(y) * sum(g)
      float total = 0.0;
      for (uint i = ROW_LANE; i < L; i += ROW_STEP) total += TO_F(in0[b0 + i * s0]);
      total = row_sum(total);
      for (uint i = ROW_LANE; i < L; i += ROW_STEP) {
        const float y = TO_F(in1[b1 + i * s1]);
        o[b2 + i * s2] = FROM_F(TO_F(in0[b0 + i * s0]) - exp(y) * total);
      }
    }
  }
}
