// One step of LSTM_SEQUENCE (docs/ops.md section 17), f32: one invocation per element (r, j) of
// the [B, H] state. a = gates + gx (+ b_ih + b_hh) for the four gates i, f, g, o; then c = f * c +
// i * g and h = o * tanh(c), the state updated in place and h written to y at the step's position.
// t[0] gates [B, 4H] (h W_hh^T), t[1] gx [B, 4H] (x[position] W_ih^T), t[2] h [B, H], t[3] c
// [B, H], t[4] y[position] [B, H] (a view of y), t[5] b_ih [1, 4H], t[6] b_hh [1, 4H] (gates again
// without biases), t[7] ws[position] [B, 5H] (gates again without ws). P.count = B * H, u[0] = H,
// u[1] has_bias, u[2] has_ws: write i, f, g, o and c to ws, what LSTM_SEQUENCE_BACKWARD reads.
// Bindings: 1 gates, 2 gx, 3 h, 4 c, 5 y, 6 b_ih, 7 b_hh, 8 ws.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "math.glsl"
#include "lstm_common.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
layout(std430, set = 0, binding = 1) readonly buffer Gates { STORAGE_T gates[]; };
layout(std430, set = 0, binding = 2) readonly buffer Gx { STORAGE_T gx[]; };
layout(std430, set = 0, binding = 3) buffer HState { STORAGE_T h_state[]; };
layout(std430, set = 0, binding = 4) buffer CState { STORAGE_T c_state[]; };
layout(std430, set = 0, binding = 5) writeonly buffer Y { STORAGE_T y[]; };
layout(std430, set = 0, binding = 6) readonly buffer BIh { STORAGE_T b_ih[]; };
layout(std430, set = 0, binding = 7) readonly buffer BHh { STORAGE_T b_hh[]; };
layout(std430, set = 0, binding = 8) writeonly buffer Ws { STORAGE_T ws[]; };

void main() {
  const uint H = P.u[0];
  const bool has_bias = P.u[1] != 0u;
  const Matrix mz = matrix(0u), mx = matrix(1u), mh = matrix(2u), mc = matrix(3u);
  const Matrix my = matrix(4u), mbi = matrix(5u), mbh = matrix(6u), mw = matrix(7u);
  const bool has_ws = P.u[2] != 0u;
  FOR_EACH_ITEM(item) {
    const uint r = item / H;
    const uint j = item - r * H;
    float a[4];
    for (uint gate = 0u; gate < 4u; ++gate) {
      const uint column = gate * H + j;
      a[gate] = TO_F(gates[at2(mz, r, column)]) + TO_F(gx[at2(mx, r, column)]);
      if (has_bias) {
        a[gate] += TO_F(b_ih[at2(mbi, 0u, column)]) + TO_F(b_hh[at2(mbh, 0u, column)]);
      }
    }
    const float i = sigmoid(a[0]), f = sigmoid(a[1]), g = tanh_safe(a[2]), o = sigmoid(a[3]);
    const float c = f * TO_F(c_state[at2(mc, r, j)]) + i * g;
    const float h = o * tanh_safe(c);
    c_state[at2(mc, r, j)] = FROM_F(c);
    h_state[at2(mh, r, j)] = FROM_F(h);
    y[at2(my, r, j)] = FROM_F(h);
    if (has_ws) {
      ws[at2(mw, r, j)] = FROM_F(i);
      ws[at2(mw, r, H + j)] = FROM_F(f);
      ws[at2(mw, r, 2u * H + j)] = FROM_F(g);
      ws[at2(mw, r, 3u * H + j)] = FROM_F(o);
      ws[at2(mw, r, 4u * H + j)] = FROM_F(c);
    }
  }
}
