// SCALED_DOT_PRODUCT_ATTENTION and its backward (docs/ops.md section 18). One workgroup of TILE
// invocations per row of the result, never more than a tile of scores in memory:
//   pass 0, forward: per query i, the keys in tiles of TILE (one score per invocation), the
//     online softmax's running max and sum across tiles (FlashAttention's rescaling), and each
//     invocation accumulating one output feature; lse = m + log(l) when asked for.
//   pass 1, delta: D_i = dO_i . O_i for the backward (f32 scratch).
//   pass 2, dq: per query i, dS_ij = P_ij (Z_ij dP_ij - D_i) * scale over key tiles, dQ_i = dS K.
//   pass 3, dk: per key j, over query tiles, dK_j = dS^T Q.
//   pass 4, dv: per key j, over query tiles, dV_j = (P Z)^T dO.
// P_ij = exp(s_ij - lse_i) is rebuilt from the forward's lse; Z is dropout's 0 or 1 / (1 - p)
// from Philox at counter offset + ((b H + h) Tq + i) Tk + j. Features beyond TILE are done in
// further passes over the tiles (chunks of TILE features).
// Slots (binding = slot + 1): t[0] q, t[1] k, t[2] v, t[3] mask, t[4] grad_out, t[5] lse (f32),
// t[6] delta (f32), t[7] the result (out, dq, dk or dv; O, read, in pass 1). Slots a pass does not
// use are bound to some tensor of the right type. u[0] H, u[1] Tq, u[2] Tk, u[3] D, u[4] Dv,
// u[5] causal, u[6] has_mask, u[7] write lse (pass 0), u[8..9] seed, u[10..11] offset,
// u[12] dropout on; f[0] scale, f[1] dropout_p as f32, f[2] 1 / (1 - dropout_p). P.count rows.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "switchyard/plugin_support/philox.h"

#define TILE 64
layout(local_size_x = TILE) in;
layout(std430, set = 0, binding = 1) readonly buffer Q { STORAGE_T q[]; };
layout(std430, set = 0, binding = 2) readonly buffer K { STORAGE_T k[]; };
layout(std430, set = 0, binding = 3) readonly buffer V { STORAGE_T v[]; };
layout(std430, set = 0, binding = 4) readonly buffer M { STORAGE_T mask[]; };
layout(std430, set = 0, binding = 5) readonly buffer G { STORAGE_T grad[]; };
layout(std430, set = 0, binding = 6) buffer L { float lse[]; };
layout(std430, set = 0, binding = 7) buffer Dl { float delta[]; };
layout(std430, set = 0, binding = 8) buffer R { STORAGE_T result[]; };

shared float s_reduce[TILE];
shared float s_tile[TILE];

uint H, TQ, TK, D, DV;
bool CAUSAL, HAS_MASK, DROPOUT;
float SCALE;

uint addr(uint s, uint b, uint h, uint i, uint x) {
  return P.t[s].offset + b * uint(P.t[s].strides[0]) + h * uint(P.t[s].strides[1]) +
         i * uint(P.t[s].strides[2]) + x * uint(P.t[s].strides[3]);
}

uint addr3(uint s, uint b, uint h, uint i) {
  return P.t[s].offset + b * uint(P.t[s].strides[0]) + h * uint(P.t[s].strides[1]) +
         i * uint(P.t[s].strides[2]);
}

// s_ij = q_i . k_j * scale + mask_ij, -inf where causal hides key j.
float score(uint b, uint h, uint i, uint j) {
  if (CAUSAL && j > i) return -kInf;
  const uint qa = addr(0u, b, h, i, 0u), ka = addr(1u, b, h, j, 0u);
  const uint qs = uint(P.t[0].strides[3]), ks = uint(P.t[1].strides[3]);
  float dot_qk = 0.0;
  for (uint x = 0u; x < D; ++x) dot_qk += TO_F(q[qa + x * qs]) * TO_F(k[ka + x * ks]);
  float s = dot_qk * SCALE;
  if (HAS_MASK) s += TO_F(mask[addr(3u, b, h, i, j)]);
  return s;
}

