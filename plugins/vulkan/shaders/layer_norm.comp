// LAYER_NORM: one workgroup per row of D normalised elements (one invocation per row for short
// rows, ONE_INVOCATION_PER_ROW). Full views t[0] x and t[3] y are
// indexed by row * D + i; t[1] gamma and t[2] beta by i; t[4] mean and t[5] rstd by row.
// u[0] = D, f[0] = epsilon. Bindings: 1 x, 2 gamma, 3 beta, 4 y, 5 mean, 6 rstd.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "math.glsl"
#include "workgroup_reduce.glsl"
#include "layer_norm_common.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
layout(std430, set = 0, binding = 1) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 2) readonly buffer Gamma { STORAGE_T gamma[]; };
layout(std430, set = 0, binding = 3) readonly buffer Beta { STORAGE_T beta[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Y { STORAGE_T y[]; };
layout(std430, set = 0, binding = 5) writeonly buffer Mean { STATS_T mean_out[]; };
layout(std430, set = 0, binding = 6) writeonly buffer Rstd { STATS_T rstd_out[]; };

void main() {
  const uint D = P.u[0];
  const float epsilon = P.f[0];
  const Cursor cx = cursor(0u), cg = cursor(1u), cb = cursor(2u), cy = cursor(3u);
  const Cursor cm = cursor(4u), cr = cursor(5u);
  FOR_EACH_ROW_ANY(row, P.count) {
    const uint first = row * D;
    float sum = 0.0;
    for (uint i = ROW_LANE; i < D; i += ROW_STEP) sum += TO_F(x[at(cx, first + i)]);
    const float mean = row_sum(sum) / float(D);
    float squares = 0.0;
    for (uint i = ROW_LANE; i < D; i += ROW_STEP) {
      const float d = TO_F(x[at(cx, first + i)]) - mean;
      squares += d * d;
    }
    const float variance = row_sum(squares) / float(D);
    const float rstd = 1.0 / sqrt(variance + epsilon);
    for (uint i = ROW_LANE; i < D; i += ROW_STEP) {
      const float xhat = (TO_F(x[at(cx, first + i)]) - mean) * rstd;
      y[at(cy, first + i)] = FROM_F(xhat * TO_F(gamma[at(cg, i)]) + TO_F(beta[at(cb, i)]));
    }
    if (row_leader()) {
      mean_out[at(cm, row)] = STATS_FROM_F(mean);
      rstd_out[at(cr, row)] = STATS_FROM_F(rstd);
    }
  }
}
