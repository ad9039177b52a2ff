// LSTM_CELL (docs/ops.md section 16): one invocation per element (r, j) of the [B, H] state.
// t[0] gates [B, 4H] (i, f, g, o), t[1] c_prev [B, H], t[2] h [B, H], t[3] c [B, H],
// t[4] act [B, 4H]. P.count = B * H, u[0] = H.
// Bindings: 1 gates, 2 c_prev, 3 h, 4 c, 5 act.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "math.glsl"
#include "lstm_common.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
layout(std430, set = 0, binding = 1) readonly buffer Gates { STORAGE_T gates[]; };
layout(std430, set = 0, binding = 2) readonly buffer CPrev { STORAGE_T c_prev[]; };
layout(std430, set = 0, binding = 3) writeonly buffer HOut { STORAGE_T h_out[]; };
layout(std430, set = 0, binding = 4) writeonly buffer COut { STORAGE_T c_out[]; };
layout(std430, set = 0, binding = 5) writeonly buffer Act { STORAGE_T act[]; };

void main() {
  const uint H = P.u[0];
  const Matrix mz = matrix(0u), mcp = matrix(1u), mh = matrix(2u), mc = matrix(3u);
  const Matrix ma = matrix(4u);
  FOR_EACH_ITEM(item) {
    const uint r = item / H;
    const uint j = item - r * H;
    const float i = sigmoid(TO_F(gates[at2(mz, r, j)]));
    const float f = sigmoid(TO_F(gates[at2(mz, r, H + j)]));
    const float g = tanh_safe(TO_F(gates[at2(mz, r, 2u * H + j)]));
    const float o = sigmoid(TO_F(gates[at2(mz, r, 3u * H + j)]));
    const float c = f * TO_F(c_prev[at2(mcp, r, j)]) + i * g;
    c_out[at2(mc, r, j)] = FROM_F(c);
    h_out[at2(mh, r, j)] = FROM_F(o * tanh_safe(c));
    act[at2(ma, r, j)] = FROM_F(i);
    act[at2(ma, r, H + j)] = FROM_F(f);
    act[at2(ma, r, 2u * H + j)] = FROM_F(g);
    act[at2(ma, r, 3u * H + j)] = FROM_F(o);
  }
}
