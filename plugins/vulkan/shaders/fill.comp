// FILL: every element of out = a bit pattern computed on the host (u[0] low word, u[1] high word
// for 64-bit elements). Compiled per destination width DST_W. Binding 1: out (t[0]).
#version 450
#extension GL_GOOGLE_include_directive : require
#if DST_W == 16
#define NEED_16BIT_STORAGE
#endif
#include "common.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
#if DST_W == 16
layout(std430, set = 0, binding = 1) writeonly buffer Y { uint16_t y[]; };
#else
layout(std430, set = 0, binding = 1) writeonly buffer Y { uint y[]; };
#endif

void main() {
  const uint lo = P.u[0], hi = P.u[1];
  const Cursor cy = cursor(0u);
  FOR_EACH_ITEM(i) {
#if DST_W == 64
    const uint d = at64(cy, i);
    y[d] = lo;
    y[d + 1u] = hi;
#elif DST_W == 16
    y[at(cy, i)] = uint16_t(lo);
#else
    y[at(cy, i)] = lo;
#endif
  }
}
