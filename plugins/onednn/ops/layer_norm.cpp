// LAYER_NORM and LAYER_NORM_BACKWARD (docs/ops.md section 11).
//
// Plain loops rather than oneDNN's layer normalisation: the ABI hands the backward op rstd (oneDNN
// wants the variance) and gamma/beta in the data dtype (oneDNN 2.6 wants f32 scale and shift), so
// the primitive would need four conversions around a memory-bound pass; these loops do the
// definition directly, per row, with double row sums and OpenMP over rows.
#include <cmath>
#include <type_traits>
#include <vector>

#include "ops/ops.h"
#include "ops/strided_loop.h"
#include "ops/vector_clones.h"

namespace sy_onednn {
namespace {

struct RowLayout {
  int64_t rows = 0;
  int64_t width = 0;  // D
  int leading_rank = 0;
};

RowLayout check_layout(const OpContext& ctx, const TensorView& x) {
  const auto& p = ctx.params.layer_norm;
  if (p.normalized_rank < 1 || static_cast<int>(p.normalized_rank) > x.rank) {
    ctx.fail_shape(cat("normalized_rank ", p.normalized_rank, " is not in [1, ", x.rank, "] for x ",
                       shape_string(x)));
  }
  if (!(p.epsilon > 0.0)) ctx.fail_shape(cat("epsilon must be > 0, got ", p.epsilon));
  RowLayout layout;
  layout.leading_rank = x.rank - static_cast<int>(p.normalized_rank);
  layout.rows = 1;
  layout.width = 1;
  for (int d = 0; d < x.rank; ++d)
    (d < layout.leading_rank ? layout.rows : layout.width) *= x.shape[d];
  if (layout.width < 1)
    ctx.fail_shape(cat("the normalised axes of x ", shape_string(x), " are empty"));
  return layout;
}

// x as rows of D dense elements: the view itself when it is dense, else a dense copy.
TensorView dense_rows(OpContext& ctx, const TensorView& x) {
  return x.is_contiguous() ? x : dense_copy(ctx, x, x.dtype);
}

// Where to write an output of x's shape as dense rows: the output, or scratch to copy back.
TensorView output_rows(OpContext& ctx, const TensorView& out) {
  return out.is_contiguous() ? out : ctx.scratch_view(out.dtype, out.rank, out.shape);
}

constexpr int kLanes = 8;

// The sum over i in [0, n) of term(i) in double, in kLanes independent accumulators so that the
// loop vectorises (a single accumulator is a serial dependency chain).
template <typename Term>
double lane_sum(int64_t n, const Term& term) {
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] += term(i + l);
  }
  double total = 0.0;
  for (; i < n; ++i) total += term(i);
  for (double lane : lanes) total += lane;
  return total;
}

// One row of `width` elements: mean and rstd (double sums), then y = (x - mean) rstd gamma + beta.
template <typename T>
inline void forward_row(const T* in, T* out, const float* gamma, const float* beta, int64_t width,
                        double epsilon, float* mean_out, float* rstd_out) {
  const double sum =
      lane_sum(width, [in](int64_t i) { return static_cast<double>(load_f32(in[i])); });
  const double mean = sum / static_cast<double>(width);
  const double squares = lane_sum(width, [in, mean](int64_t i) {
    const double centered = static_cast<double>(load_f32(in[i])) - mean;
    return centered * centered;
  });
  const double rstd = 1.0 / std::sqrt(squares / static_cast<double>(width) + epsilon);
  const float mean_f = static_cast<float>(mean);
  const float rstd_f = static_cast<float>(rstd);
  for (int64_t i = 0; i < width; ++i) {
    out[i] = store_f32<T>((load_f32(in[i]) - mean_f) * rstd_f * gamma[i] + beta[i]);
  }
  *mean_out = mean_f;
  *rstd_out = rstd_f;
}

// f32 rows compiled for AVX-512, AVX2 and the baseline (vector_clones.h): the plugin's baseline
// build ran them in SSE2, two doubles a register. The lanes' order of summation is explicit
// (lane_sum), so every clone gives the same bits. With the two on alternate calls of one `bench
// model` run (BERT, batch 1, [128, 768] rows, 250 calls each, 2-core Zen 4, 2 threads), the
// fastest call took 38-40 us against 52-54 in SSE2.
SY_VECTOR_CLONES void forward_row_f32(const float* in, float* out, const float* gamma,
                                      const float* beta, int64_t width, double epsilon,
                                      float* mean_out, float* rstd_out) {
  forward_row(in, out, gamma, beta, width, epsilon, mean_out, rstd_out);
}

