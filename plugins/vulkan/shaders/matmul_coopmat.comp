// MATMUL on cooperative matrices (tensor cores), f16 inputs with f32 accumulation:
// out[b, m, n] = sum_k A[b, m, k] * B[b, k, n] (+ bias[b, m, n]). Same bindings, parameter block and
// operand views as matmul.comp, which serves every product this kernel does not (ops_matmul.cpp
// chooses; docs/ops.md, MATMUL on vulkan).
//
// Built on GL_NV_cooperative_matrix, the extension Debian 12's glslc compiles (the KHR one needs a
// newer toolchain): NVIDIA drivers expose it on every GPU with tensor cores. The host compiles one
// module per fragment shape (CM_M x CM_N x CM_K, from the device's
// vkGetPhysicalDeviceCooperativeMatrixPropertiesNV list) and requires full 32-wide subgroups.
//
// A 256-invocation workgroup (8 subgroups of 32) computes a 128 x 128 tile of the output:
// - each K step of 32 copies an A tile (128 x 32) and a B tile (32 x 128) from the operands'
//   strided views into shared memory as f16, zero-padded at the edges, so every shape, transpose
//   and broadcast works; the next step's elements are loaded into registers while the cooperative
//   matrices of this one are multiplied;
// - subgroup s (2 x 4 of them) owns rows 64 * (s / 4) .. +64 and columns 32 * (s % 4) .. +32: a
//   grid of (64 / CM_M) x (32 / CM_N) accumulator fragments in f32;
// - at the end each fragment goes through a per-subgroup shared scratch, where the bias is added
//   and the value rounded to f16 element by element, within the output's bounds.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#include "common.glsl"

#ifndef CM_M
#define CM_M 16
#endif
#ifndef CM_N
#define CM_N 16
#endif
#ifndef CM_K
#define CM_K 16
#endif

