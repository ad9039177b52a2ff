// One step of GRU_SEQUENCE_BACKWARD (docs/ops.md section 17), f32: one invocation per element
// (r, j) of the [B, H] state. The gradient reaching h is grad_y plus what reached it from the
// step processed after this one: through that step's product (mm = grad_gh W_hh, or grad_h_n or
// zero at the last step) and directly (carried = dh_total z, zero at the last step). Writes the
// gradients of the input and recurrent parts of the gate pre-activations, and replaces carried.
// t[0] ws[position] [B, 4H] (r, z, n, v_n), t[1] h_prev [B, H], t[2] grad_y[position] [B, H],
// t[3] mm [B, H], t[4] carried [B, H], t[5] grad_gx[position] [B, 3H], t[6] grad_gh[position]
// [B, 3H]. P.count = B * H, u[0] = H.
// Bindings: 1 ws, 2 h_prev, 3 grad_y, 4 mm, 5 carried, 6 grad_gx, 7 grad_gh.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "math.glsl"
#include "lstm_common.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
layout(std430, set = 0, binding = 1) readonly buffer Ws { STORAGE_T ws[]; };
layout(std430, set = 0, binding = 2) readonly buffer HPrev { STORAGE_T h_prev[]; };
layout(std430, set = 0, binding = 3) readonly buffer GradY { STORAGE_T grad_y[]; };
layout(std430, set = 0, binding = 4) readonly buffer Mm { STORAGE_T mm[]; };
layout(std430, set = 0, binding = 5) buffer Carried { STORAGE_T carried[]; };
layout(std430, set = 0, binding = 6) writeonly buffer GradGx { STORAGE_T grad_gx[]; };
layout(std430, set = 0, binding = 7) writeonly buffer GradGh { STORAGE_T grad_gh[]; };

void main() {
  const uint H = P.u[0];
  const Matrix mw = matrix(0u), mhp = matrix(1u), mgy = matrix(2u), mmm = matrix(3u);
  const Matrix mca = matrix(4u), mgx = matrix(5u), mgh = matrix(6u);
  FOR_EACH_ITEM(item) {
    const uint r = item / H;
    const uint j = item - r * H;
    const float reset = TO_F(ws[at2(mw, r, j)]);
    const float update = TO_F(ws[at2(mw, r, H + j)]);
    const float n = TO_F(ws[at2(mw, r, 2u * H + j)]);
    const float hn = TO_F(ws[at2(mw, r, 3u * H + j)]);
    const float dh_total = TO_F(grad_y[at2(mgy, r, j)]) + TO_F(mm[at2(mmm, r, j)]) +
                           TO_F(carried[at2(mca, r, j)]);
    const float d_n = dh_total * (1.0 - update) * (1.0 - n * n);
    const float d_r = d_n * hn * reset * (1.0 - reset);
    const float d_z = dh_total * (TO_F(h_prev[at2(mhp, r, j)]) - n) * update * (1.0 - update);
    grad_gx[at2(mgx, r, j)] = FROM_F(d_r);
    grad_gh[at2(mgh, r, j)] = FROM_F(d_r);
    grad_gx[at2(mgx, r, H + j)] = FROM_F(d_z);
    grad_gh[at2(mgh, r, H + j)] = FROM_F(d_z);
    grad_gx[at2(mgx, r, 2u * H + j)] = FROM_F(d_n);
    grad_gh[at2(mgh, r, 2u * H + j)] = FROM_F(d_n * reset);
    carried[at2(mca, r, j)] = FROM_F(dh_total * update);
  }
}
