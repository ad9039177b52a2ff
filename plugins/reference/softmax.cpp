// SOFTMAX, LOG_SOFTMAX and their backward ops, over params.softmax.axis.
//
// Each tensor is viewed with the softmax axis moved last, so every row is a contiguous run of the
// converted values. Rows are computed in double and rounded once.
#include <cmath>
#include <limits>
#include <vector>

#include "ops.h"

namespace sy_reference {
namespace {

// The view of `tensor` with `axis` moved to the end (other axes keep their order).
TensorRef axis_last(const TensorRef& tensor, uint32_t axis) {
  TensorRef view = tensor;
  uint32_t next = 0;
  for (uint32_t a = 0; a < tensor.shape.rank; ++a) {
    if (a == axis) continue;
    view.shape.dims[next] = tensor.shape.dims[a];
    view.strides[next] = tensor.strides[a];
    ++next;
  }
  view.shape.dims[next] = tensor.shape.dims[axis];
  view.strides[next] = tensor.strides[axis];
  return view;
}

void softmax_row(const float* x, float* y, int64_t n, bool log_output) {
  double max_value = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < n; ++i) max_value = std::fmax(max_value, static_cast<double>(x[i]));
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(x[i])) max_value = std::numeric_limits<double>::quiet_NaN();
  }
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(x[i]) - max_value);
  const double log_sum = std::log(sum);
  for (int64_t i = 0; i < n; ++i) {
    const double shifted = static_cast<double>(x[i]) - max_value;
    y[i] = static_cast<float>(log_output ? shifted - log_sum : std::exp(shifted) / sum);
  }
}

void softmax_backward_row(const float* g, const float* y, float* out, int64_t n, bool log_input) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    sum += log_input ? static_cast<double>(g[i])
                     : static_cast<double>(g[i]) * static_cast<double>(y[i]);
  }
  for (int64_t i = 0; i < n; ++i) {
    const double gi = static_cast<double>(g[i]);
    const double yi = static_cast<double>(y[i]);
    out[i] = static_cast<float>(log_input ? gi - std::exp(yi) * sum : yi * (gi - sum));
  }
}

}  // namespace

void run_softmax_family(const OpContext& ctx) {
  const bool backward = ctx.op == SY_OP_SOFTMAX_BACKWARD || ctx.op == SY_OP_LOG_SOFTMAX_BACKWARD;
  const bool log_form = ctx.op == SY_OP_LOG_SOFTMAX || ctx.op == SY_OP_LOG_SOFTMAX_BACKWARD;
  require_io_counts(ctx, backward ? 2 : 1, 1);
  const TensorRef first = ctx.input(0);
  const TensorRef out = ctx.output(0);
  const char* first_role = backward ? "grad_out" : "x";
  require_float(ctx, first_role, first);
  require_same_dtype(ctx, "out", out, first_role, first);
  require_shape(ctx, "out", out, first.shape);
  const int32_t axis = ctx.params().softmax.axis;
  require_axis(ctx, "softmax.axis", axis, first);
  const auto axis_index = static_cast<uint32_t>(axis);
  const int64_t n = first.shape[axis_index];
  const int64_t rows = n == 0 ? 0 : first.shape.count() / n;

  const std::vector<float> first_values = read_f32(axis_last(first, axis_index));
  std::vector<float> result(first_values.size());
  if (backward) {
    const TensorRef y = ctx.input(1);
    require_same_dtype(ctx, "y", y, "grad_out", first);
    require_shape(ctx, "y", y, first.shape);
    const std::vector<float> y_values = read_f32(axis_last(y, axis_index));
    for (int64_t r = 0; r < rows; ++r) {
      softmax_backward_row(first_values.data() + r * n, y_values.data() + r * n,
                           result.data() + r * n, n, log_form);
    }
  } else {
    for (int64_t r = 0; r < rows; ++r) {
      softmax_row(first_values.data() + r * n, result.data() + r * n, n, log_form);
    }
  }
  write_f32(axis_last(out, axis_index), result);
}

}  // namespace sy_reference
