// ARGMAX over one axis: ties give the smallest index, a NaN beats every number (the first NaN
// wins). One workgroup per output element, or one invocation per output for short rows
// (ONE_INVOCATION_PER_ROW). t[0]: x over the kept axes, t[2]: out over the kept axes;
// u[0] = axis length, u[1] = axis stride of x, u[2] = 1 for an I64 output.
// Bindings: 1 x, 2 out (32-bit words).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "math.glsl"
#include "workgroup_reduce.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
layout(std430, set = 0, binding = 1) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer O { uint o[]; };

shared float best_value[WORKGROUP_SIZE];
shared uint best_index[WORKGROUP_SIZE];

const uint kNone = 0xffffffffu;

// True when (v, i) should replace (best, bi); bi == kNone means nothing seen yet.
bool beats(float v, uint i, float best, uint bi) {
  if (bi == kNone) return true;
  if (isnan(best)) return isnan(v) && i < bi;
  if (isnan(v)) return true;
  return v > best || (v == best && i < bi);
}

void write_index(Cursor co, uint row, uint index) {
  if (P.u[2] != 0u) {
    const uint d = at64(co, row);
    o[d] = index;
    o[d + 1u] = 0u;
  } else {
    o[at(co, row)] = index;
  }
}

void main() {
  const uint L = P.u[0], stride = P.u[1];
  const Cursor cx = cursor(0u), co = cursor(2u);
  if (ONE_INVOCATION_PER_ROW) {
    FOR_EACH_ITEM(row) {
      const uint base = at(cx, row);
      float best = 0.0;
      uint bi = kNone;
      for (uint i = 0u; i < L; ++i) {
        const float v = TO_F(x[base + i * stride]);
        if (beats(v, i, best, bi)) {
          best = v;
          bi = i;
        }
      }
      write_index(co, row, bi);
    }
    return;
  }
  const uint tid = gl_LocalInvocationID.x;
  FOR_EACH_ROW(row, P.count) {
    const uint base = at(cx, row);
    float best = 0.0;
    uint bi = kNone;
    for (uint i = tid; i < L; i += WORKGROUP_SIZE) {
      const float v = TO_F(x[base + i * stride]);
      if (beats(v, i, best, bi)) {
        best = v;
        bi = i;
      }
    }
    best_value[tid] = best;
    best_index[tid] = bi;
    barrier();
    for (uint s = WORKGROUP_SIZE / 2u; s > 0u; s >>= 1) {
      if (tid < s && best_index[tid + s] != kNone &&
          beats(best_value[tid + s], best_index[tid + s], best_value[tid], best_index[tid])) {
        best_value[tid] = best_value[tid + s];
        best_index[tid] = best_index[tid + s];
      }
      barrier();
    }
    if (tid == 0u) write_index(co, row, best_index[0]);
    barrier();
  }
}
