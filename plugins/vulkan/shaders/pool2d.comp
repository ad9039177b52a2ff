// MAX_POOL2D / AVG_POOL2D: one invocation per output y[n, c, i, j]. t[0] x, t[1] y.
// Geometry in conv_common.glsl (O unused), g_flag = count_include_pad; mode = sy_op.
// Bindings: 1 x, 2 y.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "conv_common.glsl"
#include "math.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
layout(std430, set = 0, binding = 1) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { STORAGE_T y[]; };

void main() {
  load_conv_geometry();
  const View4 vx = view4(0u), vy = view4(1u);
  const bool is_max = OP == 37u;
  const uint count = P.count;
  for (uint e = gl_GlobalInvocationID.x; e < count; e += gl_NumWorkGroups.x * WORKGROUP_SIZE) {
    const uvec4 p = split4(e, g_c, g_oh, g_ow);  // n, c, i, j
    const int row0 = int(p.z) * g_stride_h - g_pad_h;
    const int col0 = int(p.w) * g_stride_w - g_pad_w;
    float acc = is_max ? -kInf : 0.0;
    uint inside = 0u;
    for (int row = max(row0, 0); row < min(row0 + int(g_kh), int(g_h)); ++row) {
      for (int col = max(col0, 0); col < min(col0 + int(g_kw), int(g_w)); ++col) {
        const float v = TO_F(x[at4(vx, p.x, p.y, uint(row), uint(col))]);
        acc = is_max ? max_nan(acc, v) : acc + v;
        ++inside;
      }
    }
    if (!is_max) acc = acc / float(g_flag ? g_kh * g_kw : inside);
    y[at4(vy, p.x, p.y, p.z, p.w)] = FROM_F(acc);
  }
}
