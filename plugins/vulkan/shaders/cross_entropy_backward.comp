// CROSS_ENTROPY_BACKWARD: grad[i, c] = (softmax(logits[i])[c] - (c == label_i)) * grad_loss / D.
// One workgroup per row, or one invocation per row for short rows (ONE_INVOCATION_PER_ROW).
// t[0] logits, t[1] labels, t[2] grad_loss (rank 0), t[3] grad_logits.
// u[0] = N, u[1] = C, u[2] = 1 for I64 labels; f[0] = 1 / D. An out-of-range label gives NaN.
// Bindings: 1 logits, 2 labels, 3 grad_loss, 4 grad_logits.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "math.glsl"
#include "workgroup_reduce.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
layout(std430, set = 0, binding = 1) readonly buffer Logits { STORAGE_T logits[]; };
layout(std430, set = 0, binding = 2) readonly buffer Labels { uint labels[]; };
layout(std430, set = 0, binding = 3) readonly buffer GradLoss { STORAGE_T grad_loss[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Grad { STORAGE_T grad[]; };

void main() {
  const uint N = P.u[0], C = P.u[1];
  const bool labels64 = P.u[2] != 0u;
  const uint sn = uint(P.t[0].strides[0]), sc = uint(P.t[0].strides[1]);
  const uint gn = uint(P.t[3].strides[0]), gc = uint(P.t[3].strides[1]);
  const uint logits_offset = P.t[0].offset, grad_offset = P.t[3].offset;
  const float scale = TO_F(grad_loss[P.t[2].offset]) * P.f[0];
  FOR_EACH_ROW_ANY(row, N) {
    const uint base = logits_offset + row * sn;
    float m = -kInf;
    for (uint c = ROW_LANE; c < C; c += ROW_STEP) m = max_nan(m, TO_F(logits[base + c * sc]));
    m = row_max(m);
    float s = 0.0;
    for (uint c = ROW_LANE; c < C; c += ROW_STEP) s += exp(TO_F(logits[base + c * sc]) - m);
    s = row_sum(s);
    const int label = LOAD_INDEX(labels, 1u, row, labels64);
    const bool valid = label >= 0 && uint(label) < C;
    for (uint c = ROW_LANE; c < C; c += ROW_STEP) {
      const float p = exp(TO_F(logits[base + c * sc]) - m) / s;
      const float target = (valid && uint(label) == c) ? 1.0 : 0.0;
      grad[grad_offset + row * gn + c * gc] = FROM_F(valid ? (p - target) * scale : kNaN);
    }
  }
}
