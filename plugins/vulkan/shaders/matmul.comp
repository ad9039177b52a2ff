// MATMUL: out[b, m, n] = sum_k A[b, m, k] * B[b, k, n] (+ bias[b, m, n]) with the tiled kernel of
// gemm_tile.glsl. The host passes every tensor as a view of rank R = batch rank + 2 with the
// output's batch shape (stride 0 where an operand broadcasts) and transposes folded into strides.
// Bindings: 1 A (t[0]), 2 B (t[1]), 3 bias (t[2]; repeats out when absent), 4 out (t[3]).
// u[0] has_bias, u[1] M, u[2] N, u[3] K, u[4] batch count, u[5] batch rank.
//
// Two strategies, chosen by the host per call (ops_matmul.cpp) and specialised through MODE:
// - tiled: one 64x64 tile per workgroup (gemm_tile.glsl), for products with large M and N;
// - per element (SMALL_PRODUCT): each invocation computes up to 8 neighbouring outputs of a row
//   of the flattened (batch, m, n) grid with plain dot products over K, for products whose M or N is
//   far below a tile (attention's [B*heads, T, T] products, [out, in] weight gradients of
//   narrow layers): the tiled kernel would pad an 8x8x8 product to 64x64x32, 256 times the work.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(std430, set = 0, binding = 1) readonly buffer A { STORAGE_T a[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { STORAGE_T b[]; };
layout(std430, set = 0, binding = 3) readonly buffer Bias { STORAGE_T bias[]; };
layout(std430, set = 0, binding = 4) writeonly buffer O { STORAGE_T o[]; };

// Read once per invocation: the driver cannot tell that the parameter block is not written
// through the other bindings, so it would reload it in the inner loops.
uint a_base, a_m, a_k, b_base, b_k, b_n, o_base, o_m, o_n, c_base, c_m, c_n;
bool has_bias;

float load_a(uint m, uint k) { return TO_F(a[a_base + m * a_m + k * a_k]); }
float load_b(uint k, uint n) { return TO_F(b[b_base + k * b_k + n * b_n]); }
void store_c(uint m, uint n, float value) {
  if (has_bias) value += TO_F(bias[c_base + m * c_m + n * c_n]);
  o[o_base + m * o_m + n * o_n] = FROM_F(value);
}

#include "gemm_tile.glsl"
layout(local_size_x = GEMM_TS, local_size_y = GEMM_TS) in;

// ParamBlock::mode bit kSmallProduct in ops_matmul.cpp.
const bool SMALL_PRODUCT = (MODE & 0x20000u) != 0u;

// Element offset of batch `batch` (row-major over the output's batch shape) in tensor k.
uint batch_offset(uint k, uint batch) {
  uint offset = P.t[k].offset;
  for (int d = int(P.u[5]) - 1; d >= 0; --d) {
    const uint size = uint(P.t[3].shape[d]);
    offset += (batch % size) * uint(P.t[k].strides[d]);
    batch /= size;
  }
  return offset;
}

// Columns of the output one invocation of the per-element kernel computes (SMALL_COLUMNS in
// ops_matmul.cpp): the index arithmetic (integer divisions, which CPU drivers run lane by lane)
// and A's loads are shared by that many outputs.
#define SMALL_COLUMNS 8u

// Each invocation computes up to SMALL_COLUMNS neighbouring outputs of one row, grid-stride over
// the P.count (batch, m, column chunk) items. Neighbouring invocations take neighbouring chunks.
void small_product(uint M, uint N, uint K) {
  const uint chunks = (N + SMALL_COLUMNS - 1u) / SMALL_COLUMNS;
  const uint threads = gl_NumWorkGroups.x * GEMM_THREADS;
  for (uint i = gl_WorkGroupID.x * GEMM_THREADS + gl_LocalInvocationIndex; i < P.count;
       i += threads) {
    const uint row = i / chunks;
    const uint n0 = (i - row * chunks) * SMALL_COLUMNS;
    const uint batch = row / M, m = row - batch * M;
    a_base = batch_offset(0u, batch);
    b_base = batch_offset(1u, batch);
    // Constant trip counts, so that the compiler unrolls them and keeps acc in registers; columns
    // past N are computed from zeros and not stored.
    float acc[SMALL_COLUMNS];
    for (uint j = 0u; j < SMALL_COLUMNS; ++j) acc[j] = 0.0;
    for (uint k = 0u; k < K; ++k) {
      const float a_mk = load_a(m, k);
      for (uint j = 0u; j < SMALL_COLUMNS; ++j) {
        acc[j] += n0 + j < N ? a_mk * load_b(k, n0 + j) : 0.0;
      }
    }
    c_base = batch_offset(2u, batch);
    o_base = batch_offset(3u, batch);
    for (uint j = 0u; j < SMALL_COLUMNS; ++j) {
      if (n0 + j < N) store_c(m, n0 + j, acc[j]);
    }
  }
}

void main() {
  const uint M = P.u[1], N = P.u[2], K = P.u[3], batches = P.u[4], r = P.u[5];
  has_bias = P.u[0] != 0u;
  a_m = uint(P.t[0].strides[r]);
  a_k = uint(P.t[0].strides[r + 1u]);
  b_k = uint(P.t[1].strides[r]);
  b_n = uint(P.t[1].strides[r + 1u]);
  c_m = uint(P.t[2].strides[r]);
  c_n = uint(P.t[2].strides[r + 1u]);
  o_m = uint(P.t[3].strides[r]);
  o_n = uint(P.t[3].strides[r + 1u]);
  if (SMALL_PRODUCT) {
    small_product(M, N, K);
    return;
  }
  for (uint batch = gl_WorkGroupID.z; batch < batches; batch += gl_NumWorkGroups.z) {
    a_base = batch_offset(0u, batch);
    b_base = batch_offset(1u, batch);
    c_base = batch_offset(2u, batch);
    o_base = batch_offset(3u, batch);
    gemm_all_tiles(M, N, K);
  }
}