template <typename T>
void forward_rows(OpContext& ctx, const RowLayout& layout, const TensorView& x, const float* gamma,
                  const float* beta, const TensorView& y, float* mean_out, float* rstd_out) {
  const double epsilon = ctx.params.layer_norm.epsilon;
  const int64_t width = layout.width;
  parallel_ranges(
      layout.rows, ctx.threads_for(layout.rows * width, kMinRowElements),
      [&](int64_t first, int64_t last) {
        for (int64_t r = first; r < last; ++r) {
          const T* in = x.as<T>() + r * width;
          T* out = y.as<T>() + r * width;
          if constexpr (std::is_same_v<T, float>) {
            forward_row_f32(in, out, gamma, beta, width, epsilon, mean_out + r, rstd_out + r);
          } else {
            forward_row(in, out, gamma, beta, width, epsilon, mean_out + r, rstd_out + r);
          }
        }
      });
}

}  // namespace

void run_layer_norm(OpContext& ctx) {
  ctx.require_counts(3, 3);
  const TensorView& x = ctx.in[0];
  ctx.require_float(x, "x");
  ctx.require_same_dtype(x, "x", ctx.in[1], "gamma");
  ctx.require_same_dtype(x, "x", ctx.in[2], "beta");
  ctx.require_same_dtype(x, "x", ctx.out[0], "y");
  ctx.require_dtype_in(ctx.out[1], "mean", {x.dtype, SY_DTYPE_F32});
  ctx.require_dtype_in(ctx.out[2], "rstd", {x.dtype, SY_DTYPE_F32});
  const RowLayout layout = check_layout(ctx, x);
  const int trailing = x.rank - layout.leading_rank;
  ctx.require_shape(ctx.in[1], "gamma", x.shape + layout.leading_rank, trailing);
  ctx.require_shape(ctx.in[2], "beta", x.shape + layout.leading_rank, trailing);
  ctx.require_same_shape(x, "x", ctx.out[0], "y");
  ctx.require_shape(ctx.out[1], "mean", x.shape, layout.leading_rank);
  ctx.require_shape(ctx.out[2], "rstd", x.shape, layout.leading_rank);
  if (layout.rows == 0) return;
  TensorView x_rows = dense_rows(ctx, x);
  TensorView y_rows = output_rows(ctx, ctx.out[0]);
  TensorView gamma = dense_copy(ctx, ctx.in[1], SY_DTYPE_F32);
  TensorView beta = dense_copy(ctx, ctx.in[2], SY_DTYPE_F32);
  TensorView mean = ctx.scratch_view(SY_DTYPE_F32, layout.leading_rank, x.shape);
  TensorView rstd = ctx.scratch_view(SY_DTYPE_F32, layout.leading_rank, x.shape);
  visit_float_dtype(x.dtype, [&](auto type_tag) {
    forward_rows<decltype(type_tag)>(ctx, layout, x_rows, gamma.as<float>(), beta.as<float>(),
                                     y_rows, mean.as<float>(), rstd.as<float>());
  });
  const int threads = ctx.threads_for(x.numel());
  if (y_rows.data != ctx.out[0].data) copy_view(y_rows, ctx.out[0], threads);
  copy_view(mean, ctx.out[1], 1);
  copy_view(rstd, ctx.out[2], 1);
}

