#include "ops/gemv.h"

#include <algorithm>
#include <cstring>

#include "ops/strided_loop.h"
#include "ops/vector_clones.h"

namespace sy_onednn {
namespace {

constexpr int kLanes = 16;  // partial sums per dot product: one AVX-512 register of floats
constexpr int kBlock = 4;   // weight rows read together, sharing each load of x

// kLanes floats; loaded and stored unaligned.
typedef float Lanes __attribute__((vector_size(kLanes * sizeof(float))));

// Written out at each use: a function returning Lanes would change its ABI with the clone's ISA.
#define SY_LOAD_LANES(v, pointer) std::memcpy(&(v), (pointer), sizeof(Lanes))

// Outputs [first, last) of every row, kRows rows. Each dot product keeps kLanes partial sums
// (lane l sums k = l, l + kLanes, ...) in registers, then adds the lanes in order and the tail.
template <int kRows>
SY_VECTOR_CLONES void gemv_range(const GemvProblem& p, int64_t first, int64_t last) {
  const int64_t k_main = p.k - p.k % kLanes;
  const float* x[kRows];
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) x[r] = p.x + r * p.x_row;
  for (int64_t j0 = first; j0 < last; j0 += kBlock) {
    const int block = static_cast<int>(std::min<int64_t>(kBlock, last - j0));
    // A short last block reads its last row again rather than past the matrix.
    const float* const w0 = p.w + j0 * p.w_row;
    const float* const w1 = p.w + (j0 + std::min(1, block - 1)) * p.w_row;
    const float* const w2 = p.w + (j0 + std::min(2, block - 1)) * p.w_row;
    const float* const w3 = p.w + (j0 + std::min(3, block - 1)) * p.w_row;
    Lanes acc[kRows][kBlock] = {};
    for (int64_t k = 0; k < k_main; k += kLanes) {
      Lanes b0, b1, b2, b3;
      SY_LOAD_LANES(b0, w0 + k);
      SY_LOAD_LANES(b1, w1 + k);
      SY_LOAD_LANES(b2, w2 + k);
      SY_LOAD_LANES(b3, w3 + k);
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        Lanes a;
        SY_LOAD_LANES(a, x[r] + k);
        acc[r][0] += a * b0;
        acc[r][1] += a * b1;
        acc[r][2] += a * b2;
        acc[r][3] += a * b3;
      }
    }
    const float* const w[kBlock] = {w0, w1, w2, w3};
    for (int r = 0; r < kRows; ++r) {
      for (int b = 0; b < block; ++b) {
        float sum = 0.0f;
        for (int l = 0; l < kLanes; ++l) sum += acc[r][b][l];
        for (int64_t k = k_main; k < p.k; ++k) sum += x[r][k] * w[b][k];
        const int64_t j = j0 + b;
        if (p.bias != nullptr) sum += p.bias[j * p.bias_stride];
        p.y[r * p.y_row + j * p.y_col] = sum;
      }
    }
  }
}

#undef SY_LOAD_LANES

}  // namespace

void gemv_rows_f32(const GemvProblem& p, int threads) {
  if (p.rows <= 0 || p.n <= 0) return;
  // Ranges of whole blocks, so that a thread count never changes which rows are read together.
  const int64_t blocks = (p.n + kBlock - 1) / kBlock;
  parallel_ranges(blocks, threads, [&](int64_t first, int64_t last) {
    const int64_t begin = first * kBlock, end = std::min(p.n, last * kBlock);
    for (int64_t r0 = 0; r0 < p.rows; r0 += kGemvMaxRows) {
      GemvProblem part = p;
      part.x = p.x + r0 * p.x_row;
      part.y = p.y + r0 * p.y_row;
      switch (std::min<int64_t>(kGemvMaxRows, p.rows - r0)) {
        case 1:
          gemv_range<1>(part, begin, end);
          break;
        case 2:
          gemv_range<2>(part, begin, end);
          break;
        case 3:
          gemv_range<3>(part, begin, end);
          break;
        default:
          gemv_range<4>(part, begin, end);
          break;
      }
    }
  });
}

}  // namespace sy_onednn
