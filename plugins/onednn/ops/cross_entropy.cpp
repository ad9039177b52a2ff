// CROSS_ENTROPY and CROSS_ENTROPY_BACKWARD (docs/ops.md section 8): plain loops over rows, one
// fused pass per row (max, sum of exponentials, the label's logit), accumulated in double.
#include <cmath>
#include <vector>

#include "ops/ops.h"
#include "ops/strided_loop.h"

namespace sy_onednn {
namespace {

struct RowStats {
  float max;
  double sum_exp;  // sum of exp(x - max)
};

template <typename T>
RowStats row_stats(const T* row, int64_t count, int64_t stride) {
  float max = -INFINITY;
  for (int64_t c = 0; c < count; ++c) max = std::fmax(max, load_f32(row[c * stride]));
  double sum = 0.0;
  for (int64_t c = 0; c < count; ++c) {
    sum += static_cast<double>(std::exp(load_f32(row[c * stride]) - max));
  }
  return {max, sum};
}

template <typename L>
int64_t label_at(const TensorView& labels, int64_t i) {
  return static_cast<int64_t>(labels.as<L>()[i * labels.strides[0]]);
}

int64_t load_label(const TensorView& labels, int64_t i) {
  return labels.dtype == SY_DTYPE_I32 ? label_at<int32_t>(labels, i) : label_at<int64_t>(labels, i);
}

// Validates shapes and dtypes, and every label (synchronous backend: checked at dispatch).
void check_call(const OpContext& ctx, const TensorView& logits, const TensorView& labels) {
  ctx.require_float(logits, "logits");
  ctx.require_dtype_in(labels, "labels", {SY_DTYPE_I32, SY_DTYPE_I64});
  if (logits.rank != 2) ctx.fail_shape(cat("logits must be [N, C], got ", shape_string(logits)));
  ctx.require_shape(labels, "labels", logits.shape, 1);
  if (ctx.params.cross_entropy.reduction > 1) {
    ctx.fail_shape(
        cat("reduction ", ctx.params.cross_entropy.reduction, " is not 0 (mean) or 1 (sum)"));
  }
  if (ctx.params.cross_entropy.label_smoothing != 0.0) {
    ctx.fail_shape(
        cat("label_smoothing must be 0, got ", ctx.params.cross_entropy.label_smoothing));
  }
  const int64_t classes = logits.shape[1];
  for (int64_t i = 0; i < logits.shape[0]; ++i) {
    int64_t label = load_label(labels, i);
    if (label < 0 || label >= classes) {
      ctx.fail_shape(cat("label ", label, " in row ", i, " is outside [0, ", classes, ")"));
    }
  }
}

template <typename T>
void forward_typed(OpContext& ctx, const TensorView& logits, const TensorView& labels,
                   const TensorView& loss) {
  const int64_t rows = logits.shape[0];
  const int64_t classes = logits.shape[1];
  const T* base = logits.as<T>();
  double total = 0.0;
  for (int64_t i = 0; i < rows; ++i) {
    const T* row = base + i * logits.strides[0];
    RowStats stats = row_stats(row, classes, logits.strides[1]);
    float target = load_f32(row[load_label(labels, i) * logits.strides[1]]);
    total += std::log(stats.sum_exp) + static_cast<double>(stats.max) - static_cast<double>(target);
  }
  if (ctx.params.cross_entropy.reduction == 0) total /= static_cast<double>(rows);
  *loss.as<T>() = store_f32<T>(static_cast<float>(total));
}

template <typename T>
void backward_typed(OpContext& ctx, const TensorView& logits, const TensorView& labels,
                    float grad_loss, const TensorView& grad) {
  const int64_t rows = logits.shape[0];
  const int64_t classes = logits.shape[1];
  const bool mean = ctx.params.cross_entropy.reduction == 0;
  const double scale = static_cast<double>(grad_loss) / (mean ? static_cast<double>(rows) : 1.0);
  parallel_ranges(rows, ctx.threads_for(rows * classes, kMinRowElements),
                  [&](int64_t first, int64_t last) {
                    for (int64_t i = first; i < last; ++i) {
                      const T* row = logits.as<T>() + i * logits.strides[0];
                      T* out = grad.as<T>() + i * grad.strides[0];
                      RowStats stats = row_stats(row, classes, logits.strides[1]);
                      const int64_t label = load_label(labels, i);
                      const double inv_sum = 1.0 / stats.sum_exp;
                      for (int64_t c = 0; c < classes; ++c) {
                        float shifted = load_f32(row[c * logits.strides[1]]) - stats.max;
                        double p = static_cast<double>(std::exp(shifted)) * inv_sum;
                        double g = (p - (c == label ? 1.0 : 0.0)) * scale;
                        out[c * grad.strides[1]] = store_f32<T>(static_cast<float>(g));
                      }
                    }
                  });
}

// From this many logits on, the per-row exponentials go through oneDNN's (log)softmax primitive,
// whose vectorised exp is many times faster than libm's; smaller calls keep the double-precision
// loops above.
constexpr int64_t kMinDnnlElements = 16384;

// (Log-)softmax of the logits in f32 scratch, computed by oneDNN.
TensorView softmax_f32(OpContext& ctx, uint32_t op, const TensorView& logits) {
  TensorView x = dense_copy(ctx, logits, SY_DTYPE_F32);
  TensorView y = ctx.scratch_view(SY_DTYPE_F32, 2, logits.shape);
  softmax_views(ctx, op, x, y, 1);
  return y;
}

template <typename T>
void forward_with_dnnl(OpContext& ctx, const TensorView& logits, const TensorView& labels,
                       const TensorView& loss) {
  const TensorView log_probs = softmax_f32(ctx, SY_OP_LOG_SOFTMAX, logits);
  const int64_t rows = logits.shape[0];
  const int64_t classes = logits.shape[1];
  double total = 0.0;
  for (int64_t i = 0; i < rows; ++i) {
    total -= static_cast<double>(log_probs.as<float>()[i * classes + load_label(labels, i)]);
  }
  if (ctx.params.cross_entropy.reduction == 0) total /= static_cast<double>(rows);
  *loss.as<T>() = store_f32<T>(static_cast<float>(total));
}

template <typename T>
void backward_with_dnnl(OpContext& ctx, const TensorView& logits, const TensorView& labels,
                        float grad_loss, const TensorView& grad) {
  const TensorView probs = softmax_f32(ctx, SY_OP_SOFTMAX, logits);
  const int64_t rows = logits.shape[0];
  const int64_t classes = logits.shape[1];
  const bool mean = ctx.params.cross_entropy.reduction == 0;
  const float scale =
      static_cast<float>(static_cast<double>(grad_loss) / (mean ? static_cast<double>(rows) : 1.0));
  parallel_ranges(rows, ctx.threads_for(rows * classes, kMinRowElements),
                  [&](int64_t first, int64_t last) {
                    for (int64_t i = first; i < last; ++i) {
                      const float* p = probs.as<float>() + i * classes;
                      T* out = grad.as<T>() + i * grad.strides[0];
                      const int64_t label = load_label(labels, i);
                      for (int64_t c = 0; c < classes; ++c) {
                        const float target = c == label ? 1.0f : 0.0f;
                        out[c * grad.strides[1]] = store_f32<T>((p[c] - target) * scale);
                      }
                    }
                  });
}

}  // namespace

void run_cross_entropy(OpContext& ctx) {
  ctx.require_counts(2, 1);
  const TensorView& logits = ctx.in[0];
  const TensorView& labels = ctx.in[1];
  const TensorView& loss = ctx.out[0];
  check_call(ctx, logits, labels);
  ctx.require_same_dtype(logits, "logits", loss, "loss");
  ctx.require_shape(loss, "loss", nullptr, 0);
  const bool large = logits.numel() >= kMinDnnlElements;
  visit_float_dtype(logits.dtype, [&](auto type_tag) {
    using T = decltype(type_tag);
    if (large) {
      forward_with_dnnl<T>(ctx, logits, labels, loss);
    } else {
      forward_typed<T>(ctx, logits, labels, loss);
    }
  });
}

void run_cross_entropy_backward(OpContext& ctx) {
  ctx.require_counts(3, 1);
  const TensorView& logits = ctx.in[0];
  const TensorView& labels = ctx.in[1];
  const TensorView& grad_loss = ctx.in[2];
  const TensorView& grad = ctx.out[0];
  check_call(ctx, logits, labels);
  ctx.require_same_dtype(logits, "logits", grad_loss, "grad_loss");
  ctx.require_same_dtype(logits, "logits", grad, "grad_logits");
  ctx.require_shape(grad_loss, "grad_loss", nullptr, 0);
  ctx.require_same_shape(logits, "logits", grad, "grad_logits");
  if (grad.numel() == 0) return;
  visit_float_dtype(logits.dtype, [&](auto type_tag) {
    using T = decltype(type_tag);
    const float scale = load_f32(*grad_loss.as<T>());
    if (grad.numel() >= kMinDnnlElements) {
      backward_with_dnnl<T>(ctx, logits, labels, scale, grad);
    } else {
      backward_typed<T>(ctx, logits, labels, scale, grad);
    }
  });
}

}  // namespace sy_onednn
