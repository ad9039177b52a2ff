// CROSS_ENTROPY in two dispatches of this shader.
// OP 0: per row i, loss_i = logsumexp(logits[i]) - logits[i, label_i] into the f32 scratch (NaN
//       for an out-of-range label: the host cannot check labels it cannot see). One workgroup per
//       row, or one invocation per row for short rows (ONE_INVOCATION_PER_ROW).
// OP 1: one workgroup sums the scratch and writes the loss (u[3] = 1: divide by N).
// t[0] logits (2-D), t[1] labels (1-D), t[2] scratch [N], t[3] loss (rank 0).
// u[0] = N, u[1] = C, u[2] = 1 for I64 labels. Bindings: 1 logits, 2 labels, 3 scratch, 4 loss.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "math.glsl"
#include "workgroup_reduce.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
layout(std430, set = 0, binding = 1) readonly buffer Logits { STORAGE_T logits[]; };
layout(std430, set = 0, binding = 2) readonly buffer Labels { uint labels[]; };
layout(std430, set = 0, binding = 3) buffer Scratch { float scratch[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Loss { STORAGE_T loss[]; };

void main() {
  const uint N = P.u[0], C = P.u[1];
  const uint sn = uint(P.t[0].strides[0]), sc = uint(P.t[0].strides[1]);
  const uint logits_offset = P.t[0].offset, scratch_offset = P.t[2].offset;
  if (OP == 0u) {
    const bool labels64 = P.u[2] != 0u;
    FOR_EACH_ROW_ANY(row, N) {
      const uint base = logits_offset + row * sn;
      float m = -kInf;
      for (uint c = ROW_LANE; c < C; c += ROW_STEP) m = max_nan(m, TO_F(logits[base + c * sc]));
      m = row_max(m);
      float s = 0.0;
      for (uint c = ROW_LANE; c < C; c += ROW_STEP) s += exp(TO_F(logits[base + c * sc]) - m);
      s = row_sum(s);
      if (row_leader()) {
        const int label = LOAD_INDEX(labels, 1u, row, labels64);
        const bool valid = label >= 0 && uint(label) < C;
        const float picked = valid ? TO_F(logits[base + uint(label) * sc]) : kNaN;
        scratch[scratch_offset + row] = m + log(s) - picked;
      }
    }
  } else {
    const uint tid = gl_LocalInvocationID.x;
    float total = 0.0;
    for (uint i = tid; i < N; i += WORKGROUP_SIZE) total += scratch[scratch_offset + i];
    total = workgroup_sum(total);
    if (tid == 0u) {
      const float result = P.u[3] != 0u ? (N == 0u ? kNaN : total / float(N)) : total;
      loss[P.t[3].offset] = FROM_F(result);
    }
  }
}