// The operands as f16 values (copied bit for bit into the tiles); bias and output as the 16-bit
// words of common.glsl, converted with its round-to-nearest-even.
layout(std430, set = 0, binding = 1) readonly buffer A { float16_t a[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { float16_t b[]; };
layout(std430, set = 0, binding = 3) readonly buffer Bias { STORAGE_T bias[]; };
layout(std430, set = 0, binding = 4) writeonly buffer O { STORAGE_T o[]; };

#define TILE_M 128
#define TILE_N 128
#define TILE_K 32
#define SUBGROUP_M 64  // rows of the tile one subgroup owns
#define SUBGROUP_N 32  // columns
#define THREADS 256
#define FRAGS_M (SUBGROUP_M / CM_M)
#define FRAGS_N (SUBGROUP_N / CM_N)
// Row strides of the shared tiles in f16 elements: multiples of 8 (16 bytes), as cooperative
// matrix loads want, and not of 64, so that neighbouring rows start in other banks.
#define A_STRIDE (TILE_K + 8)
#define B_STRIDE (TILE_N + 8)
#define A_PER_THREAD ((TILE_M * TILE_K) / THREADS)
#define B_PER_THREAD ((TILE_K * TILE_N) / THREADS)

layout(local_size_x = THREADS) in;

shared float16_t a_tile[TILE_M * A_STRIDE];
shared float16_t b_tile[TILE_K * B_STRIDE];
shared float out_scratch[(THREADS / 32) * CM_M * CM_N];

// ParamBlock::mode bits in ops_matmul.cpp: which axis of each operand has unit stride, so that
// neighbouring invocations read neighbouring elements when they fill the shared tiles.
const bool A_ROWS_FAST = (MODE & 0x40000u) != 0u;  // A's m axis has stride 1 (a transposed A)
const bool B_COLUMNS_FAST = (MODE & 0x80000u) != 0u;  // B's n axis has stride 1

uint a_base, a_m, a_k, b_base, b_k, b_n, o_base, o_m, o_n, c_base, c_m, c_n;
bool has_bias;

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

// The tile-local (row, column) of the e-th element this workgroup copies of A (TILE_M x TILE_K)
// or B (TILE_K x TILE_N), ordered so that neighbouring e are neighbours in memory.
uvec2 a_position(uint e) {
  return A_ROWS_FAST ? uvec2(e % TILE_M, e / TILE_M) : uvec2(e / TILE_K, e % TILE_K);
}
uvec2 b_position(uint e) {
  return B_COLUMNS_FAST ? uvec2(e / TILE_N, e % TILE_N) : uvec2(e % TILE_K, e / TILE_K);
}

float16_t a_staged[A_PER_THREAD];
float16_t b_staged[B_PER_THREAD];

// Loads this invocation's share of the tiles at (m0, n0, k0) into registers (0 beyond the edges).
void load_tiles(uint m0, uint n0, uint k0, uint M, uint N, uint K) {
  const uint tid = gl_LocalInvocationIndex;
  for (uint l = 0u; l < A_PER_THREAD; ++l) {
    const uvec2 p = a_position(tid + l * THREADS);
    const uint gm = m0 + p.x, gk = k0 + p.y;
    a_staged[l] = (gm < M && gk < K) ? a[a_base + gm * a_m + gk * a_k] : float16_t(0.0);
  }
  for (uint l = 0u; l < B_PER_THREAD; ++l) {
    const uvec2 p = b_position(tid + l * THREADS);
    const uint gk = k0 + p.x, gn = n0 + p.y;
    b_staged[l] = (gk < K && gn < N) ? b[b_base + gk * b_k + gn * b_n] : float16_t(0.0);
  }
}

void store_tiles() {
  const uint tid = gl_LocalInvocationIndex;
  for (uint l = 0u; l < A_PER_THREAD; ++l) {
    const uvec2 p = a_position(tid + l * THREADS);
    a_tile[p.x * A_STRIDE + p.y] = a_staged[l];
  }
  for (uint l = 0u; l < B_PER_THREAD; ++l) {
    const uvec2 p = b_position(tid + l * THREADS);
    b_tile[p.x * B_STRIDE + p.y] = b_staged[l];
  }
}

void tile(uint m0, uint n0, uint M, uint N, uint K) {
  const uint subgroup = gl_SubgroupID;
  const uint row0 = (subgroup / 4u) * SUBGROUP_M, col0 = (subgroup % 4u) * SUBGROUP_N;
  fcoopmatNV<32, gl_ScopeSubgroup, CM_M, CM_N> acc[FRAGS_M][FRAGS_N];
  for (int i = 0; i < FRAGS_M; ++i) {
    for (int j = 0; j < FRAGS_N; ++j) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, CM_M, CM_N>(0.0);
  }
  load_tiles(m0, n0, 0u, M, N, K);
  for (uint k0 = 0u; k0 < K; k0 += TILE_K) {
    barrier();  // the previous step's fragments are loaded: the tiles may be overwritten
    store_tiles();
    barrier();
    if (k0 + TILE_K < K) load_tiles(m0, n0, k0 + TILE_K, M, N, K);
    for (uint kk = 0u; kk < TILE_K; kk += CM_K) {
      fcoopmatNV<16, gl_ScopeSubgroup, CM_M, CM_K> a_frag[FRAGS_M];
      fcoopmatNV<16, gl_ScopeSubgroup, CM_K, CM_N> b_frag[FRAGS_N];
      for (int i = 0; i < FRAGS_M; ++i) {
        coopMatLoadNV(a_frag[i], a_tile, (row0 + uint(i) * CM_M) * A_STRIDE + kk, A_STRIDE, false);
      }
      for (int j = 0; j < FRAGS_N; ++j) {
        coopMatLoadNV(b_frag[j], b_tile, kk * B_STRIDE + col0 + uint(j) * CM_N, B_STRIDE, false);
      }
      for (int i = 0; i < FRAGS_M; ++i) {
        for (int j = 0; j < FRAGS_N; ++j) acc[i][j] = coopMatMulAddNV(a_frag[i], b_frag[j], acc[i][j]);
      }
    }
  }
  // Each fragment through the subgroup's scratch: bias, rounding and bounds element by element.
  const uint scratch = subgroup * (CM_M * CM_N);
  for (int i = 0; i < FRAGS_M; ++i) {
    for (int j = 0; j < FRAGS_N; ++j) {
      coopMatStoreNV(acc[i][j], out_scratch, scratch, CM_N, false);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      for (uint e = gl_SubgroupInvocationID; e < CM_M * CM_N; e += 32u) {
        const uint gm = m0 + row0 + uint(i) * CM_M + e / CM_N;
        const uint gn = n0 + col0 + uint(j) * CM_N + e % CM_N;
        if (gm < M && gn < N) {
          float value = out_scratch[scratch + e];
          if (has_bias) value += TO_F(bias[c_base + gm * c_m + gn * c_n]);
          o[o_base + gm * o_m + gn * o_n] = FROM_F(value);
        }
      }
      subgroupBarrier();  // the scratch is read before the next fragment overwrites it
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
  const uint tiles_m = (M + TILE_M - 1u) / TILE_M, tiles_n = (N + TILE_N - 1u) / TILE_N;
  for (uint batch = gl_WorkGroupID.z; batch < batches; batch += gl_NumWorkGroups.z) {
    a_base = batch_offset(0u, batch);
    b_base = batch_offset(1u, batch);
    c_base = batch_offset(2u, batch);
    o_base = batch_offset(3u, batch);
    for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
      for (uint tn = gl_WorkGroupID.x; tn < tiles_n; tn += gl_NumWorkGroups.x) {
        tile(tm * TILE_M, tn * TILE_N, M, N, K);
      }
    }
  }
}
