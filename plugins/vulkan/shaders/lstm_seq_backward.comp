// One step of LSTM_SEQUENCE_BACKWARD (docs/ops.md section 17), f32: one invocation per element
// (r, j) of the [B, H] state. From the forward's ws row (i, f, g, o, c), the cell state before the
// step, the output's gradient and dh (the gradient reaching h through the next step's product,
// grad_h_n or zero at the last step), writes the step's gate gradients and replaces dc (the
// gradient reaching c) by the one reaching c_prev.
// t[0] ws[position] [B, 5H], t[1] c_prev [B, H], t[2] grad_y[position] [B, H], t[3] dh [B, H],
// t[4] dc [B, H], t[5] grad_gates[position] [B, 4H]. P.count = B * H, u[0] = H.
// Bindings: 1 ws, 2 c_prev, 3 grad_y, 4 dh, 5 dc, 6 grad_gates.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "math.glsl"
#include "lstm_common.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
layout(std430, set = 0, binding = 1) readonly buffer Ws { STORAGE_T ws[]; };
layout(std430, set = 0, binding = 2) readonly buffer CPrev { STORAGE_T c_prev[]; };
layout(std430, set = 0, binding = 3) readonly buffer GradY { STORAGE_T grad_y[]; };
layout(std430, set = 0, binding = 4) readonly buffer Dh { STORAGE_T dh[]; };
layout(std430, set = 0, binding = 5) buffer Dc { STORAGE_T dc[]; };
layout(std430, set = 0, binding = 6) writeonly buffer GradGates { STORAGE_T grad_gates[]; };

void main() {
  const uint H = P.u[0];
  const Matrix mw = matrix(0u), mcp = matrix(1u), mgy = matrix(2u), mdh = matrix(3u);
  const Matrix mdc = matrix(4u), mdg = matrix(5u);
  FOR_EACH_ITEM(item) {
    const uint r = item / H;
    const uint j = item - r * H;
    const float i = TO_F(ws[at2(mw, r, j)]);
    const float f = TO_F(ws[at2(mw, r, H + j)]);
    const float g = TO_F(ws[at2(mw, r, 2u * H + j)]);
    const float o = TO_F(ws[at2(mw, r, 3u * H + j)]);
    const float t = tanh_safe(TO_F(ws[at2(mw, r, 4u * H + j)]));
    const float dh_total = TO_F(grad_y[at2(mgy, r, j)]) + TO_F(dh[at2(mdh, r, j)]);
    const float d = TO_F(dc[at2(mdc, r, j)]) + dh_total * o * (1.0 - t * t);
    grad_gates[at2(mdg, r, j)] = FROM_F(d * g * i * (1.0 - i));
    grad_gates[at2(mdg, r, H + j)] = FROM_F(d * TO_F(c_prev[at2(mcp, r, j)]) * f * (1.0 - f));
    grad_gates[at2(mdg, r, 2u * H + j)] = FROM_F(d * i * (1.0 - g * g));
    grad_gates[at2(mdg, r, 3u * H + j)] = FROM_F(dh_total * t * o * (1.0 - o));
    dc[at2(mdc, r, j)] = FROM_F(d * f);
  }
}
