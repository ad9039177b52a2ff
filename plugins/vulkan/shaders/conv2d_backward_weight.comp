// CONV2D_BACKWARD_WEIGHT as an implicit GEMM (gemm_tile.glsl).
// mode 0: grad_w[o, (c, kh, kw)] = sum over k = (n, i, j) of grad_y[n, o, i, j] *
//         x[n, c, i*stride_h - pad_h + kh*dilation_h, j*stride_w - pad_w + kw*dilation_w];
//         M = O, N = C*KH*KW, K = N*OH*OW.
// mode 1: grad_bias[o] = sum over k of grad_y[n, o, i, j], the same GEMM against a column of ones.
// t[0] grad_y [N, O, OH, OW], t[1] x [N, C, H, W], t[2] grad_w [O, C, KH, KW], t[3] grad_bias [O]
// (grad_w again when absent). Bindings: 1 grad_y, 2 x, 3 grad_w, 4 grad_bias.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "conv_common.glsl"

layout(std430, set = 0, binding = 1) readonly buffer GradY { STORAGE_T grad_y[]; };
layout(std430, set = 0, binding = 2) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 3) writeonly buffer GradW { STORAGE_T grad_w[]; };
layout(std430, set = 0, binding = 4) writeonly buffer GradBias { STORAGE_T grad_bias[]; };

View4 vgy, vx, vgw;
uint bias_offset, bias_stride;
bool for_bias;

float load_a(uint o, uint k) {
  const uvec3 p = split3(k, g_oh, g_ow);  // batch, i, j
  return TO_F(grad_y[at4(vgy, p.x, g_o0 + o, p.y, p.z)]);
}

float load_b(uint k, uint n) {
  if (for_bias) return 1.0;
  const uvec3 p = split3(k, g_oh, g_ow);  // batch, i, j
  const uvec3 q = split3(n, g_kh, g_kw);  // c, kh, kw
  const int row = int(p.y) * g_stride_h - g_pad_h + int(q.y) * g_dilation_h;
  const int col = int(p.z) * g_stride_w - g_pad_w + int(q.z) * g_dilation_w;
  if (row < 0 || row >= int(g_h) || col < 0 || col >= int(g_w)) return 0.0;
  return TO_F(x[at4(vx, p.x, g_c0 + q.x, uint(row), uint(col))]);
}

void store_c(uint o, uint n, float value) {
  if (for_bias) {
    grad_bias[bias_offset + (g_o0 + o) * bias_stride] = FROM_F(value);
  } else {
    const uvec3 q = split3(n, g_kh, g_kw);
    grad_w[at4(vgw, g_o0 + o, q.x, q.y, q.z)] = FROM_F(value);
  }
}

#include "gemm_tile.glsl"
layout(local_size_x = GEMM_TS, local_size_y = GEMM_TS) in;

void main() {
  load_conv_geometry();
  vgy = view4(0u);
  vx = view4(1u);
  vgw = view4(2u);
  bias_offset = P.t[3].offset;
  bias_stride = uint(P.t[3].strides[0]);
  for_bias = OP == 1u;
  const uint columns = for_bias ? 1u : g_c * g_kh * g_kw;
  gemm_all_tiles(g_o, columns, g_n * g_oh * g_ow);
}
