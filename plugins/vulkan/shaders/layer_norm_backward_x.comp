// LAYER_NORM_BACKWARD, grad_x: one workgroup per row (one invocation per row for short rows).
// grad_x = rstd * (g - sum(g) / D - xhat * sum(g * xhat) / D), g = grad_y * gamma.
// t[0] grad_y, t[1] x, t[5] grad_x (full views, index row * D + i); t[2] mean, t[3] rstd (by row);
// t[4] gamma (by i). u[0] = D. Bindings: 1 grad_y, 2 x, 3 mean, 4 rstd, 5 gamma, 6 grad_x.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "math.glsl"
#include "workgroup_reduce.glsl"
#include "layer_norm_common.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
layout(std430, set = 0, binding = 1) readonly buffer GradY { STORAGE_T grad_y[]; };
layout(std430, set = 0, binding = 2) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 3) readonly buffer Mean { STATS_T mean_in[]; };
layout(std430, set = 0, binding = 4) readonly buffer Rstd { STATS_T rstd_in[]; };
layout(std430, set = 0, binding = 5) readonly buffer Gamma { STORAGE_T gamma[]; };
layout(std430, set = 0, binding = 6) writeonly buffer GradX { STORAGE_T grad_x[]; };

void main() {
  const uint D = P.u[0];
  const Cursor cgy = cursor(0u), cx = cursor(1u), cm = cursor(2u), cr = cursor(3u);
  const Cursor cg = cursor(4u), cgx = cursor(5u);
  FOR_EACH_ROW_ANY(row, P.count) {
    const uint first = row * D;
    const float mean = STATS_TO_F(mean_in[at(cm, row)]);
    const float rstd = STATS_TO_F(rstd_in[at(cr, row)]);
    float sum_g = 0.0, sum_gx = 0.0;
    for (uint i = ROW_LANE; i < D; i += ROW_STEP) {
      const float g = TO_F(grad_y[at(cgy, first + i)]) * TO_F(gamma[at(cg, i)]);
      const float xhat = (TO_F(x[at(cx, first + i)]) - mean) * rstd;
      sum_g += g;
      sum_gx += g * xhat;
    }
    sum_g = row_sum(sum_g) / float(D);
    sum_gx = row_sum(sum_gx) / float(D);
    for (uint i = ROW_LANE; i < D; i += ROW_STEP) {
      const float g = TO_F(grad_y[at(cgy, first + i)]) * TO_F(gamma[at(cg, i)]);
      const float xhat = (TO_F(x[at(cx, first + i)]) - mean) * rstd;
      grad_x[at(cgx, first + i)] = FROM_F(rstd * (g - sum_g - xhat * sum_gx));
    }
  }
}
