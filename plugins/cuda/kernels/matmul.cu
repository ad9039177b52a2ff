// Tiled shared-memory matmul with f32 accumulation: the fallback when cuBLASLt is missing or
// cannot take the layout (any strides, broadcast batches, a broadcast bias in the epilogue).
#include "common.cuh"

namespace {
constexpr int kTileM = 64;
constexpr int kTileN = 64;
constexpr int kTileK = 16;
constexpr int kThreads = 256;  // 16 x 16 threads, 4 x 4 outputs each
}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads) sy_matmul_tiled(SyMatmulArgs a) {
  using namespace sy;
  __shared__ float a_tile[kTileK][kTileM + 4];
  __shared__ float b_tile[kTileK][kTileN + 4];
  const int64_t batch = a.batch_begin + blockIdx.z;
  const int64_t a_base = offset_of(a.a_batch, batch);
  const int64_t b_base = offset_of(a.b_batch, batch);
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kTileM;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * kTileN;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  float acc[4][4] = {};
  for (int64_t k0 = 0; k0 < a.k; k0 += kTileK) {
    for (int e = threadIdx.x; e < kTileM * kTileK; e += kThreads) {
      const int kk = e % kTileK, mm = e / kTileK;  // consecutive threads walk k (row-major a)
      const int64_t m = m0 + mm, k = k0 + kk;
      a_tile[kk][mm] = (m < a.m && k < a.k)
                           ? load(a.a_batch, a_base + m * a.a_stride_m + k * a.a_stride_k)
                           : 0.0f;
    }
    for (int e = threadIdx.x; e < kTileN * kTileK; e += kThreads) {
      const int nn = e % kTileN, kk = e / kTileN;  // consecutive threads walk n (row-major b)
      const int64_t n = n0 + nn, k = k0 + kk;
      b_tile[kk][nn] = (n < a.n && k < a.k)
                           ? load(a.b_batch, b_base + k * a.b_stride_k + n * a.b_stride_n)
                           : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTileK; ++kk) {
      float av[4], bv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) av[i] = a_tile[kk][ty * 4 + i];
#pragma unroll
      for (int j = 0; j < 4; ++j) bv[j] = b_tile[kk][tx * 4 + j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += av[i] * bv[j];
    }
    __syncthreads();
  }
  const int64_t out_base = offset_of(a.out_batch, batch);
  const int64_t bias_base = a.has_bias ? offset_of(a.bias_batch, batch) : 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int64_t m = m0 + ty * 4 + i;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int64_t n = n0 + tx * 4 + j;
      if (m < a.m && n < a.n) {
        float v = acc[i][j];
        if (a.has_bias)
          v += load(a.bias_batch, bias_base + m * a.bias_stride_m + n * a.bias_stride_n);
        store(a.out_batch, out_base + m * a.out_stride_m + n * a.out_stride_n, v);
      }
    }
  }
}
