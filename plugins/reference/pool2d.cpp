// MAX_POOL2D and AVG_POOL2D (NCHW) with their backward ops.
//
// Each window covers one channel plane. Padding never wins a max (it is -inf); the average
// divides by the full window or by its in-range part, as count_include_pad says.
#include <cmath>
#include <vector>

#include "ops.h"

namespace sy_reference {
namespace {

struct PoolGeometry {
  int64_t planes = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;

  int64_t row_start(int64_t i) const { return i * stride_h - pad_h; }
  int64_t col_start(int64_t j) const { return j * stride_w - pad_w; }
  // The window of output (i, j) clipped to the input plane: rows [r0, r1), columns [c0, c1).
  void clipped(int64_t i, int64_t j, int64_t& r0, int64_t& r1, int64_t& c0, int64_t& c1) const {
    r0 = row_start(i) < 0 ? 0 : row_start(i);
    r1 = row_start(i) + kernel_h > h ? h : row_start(i) + kernel_h;
    c0 = col_start(j) < 0 ? 0 : col_start(j);
    c1 = col_start(j) + kernel_w > w ? w : col_start(j) + kernel_w;
  }
};

// Checks the params and that x [N, C, H, W] and y [N, C, OH, OW] match them.
PoolGeometry make_geometry(const OpContext& ctx, const TensorRef& x, const TensorRef& y) {
  const sy_pool2d_params& p = ctx.params().pool2d;
  require_rank(ctx, "x/grad_x", x, 4, "[N, C, H, W]");
  require_rank(ctx, "y/grad_y", y, 4, "[N, C, OH, OW]");
  if (p.kernel_h < 1 || p.kernel_w < 1 || p.stride_h < 1 || p.stride_w < 1 || p.pad_h < 0 ||
      p.pad_w < 0 || p.pad_h > p.kernel_h / 2 || p.pad_w > p.kernel_w / 2) {
    fail(ctx, "needs kernel >= 1, stride >= 1 and 0 <= padding <= kernel / 2, got kernel " +
                  std::to_string(p.kernel_h) + "x" + std::to_string(p.kernel_w) + ", stride " +
                  std::to_string(p.stride_h) + "x" + std::to_string(p.stride_w) + ", padding " +
                  std::to_string(p.pad_h) + "x" + std::to_string(p.pad_w));
  }
  PoolGeometry g{x.shape[0] * x.shape[1],
                 x.shape[2],
                 x.shape[3],
                 0,
                 0,
                 p.kernel_h,
                 p.kernel_w,
                 p.stride_h,
                 p.stride_w,
                 p.pad_h,
                 p.pad_w};
  const int64_t oh_numerator = g.h + 2 * g.pad_h - g.kernel_h;
  const int64_t ow_numerator = g.w + 2 * g.pad_w - g.kernel_w;
  if (oh_numerator < 0 || ow_numerator < 0) {
    fail(ctx, "the " + std::to_string(g.kernel_h) + "x" + std::to_string(g.kernel_w) +
                  " window does not fit x " + x.shape.to_string() + " with this padding");
  }
  g.oh = oh_numerator / g.stride_h + 1;
  g.ow = ow_numerator / g.stride_w + 1;
  require_shape(ctx, "y/grad_y", y, Shape::of({x.shape[0], x.shape[1], g.oh, g.ow}));
  return g;
}

// The plane index of the window's maximum: the first in row-major order; the first NaN wins.
int64_t window_argmax(const PoolGeometry& g, const float* plane, int64_t i, int64_t j) {
  int64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
  g.clipped(i, j, r0, r1, c0, c1);
  int64_t best = r0 * g.w + c0;
  for (int64_t r = r0; r < r1; ++r) {
    for (int64_t c = c0; c < c1; ++c) {
      const float value = plane[r * g.w + c];
      if (std::isnan(value)) return r * g.w + c;
      if (value > plane[best]) best = r * g.w + c;
    }
  }
  return best;
}

double avg_divisor(const OpContext& ctx, const PoolGeometry& g, int64_t i, int64_t j) {
  if (ctx.params().pool2d.count_include_pad) return static_cast<double>(g.kernel_h * g.kernel_w);
  int64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
  g.clipped(i, j, r0, r1, c0, c1);
  return static_cast<double>((r1 - r0) * (c1 - c0));
}

void check_dtypes(const OpContext& ctx) {
  const TensorRef first = ctx.input(0);
  require_float(ctx, "input 0", first);
  for (uint32_t k = 1; k < ctx.call.num_inputs; ++k) {
    require_same_dtype(ctx, "input", ctx.input(k), "input 0", first);
  }
  require_same_dtype(ctx, "output", ctx.output(0), "input 0", first);
}

}  // namespace

void run_max_pool2d(const OpContext& ctx) {
  require_io_counts(ctx, 1, 1);
  check_dtypes(ctx);
  const PoolGeometry g = make_geometry(ctx, ctx.input(0), ctx.output(0));
  const std::vector<float> x = read_f32(ctx.input(0));
  std::vector<float> y(static_cast<size_t>(g.planes * g.oh * g.ow));
  for (int64_t p = 0; p < g.planes; ++p) {
    const float* plane = x.data() + p * g.h * g.w;
    for (int64_t i = 0; i < g.oh; ++i) {
      for (int64_t j = 0; j < g.ow; ++j)
        y[(p * g.oh + i) * g.ow + j] = plane[window_argmax(g, plane, i, j)];
    }
  }
  write_f32(ctx.output(0), y);
}

void run_max_pool2d_backward(const OpContext& ctx) {
  require_io_counts(ctx, 2, 1);
  check_dtypes(ctx);
  const TensorRef grad_y = ctx.input(0);
  const TensorRef x = ctx.input(1);
  const TensorRef grad_x = ctx.output(0);
  const PoolGeometry g = make_geometry(ctx, x, grad_y);
  require_shape(ctx, "grad_x", grad_x, x.shape);
  const std::vector<float> gy = read_f32(grad_y);
  const std::vector<float> xv = read_f32(x);
  std::vector<float> gx(xv.size(), 0.0f);
  for (int64_t p = 0; p < g.planes; ++p) {
    const float* plane = xv.data() + p * g.h * g.w;
    for (int64_t i = 0; i < g.oh; ++i) {
      for (int64_t j = 0; j < g.ow; ++j) {
        gx[p * g.h * g.w + window_argmax(g, plane, i, j)] += gy[(p * g.oh + i) * g.ow + j];
      }
    }
  }
  write_f32(grad_x, gx);
}

void run_avg_pool2d(const OpContext& ctx) {
  require_io_counts(ctx, 1, 1);
  check_dtypes(ctx);
  const PoolGeometry g = make_geometry(ctx, ctx.input(0), ctx.output(0));
  const std::vector<float> x = read_f32(ctx.input(0));
  std::vector<float> y(static_cast<size_t>(g.planes * g.oh * g.ow));
  for (int64_t p = 0; p < g.planes; ++p) {
    const float* plane = x.data() + p * g.h * g.w;
    for (int64_t i = 0; i < g.oh; ++i) {
      for (int64_t j = 0; j < g.ow; ++j) {
        int64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
        g.clipped(i, j, r0, r1, c0, c1);
        double sum = 0.0;
        for (int64_t r = r0; r < r1; ++r) {
          for (int64_t c = c0; c < c1; ++c) sum += static_cast<double>(plane[r * g.w + c]);
        }
        y[(p * g.oh + i) * g.ow + j] = static_cast<float>(sum / avg_divisor(ctx, g, i, j));
      }
    }
  }
  write_f32(ctx.output(0), y);
}

void run_avg_pool2d_backward(const OpContext& ctx) {
  require_io_counts(ctx, 1, 1);
  check_dtypes(ctx);
  const TensorRef grad_y = ctx.input(0);
  const TensorRef grad_x = ctx.output(0);
  const PoolGeometry g = make_geometry(ctx, grad_x, grad_y);
  const std::vector<float> gy = read_f32(grad_y);
  std::vector<double> gx(static_cast<size_t>(grad_x.shape.count()), 0.0);
  for (int64_t p = 0; p < g.planes; ++p) {
    for (int64_t i = 0; i < g.oh; ++i) {
      for (int64_t j = 0; j < g.ow; ++j) {
        const double share =
            static_cast<double>(gy[(p * g.oh + i) * g.ow + j]) / avg_divisor(ctx, g, i, j);
        int64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
        g.clipped(i, j, r0, r1, c0, c1);
        for (int64_t r = r0; r < r1; ++r) {
          for (int64_t c = c0; c < c1; ++c) gx[p * g.h * g.w + r * g.w + c] += share;
        }
      }
    }
  }
  write_f32(grad_x, std::vector<float>(gx.begin(), gx.end()));
}

}  // namespace sy_reference
