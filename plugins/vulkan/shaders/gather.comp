// GATHER (index_select): out[..., j, ...] = x[..., indices[j], ...]. One invocation per out
// element; compiled per data width DST_W (16, 32, 64 bits), as the values are only moved.
// An out-of-range index reads nothing (ops.md section 1, asynchronous backends): float data gets
// NaN there (u[4] = 1, u[5] its bits in the data's width), integer data is left unwritten.
// Bindings: 1 x, 2 indices, 3 out. See index_common.glsl.
#version 450
#extension GL_GOOGLE_include_directive : require
#if DST_W == 16
#define NEED_16BIT_STORAGE
#endif
#include "common.glsl"
#include "index_common.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
#if DST_W == 16
layout(std430, set = 0, binding = 1) readonly buffer X { uint16_t x[]; };
layout(std430, set = 0, binding = 3) writeonly buffer O { uint16_t o[]; };
#else
layout(std430, set = 0, binding = 1) readonly buffer X { uint x[]; };
layout(std430, set = 0, binding = 3) writeonly buffer O { uint o[]; };
#endif
layout(std430, set = 0, binding = 2) readonly buffer Indices { uint indices[]; };

void main() {
  const uint axis = P.u[0];
  FOR_EACH_ITEM(e) {
    uint j;
    const uint x_rest = offset_with_axis(2u, 0u, e, axis, j);
    const int index = LOAD_INDEX(indices, 1u, j, P.u[1] != 0u);
    if (index < 0 || uint(index) >= P.u[2]) {
#if DST_W == 16
      if (P.u[4] != 0u) o[at(2u, e)] = uint16_t(P.u[5]);
#elif DST_W == 32
      if (P.u[4] != 0u) o[at(2u, e)] = P.u[5];
#endif
      continue;
    }
    const uint x_element = x_rest + uint(index) * uint(P.t[0].strides[axis]);
#if DST_W == 64
    const uint s = P.t[0].offset + 2u * x_element;
    const uint d = at64(2u, e);
    o[d] = x[s];
    o[d + 1u] = x[s + 1u];
#else
    o[at(2u, e)] = x[P.t[0].offset + x_element];
#endif
  }
}
