// LAYER_NORM_BACKWARD, grad_gamma and grad_beta: one workgroup per normalised position i (one
// invocation when there are few rows, ONE_INVOCATION_PER_ROW), summing over the rows in a fixed
// order. t[0] grad_y, t[1] x (full views, index row * D + i);
// t[2] mean, t[3] rstd (by row); t[4] grad_gamma, t[5] grad_beta (by i). u[0] = D, u[1] = rows.
// Bindings: 1 grad_y, 2 x, 3 mean, 4 rstd, 5 grad_gamma, 6 grad_beta.
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
layout(std430, set = 0, binding = 5) writeonly buffer GradGamma { STORAGE_T grad_gamma[]; };
layout(std430, set = 0, binding = 6) writeonly buffer GradBeta { STORAGE_T grad_beta[]; };

void main() {
  const uint D = P.u[0], rows = P.u[1];
  const Cursor cgy = cursor(0u), cx = cursor(1u), cm = cursor(2u), cr = cursor(3u);
  const Cursor cgg = cursor(4u), cgb = cursor(5u);
  FOR_EACH_ROW_ANY(i, P.count) {
    float sum_gamma = 0.0, sum_beta = 0.0;
    for (uint row = ROW_LANE; row < rows; row += ROW_STEP) {
      const float g = TO_F(grad_y[at(cgy, row * D + i)]);
      const float xhat = (TO_F(x[at(cx, row * D + i)]) - STATS_TO_F(mean_in[at(cm, row)])) *
                         STATS_TO_F(rstd_in[at(cr, row)]);
      sum_gamma += g * xhat;
      sum_beta += g;
    }
    sum_gamma = row_sum(sum_gamma);
    sum_beta = row_sum(sum_beta);
    if (row_leader()) {
      grad_gamma[at(cgg, i)] = FROM_F(sum_gamma);
      grad_beta[at(cgb, i)] = FROM_F(sum_beta);
    }
  }
}
