// CONV2D as an implicit GEMM (gemm_tile.glsl): y[n, o, i, j] = bias[o] + sum over k = (c, kh, kw)
// of w[o, k] * x[n, c, i*stride_h - pad_h + kh*dilation_h, j*stride_w - pad_w + kw*dilation_w],
// with M = O, N = N*OH*OW, K = C*KH*KW and the im2col matrix never stored.
// t[0] x [N, C, H, W], t[1] w [O, C, KH, KW], t[2] bias [O] (w again when absent), t[3] y,
// t[4] CONV2D_FUSED's residual [N, O, OH, OW] (y again when absent).
// Geometry in conv_common.glsl, g_flag = has_bias. Bindings: 1 x, 2 w, 3 bias, 4 y, 5 residual.
// CONV2D_FUSED's epilogue, applied as each output is stored: MODE bits 0-3 the activation
// (sy_activation: 1 RELU, 2 CLIP to [f[0], f[1]], 3 SILU), bit 4 a residual added before it; NaN
// passes through every activation.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "conv_common.glsl"

layout(std430, set = 0, binding = 1) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 2) readonly buffer Wt { STORAGE_T w[]; };
layout(std430, set = 0, binding = 3) readonly buffer Bias { STORAGE_T bias[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Y { STORAGE_T y[]; };
layout(std430, set = 0, binding = 5) readonly buffer Residual { STORAGE_T residual[]; };

const uint ACTIVATION = MODE & 0xfu;
const bool HAS_RESIDUAL = (MODE & 0x10u) != 0u;

View4 vx, vw, vy, vr;
float clip_low, clip_high;
uint bias_offset, bias_stride;

float load_a(uint o, uint k) {
  const uvec3 q = split3(k, g_kh, g_kw);  // c, kh, kw
  return TO_F(w[at4(vw, g_o0 + o, q.x, q.y, q.z)]);
}

float load_b(uint k, uint n) {
  const uvec3 q = split3(k, g_kh, g_kw);    // c, kh, kw
  const uvec3 p = split3(n, g_oh, g_ow);    // batch, i, j
  const int row = int(p.y) * g_stride_h - g_pad_h + int(q.y) * g_dilation_h;
  const int col = int(p.z) * g_stride_w - g_pad_w + int(q.z) * g_dilation_w;
  if (row < 0 || row >= int(g_h) || col < 0 || col >= int(g_w)) return 0.0;
  return TO_F(x[at4(vx, p.x, g_c0 + q.x, uint(row), uint(col))]);
}

void store_c(uint o, uint n, float value) {
  const uvec3 p = split3(n, g_oh, g_ow);
  if (g_flag) value += TO_F(bias[bias_offset + (g_o0 + o) * bias_stride]);
  if (HAS_RESIDUAL) value += TO_F(residual[at4(vr, p.x, g_o0 + o, p.y, p.z)]);
  if (ACTIVATION == 1u) {
    value = (value > 0.0 || isnan(value)) ? value : 0.0;
  } else if (ACTIVATION == 2u) {
    value = isnan(value) ? value : min(max(value, clip_low), clip_high);
  } else if (ACTIVATION == 3u) {
    value = value / (1.0 + exp(-value));
  }
  y[at4(vy, p.x, g_o0 + o, p.y, p.z)] = FROM_F(value);
}

#include "gemm_tile.glsl"
layout(local_size_x = GEMM_TS, local_size_y = GEMM_TS) in;

void main() {
  load_conv_geometry();
  vx = view4(0u);
  vw = view4(1u);
  vy = view4(3u);
  vr = view4(4u);
  clip_low = P.f[0];
  clip_high = P.f[1];
  bias_offset = P.t[2].offset;
  bias_stride = uint(P.t[2].strides[0]);
  gemm_all_tiles(g_o, g_n * g_oh * g_ow, g_c * g_kh * g_kw);
}
