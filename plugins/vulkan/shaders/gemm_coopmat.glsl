// The tiled GEMM of gemm_tile.glsl on cooperative matrices (tensor cores), for f16 data with f32
// accumulation: gemm_tile.glsl includes this file instead of its own kernel when the module is
// compiled with GEMM_COOPMAT (and CM_M, CM_N, CM_K, the fragment shape), so MATMUL and the three
// implicit-GEMM convolutions share it. Same contract: the including shader defines load_a, load_b
// and store_c (gemm_tile.glsl) and declares layout(local_size_x = GEMM_TS, local_size_y =
// GEMM_TS) in; common.glsl enables the extensions.
//
// Built on GL_NV_cooperative_matrix, the extension Debian 12's glslc compiles (the KHR one needs a
// newer toolchain): NVIDIA drivers expose it on every GPU with tensor cores. The host picks the
// fragment shape from the device's vkGetPhysicalDeviceCooperativeMatrixPropertiesNV list and
// requires full 32-wide subgroups (device.cpp, pipeline_cache.cpp).
//
// A 16x16 workgroup (8 subgroups of 32) computes a 128 x 128 tile of C:
// - each K step of 32 copies an A tile (128 x 32) and a B tile (32 x 128) into shared memory as
//   f16 through load_a / load_b (zero-padded at the edges, so every shape and stride works); the
//   next step's elements are loaded into registers while the fragments of this one multiply;
// - subgroup s owns rows 64 * (s / 4) .. +64 and columns 32 * (s % 4) .. +32: a grid of
//   (64 / CM_M) x (32 / CM_N) accumulator fragments in f32;
// - at the end each fragment goes through a per-subgroup shared scratch to store_c, element by
//   element within M x N (the bias, the epilogue and the rounding to f16 are store_c's).

#define GEMM_TS 16  // invocations per side of the workgroup
#define GEMM_BM 128
#define GEMM_BN 128
#define GEMM_BK 32
#define GEMM_THREADS (GEMM_TS * GEMM_TS)
#define GEMM_SUBGROUP_M 64  // rows of the tile one subgroup owns
#define GEMM_SUBGROUP_N 32  // columns
#define GEMM_FRAGS_M (GEMM_SUBGROUP_M / CM_M)
#define GEMM_FRAGS_N (GEMM_SUBGROUP_N / CM_N)
// Row strides of the shared tiles in f16 elements: multiples of 8 (16 bytes), as cooperative
// matrix loads want, and not of 64, so that neighbouring rows start in other banks.
#define GEMM_A_STRIDE (GEMM_BK + 8)
#define GEMM_B_STRIDE (GEMM_BN + 8)
#define GEMM_A_PER_THREAD ((GEMM_BM * GEMM_BK) / GEMM_THREADS)
#define GEMM_B_PER_THREAD ((GEMM_BK * GEMM_BN) / GEMM_THREADS)

shared float16_t a_tile[GEMM_BM * GEMM_A_STRIDE];
shared float16_t b_tile[GEMM_BK * GEMM_B_STRIDE];
shared float out_scratch[(GEMM_THREADS / 32) * CM_M * CM_N];

// ParamBlock::mode bits (kRowsFastA, kColumnsFastB in op_context.h): which axis of A and of B
// has unit stride, so that neighbouring invocations read neighbouring elements when they fill
// the shared tiles.
const bool A_ROWS_FAST = (MODE & 0x40000u) != 0u;
const bool B_COLUMNS_FAST = (MODE & 0x80000u) != 0u;

// The tile-local (row, column) of the e-th element the workgroup copies of A (BM x BK) or B
// (BK x BN).
uvec2 a_position(uint e) {
  return A_ROWS_FAST ? uvec2(e % GEMM_BM, e / GEMM_BM) : uvec2(e / GEMM_BK, e % GEMM_BK);
}
uvec2 b_position(uint e) {
  return B_COLUMNS_FAST ? uvec2(e / GEMM_BN, e % GEMM_BN) : uvec2(e % GEMM_BK, e / GEMM_BK);
}

float16_t a_staged[GEMM_A_PER_THREAD];
float16_t b_staged[GEMM_B_PER_THREAD];

// This invocation's share of the tiles at (m0, n0, k0), into registers (0 beyond the edges). The
// values come from f16 storage, so the conversion back to f16 is exact.
void gemm_load(uint m0, uint n0, uint k0, uint M, uint N, uint K) {
  const uint tid = gl_LocalInvocationIndex;
  for (uint l = 0u; l < GEMM_A_PER_THREAD; ++l) {
    const uvec2 p = a_position(tid + l * GEMM_THREADS);
    const uint gm = m0 + p.x, gk = k0 + p.y;
    a_staged[l] = (gm < M && gk < K) ? float16_t(load_a(gm, gk)) : float16_t(0.0);
  }
  for (uint l = 0u; l < GEMM_B_PER_THREAD; ++l) {
    const uvec2 p = b_position(tid + l * GEMM_THREADS);
    const uint gk = k0 + p.x, gn = n0 + p.y;
    b_staged[l] = (gk < K && gn < N) ? float16_t(load_b(gk, gn)) : float16_t(0.0);
  }
}

