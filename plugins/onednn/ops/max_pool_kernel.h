// MAX_POOL2D and MAX_POOL2D_BACKWARD for 2x2 windows of stride 2 without padding (LeNet's and
// VGG's pools) over dense NCHW f32 planes, in AVX-512, with docs/ops.md's rules built in: a NaN
// in a window gives NaN, and the backward sends each window's gradient to its first maximum in
// row-major order, a NaN counting as one (the first NaN winning).
//
// oneDNN 2.6 pools NCHW through its own blocked copies, and its backward needs the forward's
// argmax workspace, which the ABI does not pass (it gives x), so the backward re-ran the forward
// in training mode first; figures, and the row widths this kernel is used for, in pool.cpp's
// direct_pool. Both ops are exact (no arithmetic): the same bits as oneDNN's path and the
// reference.
#pragma once

#include <cstdint>

namespace sy_onednn {

struct MaxPool2x2 {
  int64_t planes = 0;                    // N * C
  int64_t h = 0, w = 0, oh = 0, ow = 0;  // oh = h / 2, ow = w / 2
};

// Both need AVX-512F (cpu_has_avx512f()).

// y[plane, i, j] = max of x's 2x2 window at (2i, 2j). x: [planes, h, w], y: [planes, oh, ow],
// both dense.
void max_pool_2x2_f32(const MaxPool2x2& p, const float* x, float* y, int threads);

// grad_x (dense, x's shape, overwritten): each window's grad_y at its first maximum, zero
// elsewhere (the rows and column no window covers too).
void max_pool_2x2_backward_f32(const MaxPool2x2& p, const float* grad_y, const float* x,
                               float* grad_x, int threads);

}  // namespace sy_onednn
