// MAX_POOL2D_BACKWARD / AVG_POOL2D_BACKWARD: one invocation per grad_x[n, c, h, w], gathering
// from every window that covers (h, w), so nothing races. For max pooling the window's argmax
// (first maximum in row-major order, a NaN counts as the maximum) is recomputed from x.
// t[0] grad_y, t[1] x (grad_y again for avg), t[2] grad_x. Geometry in conv_common.glsl,
// g_flag = count_include_pad; mode = sy_op. Bindings: 1 grad_y, 2 x, 3 grad_x.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "conv_common.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
layout(std430, set = 0, binding = 1) readonly buffer GradY { STORAGE_T grad_y[]; };
layout(std430, set = 0, binding = 2) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 3) writeonly buffer GradX { STORAGE_T grad_x[]; };

View4 vx;

// True when (row, col) is where the window starting at (row0, col0) takes its maximum.
bool is_window_argmax(uint n, uint c, int row0, int col0, int row, int col) {
  float best = 0.0;
  int best_row = -1, best_col = -1;
  for (int r = max(row0, 0); r < min(row0 + int(g_kh), int(g_h)); ++r) {
    for (int q = max(col0, 0); q < min(col0 + int(g_kw), int(g_w)); ++q) {
      const float v = TO_F(x[at4(vx, n, c, uint(r), uint(q))]);
      if (best_row < 0 || (!isnan(best) && (isnan(v) || v > best))) {
        best = v;
        best_row = r;
        best_col = q;
      }
    }
  }
  return best_row == row && best_col == col;
}

// How many in-range positions the window starting at (row0, col0) has.
uint window_size(int row0, int col0) {
  const int rows = min(row0 + int(g_kh), int(g_h)) - max(row0, 0);
  const int cols = min(col0 + int(g_kw), int(g_w)) - max(col0, 0);
  return uint(rows * cols);
}

void main() {
  load_conv_geometry();
  vx = view4(1u);
  const View4 vgy = view4(0u), vgx = view4(2u);
  const bool is_max = OP == 38u;
  const int kh = int(g_kh), kw = int(g_kw), sh = g_stride_h, sw = g_stride_w;
  const uint count = P.count;
  for (uint e = gl_GlobalInvocationID.x; e < count; e += gl_NumWorkGroups.x * WORKGROUP_SIZE) {
    const uvec4 p = split4(e, g_c, g_h, g_w);  // n, c, h, w
    const int h = int(p.z), w = int(p.w);
    // Windows i with i*sh - pad_h <= h < i*sh - pad_h + KH (integer division truncates, and
    // anything at or below 0 is clamped to 0 anyway).
    const int i_first = max(0, (h + g_pad_h - kh + sh) / sh);
    const int i_last = min(int(g_oh) - 1, (h + g_pad_h) / sh);
    const int j_first = max(0, (w + g_pad_w - kw + sw) / sw);
    const int j_last = min(int(g_ow) - 1, (w + g_pad_w) / sw);
    float acc = 0.0;
    for (int i = i_first; i <= i_last; ++i) {
      const int row0 = i * sh - g_pad_h;
      for (int j = j_first; j <= j_last; ++j) {
        const int col0 = j * sw - g_pad_w;
        const float g = TO_F(grad_y[at4(vgy, p.x, p.y, uint(i), uint(j))]);
        if (is_max) {
          if (is_window_argmax(p.x, p.y, row0, col0, h, w)) acc += g;
        } else {
          acc += g / float(g_flag ? g_kh * g_kw : window_size(row0, col0));
        }
      }
    }
    grad_x[at4(vgx, p.x, p.y, p.z, p.w)] = FROM_F(acc);
  }
}
