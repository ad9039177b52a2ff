// LSTM_CELL_BACKWARD (docs/ops.md section 16): one invocation per element (r, j) of the [B, H]
// state. t[0] grad_h [B, H], t[1] grad_c [B, H], t[2] act [B, 4H] (i, f, g, o), t[3] c_prev
// [B, H], t[4] c [B, H], t[5] grad_gates [B, 4H], t[6] grad_c_prev [B, H].
// P.count = B * H, u[0] = H.
// Bindings: 1 grad_h, 2 grad_c, 3 act, 4 c_prev, 5 c, 6 grad_gates, 7 grad_c_prev.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "math.glsl"
#include "lstm_common.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
layout(std430, set = 0, binding = 1) readonly buffer GradH { STORAGE_T grad_h[]; };
layout(std430, set = 0, binding = 2) readonly buffer GradC { STORAGE_T grad_c[]; };
layout(std430, set = 0, binding = 3) readonly buffer Act { STORAGE_T act[]; };
layout(std430, set = 0, binding = 4) readonly buffer CPrev { STORAGE_T c_prev[]; };
layout(std430, set = 0, binding = 5) readonly buffer CIn { STORAGE_T c_in[]; };
layout(std430, set = 0, binding = 6) writeonly buffer GradGates { STORAGE_T grad_gates[]; };
layout(std430, set = 0, binding = 7) writeonly buffer GradCPrev { STORAGE_T grad_c_prev[]; };

void main() {
  const uint H = P.u[0];
  const Matrix mdh = matrix(0u), mdc = matrix(1u), ma = matrix(2u), mcp = matrix(3u);
  const Matrix mc = matrix(4u), mdg = matrix(5u), mdcp = matrix(6u);
  FOR_EACH_ITEM(item) {
    const uint r = item / H;
    const uint j = item - r * H;
    const float i = TO_F(act[at2(ma, r, j)]);
    const float f = TO_F(act[at2(ma, r, H + j)]);
    const float g = TO_F(act[at2(ma, r, 2u * H + j)]);
    const float o = TO_F(act[at2(ma, r, 3u * H + j)]);
    const float t = tanh_safe(TO_F(c_in[at2(mc, r, j)]));
    const float dh = TO_F(grad_h[at2(mdh, r, j)]);
    const float dc = TO_F(grad_c[at2(mdc, r, j)]) + dh * o * (1.0 - t * t);
    grad_gates[at2(mdg, r, j)] = FROM_F(dc * g * i * (1.0 - i));
    grad_gates[at2(mdg, r, H + j)] = FROM_F(dc * TO_F(c_prev[at2(mcp, r, j)]) * f * (1.0 - f));
    grad_gates[at2(mdg, r, 2u * H + j)] = FROM_F(dc * i * (1.0 - g * g));
    grad_gates[at2(mdg, r, 3u * H + j)] = FROM_F(dh * t * o * (1.0 - o));
    grad_c_prev[at2(mdcp, r, j)] = FROM_F(dc * f);
  }
}
