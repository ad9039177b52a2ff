// One step of GRU_SEQUENCE (docs/ops.md section 17; PyTorch's GRU, linear before reset), f32: one
// invocation per element (r, j) of the [B, H] state. With u = gx (+ b_ih) and v = gates (+ b_hh)
// for the gates r, z, n: r = sigmoid(u_r + v_r), z = sigmoid(u_z + v_z), n = tanh(u_n + r * v_n),
// h = (1 - z) * n + z * h, updated in place and written to y at the step's position.
// t[0] gates [B, 3H] (h W_hh^T), t[1] gx [B, 3H] (x[position] W_ih^T), t[2] h [B, H], t[3] y[position]
// [B, H], t[4] b_ih [1, 3H], t[5] b_hh [1, 3H] (gates again without biases), t[6] ws[position]
// [B, 4H] (gates again without ws). P.count = B * H, u[0] = H, u[1] has_bias, u[2] has_ws: write r,
// z, n and v_n to ws, what GRU_SEQUENCE_BACKWARD reads.
// Bindings: 1 gates, 2 gx, 3 h, 4 y, 5 b_ih, 6 b_hh, 7 ws.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "math.glsl"
#include "lstm_common.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
layout(std430, set = 0, binding = 1) readonly buffer Gates { STORAGE_T gates[]; };
layout(std430, set = 0, binding = 2) readonly buffer Gx { STORAGE_T gx[]; };
layout(std430, set = 0, binding = 3) buffer HState { STORAGE_T h_state[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Y { STORAGE_T y[]; };
layout(std430, set = 0, binding = 5) readonly buffer BIh { STORAGE_T b_ih[]; };
layout(std430, set = 0, binding = 6) readonly buffer BHh { STORAGE_T b_hh[]; };
layout(std430, set = 0, binding = 7) writeonly buffer Ws { STORAGE_T ws[]; };

void main() {
  const uint H = P.u[0];
  const bool has_bias = P.u[1] != 0u;
  const Matrix mv = matrix(0u), mu = matrix(1u), mh = matrix(2u), my = matrix(3u);
  const Matrix mbi = matrix(4u), mbh = matrix(5u), mw = matrix(6u);
  const bool has_ws = P.u[2] != 0u;
  FOR_EACH_ITEM(item) {
    const uint r = item / H;
    const uint j = item - r * H;
    float u[3], v[3];
    for (uint gate = 0u; gate < 3u; ++gate) {
      const uint column = gate * H + j;
      u[gate] = TO_F(gx[at2(mu, r, column)]);
      v[gate] = TO_F(gates[at2(mv, r, column)]);
      if (has_bias) {
        u[gate] += TO_F(b_ih[at2(mbi, 0u, column)]);
        v[gate] += TO_F(b_hh[at2(mbh, 0u, column)]);
      }
    }
    const float reset = sigmoid(u[0] + v[0]), update = sigmoid(u[1] + v[1]);
    const float n = tanh_safe(u[2] + reset * v[2]);
    const float h = (1.0 - update) * n + update * TO_F(h_state[at2(mh, r, j)]);
    h_state[at2(mh, r, j)] = FROM_F(h);
    y[at2(my, r, j)] = FROM_F(h);
    if (has_ws) {
      ws[at2(mw, r, j)] = FROM_F(reset);
      ws[at2(mw, r, H + j)] = FROM_F(update);
      ws[at2(mw, r, 2u * H + j)] = FROM_F(n);
      ws[at2(mw, r, 3u * H + j)] = FROM_F(v[2]);
    }
  }
}
