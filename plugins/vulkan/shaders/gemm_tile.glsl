// The tiled GEMM kernel shared by MATMUL and the implicit-GEMM convolutions:
// C[m, n] = sum_k A[m, k] * B[k, n] for one BM x BN tile, through shared memory.
//
// An 8x8 workgroup computes a 64x64 tile, each invocation an 8x8 sub-block (strided by 8, so that
// neighbouring invocations read neighbouring shared-memory words). Few invocations and a deep BK
// keep the number of barriers low, which matters most on CPU drivers (lavapipe runs each barrier
// as a coroutine switch): 0.83 GFLOP/s there, against 0.33 for a 16x16 workgroup of 4x4 blocks.
//
// The including shader defines, before including this file:
//   float load_a(uint m, uint k);               called only with m < M, k < K
//   float load_b(uint k, uint n);               called only with k < K, n < N
//   void store_c(uint m, uint n, float value);  called only with m < M, n < N
// and declares layout(local_size_x = GEMM_TS, local_size_y = GEMM_TS) in.

//
// GEMM_COOPMAT (the *.coopmat.MxNxK modules, f16 on tensor cores) replaces the kernel below by
// gemm_coopmat.glsl's, with the same contract.
//
// GEMM_WIDE (the *.wide modules, for GPUs: ops_matmul.cpp) makes the workgroup 16x16
// computing a 128x128 tile with BK = 16: four times the outputs per workgroup and twice the
// multiply-adds per shared-memory word, in the same 16.5 KiB of shared memory, for devices that
// run many invocations per core and want fewer, fuller workgroups.
#ifdef GEMM_COOPMAT
#include "gemm_coopmat.glsl"
#else

#ifdef GEMM_WIDE
#define GEMM_BK 16
#define GEMM_TS 16  // invocations per side of the workgroup
#else
#define GEMM_BK 32
#define GEMM_TS 8
#endif
#define GEMM_TM 8  // outputs per invocation and side: GEMM_BM = GEMM_TS * GEMM_TM
#define GEMM_BM (GEMM_TS * GEMM_TM)
#define GEMM_BN (GEMM_TS * GEMM_TM)
#define GEMM_THREADS (GEMM_TS * GEMM_TS)

shared float a_tile[GEMM_BK][GEMM_BM + 1];
shared float b_tile[GEMM_BK][GEMM_BN + 1];

// Computes and stores the tile whose first row is m0 and first column n0. Every invocation of the
// workgroup must call it with the same arguments (it contains barriers).
void gemm_tile(uint m0, uint n0, uint M, uint N, uint K) {
  const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  const uint tid = ty * GEMM_TS + tx;
  float acc[GEMM_TM][GEMM_TM];
  for (int i = 0; i < GEMM_TM; ++i)
    for (int j = 0; j < GEMM_TM; ++j) acc[i][j] = 0.0;
  for (uint k0 = 0u; k0 < K; k0 += GEMM_BK) {
    for (uint l = 0u; l < (GEMM_BM * GEMM_BK) / GEMM_THREADS; ++l) {
      const uint e = tid + l * GEMM_THREADS;
      const uint am = e / GEMM_BK, ak = e % GEMM_BK;  // A tile: BM rows x BK columns
      const uint gm = m0 + am, gk = k0 + ak;
      a_tile[ak][am] = (gm < M && gk < K) ? load_a(gm, gk) : 0.0;
      const uint bk = e / GEMM_BN, bn = e % GEMM_BN;  // B tile: BK rows x BN columns
      const uint hk = k0 + bk, hn = n0 + bn;
      b_tile[bk][bn] = (hk < K && hn < N) ? load_b(hk, hn) : 0.0;
    }
    barrier();
    for (uint kk = 0u; kk < GEMM_BK; ++kk) {
      float av[GEMM_TM], bv[GEMM_TM];
      for (int i = 0; i < GEMM_TM; ++i) av[i] = a_tile[kk][ty + GEMM_TS * uint(i)];
      for (int j = 0; j < GEMM_TM; ++j) bv[j] = b_tile[kk][tx + GEMM_TS * uint(j)];
      for (int i = 0; i < GEMM_TM; ++i)
        for (int j = 0; j < GEMM_TM; ++j) acc[i][j] += av[i] * bv[j];
    }
    barrier();
  }
  for (int i = 0; i < GEMM_TM; ++i) {
    const uint gm = m0 + ty + GEMM_TS * uint(i);
    if (gm >= M) continue;
    for (int j = 0; j < GEMM_TM; ++j) {
      const uint gn = n0 + tx + GEMM_TS * uint(j);
      if (gn < N) store_c(gm, gn, acc[i][j]);
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

#endif  // GEMM_COOPMAT