namespace {

struct BackwardInputs {
  TensorView grad_y, x, grad_x;
  const float* mean;
  const float* rstd;
  const float* gamma;
};

template <typename T>
void backward_rows(OpContext& ctx, const RowLayout& layout, const BackwardInputs& in,
                   double* grad_gamma, double* grad_beta) {
  const int64_t width = layout.width;
  const int threads = ctx.threads_for(layout.rows * width, kMinRowElements);
  std::vector<double> partial(static_cast<size_t>(threads) * 2 * width, 0.0);
  parallel_ranges(threads, threads, [&](int64_t first_worker, int64_t last_worker) {
    for (int64_t worker = first_worker; worker < last_worker; ++worker) {
      double* gg = partial.data() + worker * 2 * width;
      double* gb = gg + width;
      const int64_t first = layout.rows * worker / threads;
      const int64_t last = layout.rows * (worker + 1) / threads;
      for (int64_t r = first; r < last; ++r) {
        const T* dy = in.grad_y.as<T>() + r * width;
        const T* x = in.x.as<T>() + r * width;
        T* dx = in.grad_x.as<T>() + r * width;
        const float mean = in.mean[r];
        const float rstd = in.rstd[r];
        const float* gamma = in.gamma;
        const double sum_g = lane_sum(
            width, [&](int64_t i) { return static_cast<double>(load_f32(dy[i]) * gamma[i]); });
        const double sum_gx = lane_sum(width, [&](int64_t i) {
          const float xhat = (load_f32(x[i]) - mean) * rstd;
          return static_cast<double>(load_f32(dy[i]) * gamma[i] * xhat);
        });
        for (int64_t i = 0; i < width; ++i) {
          const float xhat = (load_f32(x[i]) - mean) * rstd;
          const float dyv = load_f32(dy[i]);
          gg[i] += static_cast<double>(dyv * xhat);
          gb[i] += static_cast<double>(dyv);
        }
        const float mean_g = static_cast<float>(sum_g / static_cast<double>(width));
        const float mean_gx = static_cast<float>(sum_gx / static_cast<double>(width));
        for (int64_t i = 0; i < width; ++i) {
          const float xhat = (load_f32(x[i]) - mean) * rstd;
          const float g = load_f32(dy[i]) * in.gamma[i];
          dx[i] = store_f32<T>(rstd * (g - mean_g - xhat * mean_gx));
        }
      }
    }
  });
  for (int worker = 0; worker < threads; ++worker) {
    const double* gg = partial.data() + worker * 2 * width;
    for (int64_t i = 0; i < width; ++i) {
      grad_gamma[i] += gg[i];
      grad_beta[i] += gg[width + i];
    }
  }
}

void write_parameter_grad(OpContext& ctx, const std::vector<double>& values,
                          const TensorView& out) {
  TensorView as_f32 = ctx.scratch_view(SY_DTYPE_F32, out.rank, out.shape);
  for (size_t i = 0; i < values.size(); ++i) as_f32.as<float>()[i] = static_cast<float>(values[i]);
  copy_view(as_f32, out, 1);
}

}  // namespace

void run_layer_norm_backward(OpContext& ctx) {
  ctx.require_counts(5, 3);
  const TensorView& x = ctx.in[1];
  ctx.require_float(x, "x");
  ctx.require_same_dtype(x, "x", ctx.in[0], "grad_y");
  ctx.require_same_dtype(x, "x", ctx.in[4], "gamma");
  ctx.require_dtype_in(ctx.in[2], "mean", {x.dtype, SY_DTYPE_F32});
  ctx.require_dtype_in(ctx.in[3], "rstd", {x.dtype, SY_DTYPE_F32});
  ctx.require_same_dtype(x, "x", ctx.out[0], "grad_x");
  ctx.require_same_dtype(x, "x", ctx.out[1], "grad_gamma");
  ctx.require_same_dtype(x, "x", ctx.out[2], "grad_beta");
  const RowLayout layout = check_layout(ctx, x);
  const int trailing = x.rank - layout.leading_rank;
  const int64_t* trailing_shape = x.shape + layout.leading_rank;
  ctx.require_same_shape(x, "x", ctx.in[0], "grad_y");
  ctx.require_shape(ctx.in[2], "mean", x.shape, layout.leading_rank);
  ctx.require_shape(ctx.in[3], "rstd", x.shape, layout.leading_rank);
  ctx.require_shape(ctx.in[4], "gamma", trailing_shape, trailing);
  ctx.require_same_shape(x, "x", ctx.out[0], "grad_x");
  ctx.require_shape(ctx.out[1], "grad_gamma", trailing_shape, trailing);
  ctx.require_shape(ctx.out[2], "grad_beta", trailing_shape, trailing);
  BackwardInputs in;
  in.grad_y = dense_rows(ctx, ctx.in[0]);
  in.x = dense_rows(ctx, x);
  in.grad_x = output_rows(ctx, ctx.out[0]);
  in.mean = dense_copy(ctx, ctx.in[2], SY_DTYPE_F32).as<float>();
  in.rstd = dense_copy(ctx, ctx.in[3], SY_DTYPE_F32).as<float>();
  in.gamma = dense_copy(ctx, ctx.in[4], SY_DTYPE_F32).as<float>();
  std::vector<double> grad_gamma(static_cast<size_t>(layout.width), 0.0);
  std::vector<double> grad_beta(static_cast<size_t>(layout.width), 0.0);
  visit_float_dtype(x.dtype, [&](auto type_tag) {
    backward_rows<decltype(type_tag)>(ctx, layout, in, grad_gamma.data(), grad_beta.data());
  });
  if (in.grad_x.data != ctx.out[0].data)
    copy_view(in.grad_x, ctx.out[0], ctx.threads_for(x.numel()));
  write_parameter_grad(ctx, grad_gamma, ctx.out[1]);
  write_parameter_grad(ctx, grad_beta, ctx.out[2]);
}

}  // namespace sy_onednn
