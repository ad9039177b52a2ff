// CROSS_ENTROPY over logits [N, C] with integer labels [N], and its backward op.
#include <cmath>
#include <limits>
#include <vector>

#include "ops.h"

namespace sy_reference {
namespace {

struct CrossEntropyInputs {
  std::vector<float> logits;    // [N, C] row-major
  std::vector<int64_t> labels;  // [N]
  int64_t rows = 0;
  int64_t classes = 0;
};

CrossEntropyInputs read_inputs(const OpContext& ctx) {
  const sy_cross_entropy_params& params = ctx.params().cross_entropy;
  if (params.reduction > 1) {
    fail(ctx, "reduction must be 0 (mean) or 1 (sum), got " + std::to_string(params.reduction));
  }
  if (params.label_smoothing != 0.0) {
    fail(ctx, "label_smoothing must be 0 in ABI 1, got " + std::to_string(params.label_smoothing));
  }
  const TensorRef logits = ctx.input(0);
  const TensorRef labels = ctx.input(1);
  require_float(ctx, "logits", logits);
  require_rank(ctx, "logits", logits, 2, "[N, C]");
  require_index(ctx, "labels", labels);
  require_shape(ctx, "labels", labels, Shape::of({logits.shape[0]}));
  CrossEntropyInputs inputs{read_f32(logits), read_i64(labels), logits.shape[0], logits.shape[1]};
  for (int64_t i = 0; i < inputs.rows; ++i) {
    if (inputs.labels[i] < 0 || inputs.labels[i] >= inputs.classes) {
      fail(ctx, "labels[" + std::to_string(i) + "] = " + std::to_string(inputs.labels[i]) +
                    " is outside [0, " + std::to_string(inputs.classes) + ") for " +
                    describe("logits", logits));
    }
  }
  return inputs;
}

// log(sum(exp(row))) computed stably in double.
double log_sum_exp(const float* row, int64_t n) {
  double max_value = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < n; ++i) max_value = std::fmax(max_value, static_cast<double>(row[i]));
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(row[i]) - max_value);
  return max_value + std::log(sum);
}

}  // namespace

void run_cross_entropy(const OpContext& ctx) {
  require_io_counts(ctx, 2, 1);
  const CrossEntropyInputs inputs = read_inputs(ctx);
  const TensorRef loss = ctx.output(0);
  require_same_dtype(ctx, "loss", loss, "logits", ctx.input(0));
  require_shape(ctx, "loss", loss, Shape{});
  double total = 0.0;
  for (int64_t i = 0; i < inputs.rows; ++i) {
    const float* row = inputs.logits.data() + i * inputs.classes;
    total += log_sum_exp(row, inputs.classes) - static_cast<double>(row[inputs.labels[i]]);
  }
  if (ctx.params().cross_entropy.reduction == 0) total /= static_cast<double>(inputs.rows);
  const float result = static_cast<float>(total);
  write_f32(loss, {&result, 1});
}

void run_cross_entropy_backward(const OpContext& ctx) {
  require_io_counts(ctx, 3, 1);
  const CrossEntropyInputs inputs = read_inputs(ctx);
  const TensorRef logits = ctx.input(0);
  const TensorRef grad_loss = ctx.input(2);
  const TensorRef grad_logits = ctx.output(0);
  require_same_dtype(ctx, "grad_loss", grad_loss, "logits", logits);
  require_shape(ctx, "grad_loss", grad_loss, Shape{});
  require_same_dtype(ctx, "grad_logits", grad_logits, "logits", logits);
  require_shape(ctx, "grad_logits", grad_logits, logits.shape);
  double scale = static_cast<double>(read_f32(grad_loss)[0]);
  if (ctx.params().cross_entropy.reduction == 0) scale /= static_cast<double>(inputs.rows);
  std::vector<float> result(inputs.logits.size());
  for (int64_t i = 0; i < inputs.rows; ++i) {
    const float* row = inputs.logits.data() + i * inputs.classes;
    const double lse = log_sum_exp(row, inputs.classes);
    for (int64_t c = 0; c < inputs.classes; ++c) {
      const double probability = std::exp(static_cast<double>(row[c]) - lse);
      const double target = c == inputs.labels[i] ? 1.0 : 0.0;
      result[i * inputs.classes + c] = static_cast<float>((probability - target) * scale);
    }
  }
  write_f32(grad_logits, result);
}

}  // namespace sy_reference
