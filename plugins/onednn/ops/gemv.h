// Products of a few rows with a matrix stored as rows of K contiguous values: y = x w^T (+ bias),
// as dot products that stream w once. A [1, 1280] x [1000, 1280]^T classifier, the last layer of
// MobileNetV2 and EfficientNet at batch 1, took 420 us in oneDNN 2.6's matmul (its packed-weight
// kernel) with the weights out of cache, against 175 for OpenBLAS's gemv, on a 2-core Zen 4.
#pragma once

#include <cstdint>

namespace sy_onednn {

// Rows at most this many: beyond, a product reuses each weight enough that oneDNN's blocked
// kernels win.
constexpr int64_t kGemvMaxRows = 4;

struct GemvProblem {
  const float* x = nullptr;  // rows x k, row r at x + r * x_row, unit stride along k
  int64_t x_row = 0;
  const float* w = nullptr;  // n x k, row j at w + j * w_row, unit stride along k
  int64_t w_row = 0;
  const float* bias = nullptr;  // n values at bias + j * bias_stride, or null
  int64_t bias_stride = 0;
  float* y = nullptr;  // rows x n: y + r * y_row + j * y_col
  int64_t y_row = 0, y_col = 1;
  int64_t rows = 0, n = 0, k = 0;
};

// y = x w^T + bias for rows <= kGemvMaxRows, split over n into `threads` ranges. Each output is
// summed in a fixed order whatever the thread count.
void gemv_rows_f32(const GemvProblem& p, int threads);

}  // namespace sy_onednn