// dO_i . v_j
float grad_dot_v(uint b, uint h, uint i, uint j) {
  const uint ga = addr(4u, b, h, i, 0u), va = addr(2u, b, h, j, 0u);
  const uint gs = uint(P.t[4].strides[3]), vs = uint(P.t[2].strides[3]);
  float sum = 0.0;
  for (uint x = 0u; x < DV; ++x) sum += TO_F(grad[ga + x * gs]) * TO_F(v[va + x * vs]);
  return sum;
}

float dropout_factor(uint bh, uint i, uint j) {
  if (!DROPOUT) return 1.0;
  const uint index = (bh * TQ + i) * TK + j;
  uint carry;
  SyPhiloxWords counter;
  counter.w[0] = uaddCarry(P.u[10], index, carry);
  counter.w[1] = P.u[11] + carry;
  counter.w[2] = 0u;
  counter.w[3] = 0u;
  const SyPhiloxWords words = sy_philox4x32_10(counter, P.u[8], P.u[9]);
  const float u = float(words.w[0] >> 8) * 5.9604644775390625e-08;
  return u > P.f[1] ? P.f[2] : 0.0;
}

// P_ij from the forward's log-sum-exp: NaN for every key of a row that had none to attend.
float probability(float s, float row_lse) {
  if (row_lse == -kInf) return kNaN;
  return s == -kInf ? 0.0 : exp(s - row_lse);
}

float reduce_max(float value) {
  const uint lid = gl_LocalInvocationID.x;
  s_reduce[lid] = value;
  barrier();
  for (uint width = TILE / 2u; width > 0u; width >>= 1u) {
    if (lid < width) s_reduce[lid] = max(s_reduce[lid], s_reduce[lid + width]);
    barrier();
  }
  const float result = s_reduce[0];
  barrier();
  return result;
}

float reduce_sum(float value) {
  const uint lid = gl_LocalInvocationID.x;
  s_reduce[lid] = value;
  barrier();
  for (uint width = TILE / 2u; width > 0u; width >>= 1u) {
    if (lid < width) s_reduce[lid] += s_reduce[lid + width];
    barrier();
  }
  const float result = s_reduce[0];
  barrier();
  return result;
}

void forward_row(uint bh, uint b, uint h, uint i) {
  const uint lid = gl_LocalInvocationID.x;
  const uint keys = CAUSAL ? min(TK, i + 1u) : TK;
  float m = -kInf, l = 0.0;
  for (uint chunk = 0u; chunk < DV; chunk += TILE) {
    const uint x = chunk + lid;
    float acc = 0.0;
    m = -kInf;
    l = 0.0;
    for (uint j0 = 0u; j0 < keys; j0 += TILE) {
      const uint j = j0 + lid;
      const float s = j < keys ? score(b, h, i, j) : -kInf;
      const float m_new = max(m, reduce_max(s));
      const float p = (s == -kInf) ? 0.0 : exp(s - m_new);
      const float alpha = (m == -kInf) ? 0.0 : exp(m - m_new);
      l = l * alpha + reduce_sum(p);
      s_tile[lid] = j < keys ? p * dropout_factor(bh, i, j) : 0.0;
      barrier();
      if (x < DV) {
        acc *= alpha;
        const uint count = min(uint(TILE), keys - j0);
        for (uint t = 0u; t < count; ++t) acc += s_tile[t] * TO_F(v[addr(2u, b, h, j0 + t, x)]);
      }
      barrier();
      m = m_new;
    }
    if (x < DV) result[addr(7u, b, h, i, x)] = FROM_F(m == -kInf ? kNaN : acc / l);
  }
  if (P.u[7] != 0u && lid == 0u) lse[addr3(5u, b, h, i)] = m == -kInf ? -kInf : m + log(l);
}