void gemm_store_staged() {
  const uint tid = gl_LocalInvocationIndex;
  for (uint l = 0u; l < GEMM_A_PER_THREAD; ++l) {
    const uvec2 p = a_position(tid + l * GEMM_THREADS);
    a_tile[p.x * GEMM_A_STRIDE + p.y] = a_staged[l];
  }
  for (uint l = 0u; l < GEMM_B_PER_THREAD; ++l) {
    const uvec2 p = b_position(tid + l * GEMM_THREADS);
    b_tile[p.x * GEMM_B_STRIDE + p.y] = b_staged[l];
  }
}

// Computes and stores the tile whose first row is m0 and first column n0. Every invocation of the
// workgroup must call it with the same arguments (it contains barriers).
void gemm_tile(uint m0, uint n0, uint M, uint N, uint K) {
  const uint subgroup = gl_SubgroupID;
  const uint row0 = (subgroup / 4u) * GEMM_SUBGROUP_M, col0 = (subgroup % 4u) * GEMM_SUBGROUP_N;
  fcoopmatNV<32, gl_ScopeSubgroup, CM_M, CM_N> acc[GEMM_FRAGS_M][GEMM_FRAGS_N];
  for (int i = 0; i < GEMM_FRAGS_M; ++i) {
    for (int j = 0; j < GEMM_FRAGS_N; ++j) {
      acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, CM_M, CM_N>(0.0);
    }
  }
  gemm_load(m0, n0, 0u, M, N, K);
  for (uint k0 = 0u; k0 < K; k0 += GEMM_BK) {
    barrier();  // the previous step's fragments are loaded: the tiles may be overwritten
    gemm_store_staged();
    barrier();
    if (k0 + GEMM_BK < K) gemm_load(m0, n0, k0 + GEMM_BK, M, N, K);
    for (uint kk = 0u; kk < GEMM_BK; kk += CM_K) {
      fcoopmatNV<16, gl_ScopeSubgroup, CM_M, CM_K> a_frag[GEMM_FRAGS_M];
      fcoopmatNV<16, gl_ScopeSubgroup, CM_K, CM_N> b_frag[GEMM_FRAGS_N];
      for (int i = 0; i < GEMM_FRAGS_M; ++i) {
        coopMatLoadNV(a_frag[i], a_tile, (row0 + uint(i) * CM_M) * GEMM_A_STRIDE + kk,
                      GEMM_A_STRIDE, false);
      }
      for (int j = 0; j < GEMM_FRAGS_N; ++j) {
        coopMatLoadNV(b_frag[j], b_tile, kk * GEMM_B_STRIDE + col0 + uint(j) * CM_N, GEMM_B_STRIDE,
                      false);
      }
      for (int i = 0; i < GEMM_FRAGS_M; ++i) {
        for (int j = 0; j < GEMM_FRAGS_N; ++j) {
          acc[i][j] = coopMatMulAddNV(a_frag[i], b_frag[j], acc[i][j]);
        }
      }
    }
  }
  // Each fragment through the subgroup's scratch, element by element within bounds.
  const uint scratch = subgroup * (CM_M * CM_N);
  for (int i = 0; i < GEMM_FRAGS_M; ++i) {
    for (int j = 0; j < GEMM_FRAGS_N; ++j) {
      coopMatStoreNV(acc[i][j], out_scratch, scratch, CM_N, false);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      for (uint e = gl_SubgroupInvocationID; e < CM_M * CM_N; e += 32u) {
        const uint gm = m0 + row0 + uint(i) * CM_M + e / CM_N;
        const uint gn = n0 + col0 + uint(j) * CM_N + e % CM_N;
        if (gm < M && gn < N) store_c(gm, gn, out_scratch[scratch + e]);
      }
      subgroupBarrier();  // the scratch is read before the next fragment overwrites it
    }
  }
}

// Walks the tiles of an M x N result; workgroups stride over them, so any size fits the grid.
void gemm_all_tiles(uint M, uint N, uint K) {
  const uint tiles_m = (M + GEMM_BM - 1u) / GEMM_BM, tiles_n = (N + GEMM_BN - 1u) / GEMM_BN;
  for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
    for (uint tn = gl_WorkGroupID.x; tn < tiles_n; tn += gl_NumWorkGroups.x) {
      gemm_tile(tm * GEMM_BM, tn * GEMM_BN, M, N, K);
    }
  }
}
