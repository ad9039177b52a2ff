// SCATTER_ADD (index_add_): out[..., indices[j], ...] += src[..., j, ...]. One invocation per
// out element gathers every j whose index names it, in order of j, so nothing races and f16/bf16
// elements are rounded once. Out-of-range indices are skipped. Compiled for DT_F32, DT_F16,
// DT_BF16, DT_I32, DT_I64. Bindings: 1 src, 2 indices, 3 out. See index_common.glsl.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "index_common.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
#if defined(DT_I32) || defined(DT_I64)
layout(std430, set = 0, binding = 1) readonly buffer Src { uint src[]; };
layout(std430, set = 0, binding = 3) buffer O { uint o[]; };
#else
layout(std430, set = 0, binding = 1) readonly buffer Src { STORAGE_T src[]; };
layout(std430, set = 0, binding = 3) buffer O { STORAGE_T o[]; };
#endif
layout(std430, set = 0, binding = 2) readonly buffer Indices { uint indices[]; };

void main() {
  const uint axis = P.u[0], L = P.u[3];
  const uint src_axis_stride = uint(P.t[0].strides[axis]);
  FOR_EACH_ITEM(e) {
    uint r;
    const uint src_rest = offset_with_axis(2u, 0u, e, axis, r);
#if defined(DT_I64)
    const uint d = at64(2u, e);
    uvec2 acc = uvec2(o[d], o[d + 1u]);
#elif defined(DT_I32)
    const uint d = at(2u, e);
    uint acc = o[d];
#else
    const uint d = at(2u, e);
    float acc = TO_F(o[d]);
#endif
    for (uint j = 0u; j < L; ++j) {
      if (LOAD_INDEX(indices, 1u, j, P.u[1] != 0u) != int(r)) continue;
      const uint s = src_rest + j * src_axis_stride;
#if defined(DT_I64)
      const uint w = P.t[0].offset + 2u * s;
      uint carry;
      acc.x = uaddCarry(acc.x, src[w], carry);
      acc.y = acc.y + src[w + 1u] + carry;
#elif defined(DT_I32)
      acc += src[P.t[0].offset + s];
#else
      acc += TO_F(src[P.t[0].offset + s]);
#endif
    }
#if defined(DT_I64)
    o[d] = acc.x;
    o[d + 1u] = acc.y;
#elif defined(DT_I32)
    o[d] = acc;
#else
    o[d] = FROM_F(acc);
#endif
  }
}