void delta_row(uint b, uint h, uint i) {
  const uint lid = gl_LocalInvocationID.x;
  float sum = 0.0;
  for (uint x = lid; x < DV; x += TILE) {
    sum += TO_F(grad[addr(4u, b, h, i, x)]) * TO_F(result[addr(7u, b, h, i, x)]);
  }
  const float total = reduce_sum(sum);
  if (lid == 0u) delta[addr3(6u, b, h, i)] = total;
}

// dS_ij for one pair, 0 outside the causal limit.
float score_grad(uint bh, uint b, uint h, uint i, uint j) {
  const float s = score(b, h, i, j);
  const float p = probability(s, lse[addr3(5u, b, h, i)]);
  if (p == 0.0) return 0.0;
  const float dp = grad_dot_v(b, h, i, j);
  return p * (dropout_factor(bh, i, j) * dp - delta[addr3(6u, b, h, i)]) * SCALE;
}

void dq_row(uint bh, uint b, uint h, uint i) {
  const uint lid = gl_LocalInvocationID.x;
  const uint keys = CAUSAL ? min(TK, i + 1u) : TK;
  for (uint chunk = 0u; chunk < D; chunk += TILE) {
    const uint x = chunk + lid;
    float acc = 0.0;
    for (uint j0 = 0u; j0 < keys; j0 += TILE) {
      const uint j = j0 + lid;
      s_tile[lid] = j < keys ? score_grad(bh, b, h, i, j) : 0.0;
      barrier();
      if (x < D) {
        const uint count = min(uint(TILE), keys - j0);
        for (uint t = 0u; t < count; ++t) acc += s_tile[t] * TO_F(k[addr(1u, b, h, j0 + t, x)]);
      }
      barrier();
    }
    if (x < D) result[addr(7u, b, h, i, x)] = FROM_F(acc);
  }
}

// dK_j (pass 3) or dV_j (pass 4): sums over the queries that may see key j.
void dkv_row(uint bh, uint b, uint h, uint j, bool dk) {
  const uint lid = gl_LocalInvocationID.x;
  const uint width = dk ? D : DV;
  const uint first = CAUSAL ? min(j, TQ) : 0u;
  for (uint chunk = 0u; chunk < width; chunk += TILE) {
    const uint x = chunk + lid;
    float acc = 0.0;
    for (uint i0 = first; i0 < TQ; i0 += TILE) {
      const uint i = i0 + lid;
      float weight = 0.0;
      if (i < TQ) {
        if (dk) {
          weight = score_grad(bh, b, h, i, j);
        } else {
          const float p = probability(score(b, h, i, j), lse[addr3(5u, b, h, i)]);
          weight = p == 0.0 ? 0.0 : p * dropout_factor(bh, i, j);
        }
      }
      s_tile[lid] = weight;
      barrier();
      if (x < width) {
        const uint count = min(uint(TILE), TQ - i0);
        for (uint t = 0u; t < count; ++t) {
          const float other = dk ? TO_F(q[addr(0u, b, h, i0 + t, x)])
                                 : TO_F(grad[addr(4u, b, h, i0 + t, x)]);
          acc += s_tile[t] * other;
        }
      }
      barrier();
    }
    if (x < width) result[addr(7u, b, h, j, x)] = FROM_F(acc);
  }
}

void main() {
  const uint row = workgroup_linear_id();
  if (row >= P.count) return;  // the whole workgroup: no barrier is left waiting
  H = P.u[0];
  TQ = P.u[1];
  TK = P.u[2];
  D = P.u[3];
  DV = P.u[4];
  CAUSAL = P.u[5] != 0u;
  HAS_MASK = P.u[6] != 0u;
  DROPOUT = P.u[12] != 0u;
  SCALE = P.f[0];
  const uint per_head = (OP == 3u || OP == 4u) ? TK : TQ;
  const uint bh = row / per_head, position = row - bh * per_head;
  const uint b = bh / H, h = bh - b * H;
  if (OP == 0u) {
    forward_row(bh, b, h, position);
  } else if (OP == 1u) {
    delta_row(b, h, position);
  } else if (OP == 2u) {
    dq_row(bh, b, h, position);
  } else {
    dkv_row(bh, b, h, position, OP == 3u);
  }
}
