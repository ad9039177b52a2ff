// CONV2D_BACKWARD_DATA as an implicit GEMM (gemm_tile.glsl): grad_x[n, c, h, w] = sum over
// k = (o, kh, kw) of w[o, c, kh, kw] * grad_y[n, o, i, j], where i*stride_h - pad_h +
// kh*dilation_h = h (and likewise j); positions with no such i or j contribute 0.
// M = C, N = N*H*W, K = O*KH*KW. t[0] grad_y [N, O, OH, OW], t[1] w [O, C, KH, KW],
// t[2] grad_x [N, C, H, W]. Bindings: 1 grad_y, 2 w, 3 grad_x.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "conv_common.glsl"

layout(std430, set = 0, binding = 1) readonly buffer GradY { STORAGE_T grad_y[]; };
layout(std430, set = 0, binding = 2) readonly buffer Wt { STORAGE_T w[]; };
layout(std430, set = 0, binding = 3) writeonly buffer GradX { STORAGE_T grad_x[]; };

View4 vgy, vw, vgx;

float load_a(uint c, uint k) {
  const uvec3 q = split3(k, g_kh, g_kw);  // o, kh, kw
  return TO_F(w[at4(vw, g_o0 + q.x, c, q.y, q.z)]);
}

float load_b(uint k, uint n) {
  const uvec3 q = split3(k, g_kh, g_kw);  // o, kh, kw
  const uvec3 p = split3(n, g_h, g_w);    // batch, h, w
  const int top = int(p.y) + g_pad_h - int(q.y) * g_dilation_h;
  const int left = int(p.z) + g_pad_w - int(q.z) * g_dilation_w;
  if (top < 0 || left < 0 || top % g_stride_h != 0 || left % g_stride_w != 0) return 0.0;
  const uint i = uint(top / g_stride_h), j = uint(left / g_stride_w);
  if (i >= g_oh || j >= g_ow) return 0.0;
  return TO_F(grad_y[at4(vgy, p.x, g_o0 + q.x, i, j)]);
}

void store_c(uint c, uint n, float value) {
  const uvec3 p = split3(n, g_h, g_w);
  grad_x[at4(vgx, p.x, g_c0 + c, p.y, p.z)] = FROM_F(value);
}

#include "gemm_tile.glsl"
layout(local_size_x = GEMM_TS, local_size_y = GEMM_TS) in;

void main() {
  load_conv_geometry();
  vgy = view4(0u);
  vw = view4(1u);
  vgx = view4(2u);
  gemm_all_tiles(g_c, g_n * g_h * g_w, g_o * g_kh * g_kw);
}
