// COPY with any dtype to any dtype. Compiled per storage width of source and destination
// (SRC_W, DST_W in 16, 32, 64); the element kinds are u[0] (source) and u[1] (destination),
// KIND_* of convert.glsl. Bindings: 1 x (t[0]), 2 out (t[1]).
#version 450
#extension GL_GOOGLE_include_directive : require
#if SRC_W == 16 || DST_W == 16
#define NEED_16BIT_STORAGE
#endif
#include "common.glsl"
#include "convert.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
#if SRC_W == 16
layout(std430, set = 0, binding = 1) readonly buffer X { uint16_t x[]; };
#else
layout(std430, set = 0, binding = 1) readonly buffer X { uint x[]; };
#endif
#if DST_W == 16
layout(std430, set = 0, binding = 2) writeonly buffer Y { uint16_t y[]; };
#else
layout(std430, set = 0, binding = 2) writeonly buffer Y { uint y[]; };
#endif

void main() {
  const uint src_kind = P.u[0];
  const uint dst_kind = P.u[1];
  const Cursor cx = cursor(0u), cy = cursor(1u);
  FOR_EACH_ITEM(i) {
    // Read: a float value, or an integer as two words.
#if SRC_W == 64
    const uint s = at64(cx, i);
    const uvec2 src_int = uvec2(x[s], x[s + 1u]);
    const uint src_bits = src_int.x;
#else
    const uint src_bits = uint(x[at(cx, i)]);
    const uvec2 src_int = uvec2(src_bits, (src_bits & 0x80000000u) != 0u ? 0xffffffffu : 0u);
#endif
    const bool src_float = kind_is_float(src_kind);
#if SRC_W == 64
    const float value = int64_to_float(src_int);
#else
    const float value = src_float ? bits_to_float(src_kind, src_bits) : float(int(src_bits));
#endif
    // Write.
#if DST_W == 64
    const uvec2 out_int = src_float ? float_to_int64(value) : src_int;
    const uint d = at64(cy, i);
    y[d] = out_int.x;
    y[d + 1u] = out_int.y;
#elif DST_W == 16
    y[at(cy, i)] = uint16_t(src_kind == dst_kind ? src_bits : float_to_bits(dst_kind, value));
#else
    uint out_bits;
    if (dst_kind == KIND_I32) {
      out_bits = src_float ? float_to_int64(value).x : src_int.x;
      if (src_float && !isnan(value)) {  // saturate to the int32 range
        out_bits = value >= 2147483647.0 ? 0x7fffffffu
                   : value <= -2147483648.0 ? 0x80000000u : out_bits;
      }
    } else {
      out_bits = (src_kind == dst_kind) ? src_int.x : float_to_bits(dst_kind, value);
    }
    y[at(cy, i)] = out_bits;
#endif
  }
}
