// LAYER_NORM over the last params.layer_norm.normalized_rank axes, and its backward op.
//
// Rows (one per leading index) are contiguous runs of the converted values; statistics and
// gradients are computed in double and rounded once.
#include <cmath>
#include <vector>

#include "ops.h"

namespace sy_reference {
namespace {

struct NormLayout {
  Shape leading;     // [L...]: the shape of mean and rstd
  Shape normalized;  // [D...]: the shape of gamma and beta
  int64_t rows = 0;
  int64_t row_size = 0;
};

NormLayout make_layout(const OpContext& ctx, const TensorRef& x) {
  const sy_layer_norm_params& p = ctx.params().layer_norm;
  if (p.normalized_rank < 1 || p.normalized_rank > x.shape.rank) {
    fail(ctx, "normalized_rank " + std::to_string(p.normalized_rank) + " must be in [1, " +
                  std::to_string(x.shape.rank) + "] for " + describe("x", x));
  }
  if (ctx.op == SY_OP_LAYER_NORM && !(p.epsilon > 0.0)) {
    fail(ctx, "epsilon must be > 0, got " + std::to_string(p.epsilon));
  }
  NormLayout layout;
  layout.leading.rank = x.shape.rank - p.normalized_rank;
  for (uint32_t axis = 0; axis < x.shape.rank; ++axis) {
    if (axis < layout.leading.rank) {
      layout.leading.dims[axis] = x.shape.dims[axis];
    } else {
      layout.normalized.dims[layout.normalized.rank++] = x.shape.dims[axis];
    }
  }
  layout.rows = layout.leading.count();
  layout.row_size = layout.normalized.count();
  if (layout.row_size == 0) fail(ctx, "the normalised axes of " + describe("x", x) + " are empty");
  return layout;
}

// mean and rstd may be stored as x's dtype or as f32.
void require_stat_dtype(const OpContext& ctx, const char* role, const TensorRef& stat,
                        const TensorRef& x) {
  if (stat.dtype != x.dtype && stat.dtype != SY_DTYPE_F32) {
    fail(ctx, describe(role, stat) + " must have the dtype of " + describe("x", x) + " or f32");
  }
}

}  // namespace

void run_layer_norm(const OpContext& ctx) {
  require_io_counts(ctx, 3, 3);
  const TensorRef x = ctx.input(0);
  require_float(ctx, "x", x);
  const NormLayout layout = make_layout(ctx, x);
  const char* roles[] = {"gamma", "beta", "y", "mean", "rstd"};
  const TensorRef tensors[] = {ctx.input(1), ctx.input(2), ctx.output(0), ctx.output(1),
                               ctx.output(2)};
  const Shape shapes[] = {layout.normalized, layout.normalized, x.shape, layout.leading,
                          layout.leading};
  for (int k = 0; k < 5; ++k) {
    if (k < 3) require_same_dtype(ctx, roles[k], tensors[k], "x", x);
    if (k >= 3) require_stat_dtype(ctx, roles[k], tensors[k], x);
    require_shape(ctx, roles[k], tensors[k], shapes[k]);
  }
  const std::vector<float> xv = read_f32(x);
  const std::vector<float> gamma = read_f32(tensors[0]);
  const std::vector<float> beta = read_f32(tensors[1]);
  std::vector<float> y(xv.size()), mean(static_cast<size_t>(layout.rows)), rstd(mean.size());
  const int64_t d = layout.row_size;
  const double epsilon = ctx.params().layer_norm.epsilon;
  for (int64_t r = 0; r < layout.rows; ++r) {
    const std::vector<double> row(xv.begin() + r * d, xv.begin() + (r + 1) * d);
    double sum = 0.0;
    for (const double value : row) sum += value;
    const double mu = sum / static_cast<double>(d);
    double squares = 0.0;
    for (const double value : row) squares += (value - mu) * (value - mu);
    const double inv_std = 1.0 / std::sqrt(squares / static_cast<double>(d) + epsilon);
    for (int64_t k = 0; k < d; ++k) {
      const double normalized = (row[k] - mu) * inv_std;
      y[r * d + k] = static_cast<float>(normalized * static_cast<double>(gamma[k]) +
                                        static_cast<double>(beta[k]));
    }
    mean[r] = static_cast<float>(mu);
    rstd[r] = static_cast<float>(inv_std);
  }
  write_f32(tensors[2], y);
  write_f32(tensors[3], mean);
  write_f32(tensors[4], rstd);
}

void run_layer_norm_backward(const OpContext& ctx) {
  require_io_counts(ctx, 5, 3);
  const TensorRef x = ctx.input(1);
  require_float(ctx, "x", x);
  const NormLayout layout = make_layout(ctx, x);
  const char* roles[] = {"grad_y", "mean", "rstd", "gamma", "grad_x", "grad_gamma", "grad_beta"};
  const TensorRef tensors[] = {ctx.input(0),  ctx.input(2),  ctx.input(3), ctx.input(4),
                               ctx.output(0), ctx.output(1), ctx.output(2)};
  const Shape shapes[] = {x.shape, layout.leading,    layout.leading,   layout.normalized,
                          x.shape, layout.normalized, layout.normalized};
  for (int k = 0; k < 7; ++k) {
    if (k == 1 || k == 2) {
      require_stat_dtype(ctx, roles[k], tensors[k], x);
    } else {
      require_same_dtype(ctx, roles[k], tensors[k], "x", x);
    }
    require_shape(ctx, roles[k], tensors[k], shapes[k]);
  }
  const std::vector<float> gy = read_f32(tensors[0]), xv = read_f32(x);
  const std::vector<float> mean = read_f32(tensors[1]), rstd = read_f32(tensors[2]);
  const std::vector<float> gamma = read_f32(tensors[3]);
  const int64_t d = layout.row_size;
  std::vector<float> gx(xv.size());
  std::vector<double> g_gamma(static_cast<size_t>(d), 0.0), g_beta(static_cast<size_t>(d), 0.0);
  std::vector<double> xhat(static_cast<size_t>(d)), g(static_cast<size_t>(d));
  for (int64_t r = 0; r < layout.rows; ++r) {
    double sum_g = 0.0, sum_g_xhat = 0.0;
    for (int64_t k = 0; k < d; ++k) {
      const double grad = static_cast<double>(gy[r * d + k]);
      xhat[k] = (static_cast<double>(xv[r * d + k]) - static_cast<double>(mean[r])) *
                static_cast<double>(rstd[r]);
      g[k] = grad * static_cast<double>(gamma[k]);
      sum_g += g[k];
      sum_g_xhat += g[k] * xhat[k];
      g_gamma[k] += grad * xhat[k];
      g_beta[k] += grad;
    }
    const double inv_d = 1.0 / static_cast<double>(d);
    for (int64_t k = 0; k < d; ++k) {
      gx[r * d + k] = static_cast<float>(static_cast<double>(rstd[r]) *
                                         (g[k] - sum_g * inv_d - xhat[k] * sum_g_xhat * inv_d));
    }
  }
  write_f32(tensors[4], gx);
  write_f32(tensors[5], std::vector<float>(g_gamma.begin(), g_gamma.end()));
  write_f32(tensors[6], std::vector<float>(g_beta.begin(), g_beta.end()));
}

}  // namespace sy_reference
