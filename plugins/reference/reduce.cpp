// Reductions over the axes in params.reduce.axes_mask: REDUCE_SUM, REDUCE_MEAN, REDUCE_MAX, ARGMAX.
//
// The input is read through a permuted view (kept axes first, reduced axes last), so every output
// element reduces one contiguous run of the converted values. Sums accumulate in double.
#include <cmath>
#include <limits>
#include <vector>

#include "ops.h"

namespace sy_reference {
namespace {

struct ReductionLayout {
  TensorRef kept_then_reduced;  // the input viewed as [kept axes..., reduced axes...]
  Shape out_shape;
  int64_t outer = 1;  // number of output elements
  int64_t inner = 1;  // elements reduced into each
};

ReductionLayout plan_reduction(const OpContext& ctx, const TensorRef& x) {
  const sy_reduce_params& params = ctx.params().reduce;
  const uint32_t rank = x.shape.rank;
  if (rank < 32 && (params.axes_mask >> rank) != 0) {
    fail(ctx, "axes_mask " + std::to_string(params.axes_mask) + " names an axis beyond " +
                  describe("x", x));
  }
  ReductionLayout layout;
  layout.kept_then_reduced = x;
  uint32_t next = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (uint32_t axis = 0; axis < rank; ++axis) {
      const bool reduced = ((params.axes_mask >> axis) & 1u) != 0;
      if (reduced != (pass == 1)) continue;
      layout.kept_then_reduced.shape.dims[next] = x.shape.dims[axis];
      layout.kept_then_reduced.strides[next] = x.strides[axis];
      ++next;
      (reduced ? layout.inner : layout.outer) *= x.shape.dims[axis];
    }
  }
  for (uint32_t axis = 0; axis < rank; ++axis) {
    const bool reduced = ((params.axes_mask >> axis) & 1u) != 0;
    if (!reduced) {
      layout.out_shape.dims[layout.out_shape.rank++] = x.shape.dims[axis];
    } else if (params.keep_dims) {
      layout.out_shape.dims[layout.out_shape.rank++] = 1;
    }
  }
  if (layout.inner == 0 && layout.outer > 0 &&
      (ctx.op == SY_OP_REDUCE_MAX || ctx.op == SY_OP_ARGMAX)) {
    fail(ctx, "cannot reduce an empty extent of " + describe("x", x) + " (no identity)");
  }
  return layout;
}

float reduce_run(sy_op op, const float* values, int64_t count) {
  if (op == SY_OP_REDUCE_MAX) {
    float best = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < count; ++i) {
      if (std::isnan(values[i])) return values[i];
      if (values[i] > best) best = values[i];
    }
    return best;
  }
  double sum = 0.0;
  for (int64_t i = 0; i < count; ++i) sum += static_cast<double>(values[i]);
  if (op == SY_OP_REDUCE_MEAN) sum /= static_cast<double>(count);  // 0/0 = NaN when empty
  return static_cast<float>(sum);
}

// The first index of the maximum; a NaN counts as the maximum and the first NaN wins.
int64_t argmax_run(const float* values, int64_t count) {
  int64_t best = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (std::isnan(values[i])) return i;
    if (values[i] > values[best]) best = i;
  }
  return best;
}

}  // namespace

void run_reduce(const OpContext& ctx) {
  require_io_counts(ctx, 1, 1);
  const TensorRef x = ctx.input(0);
  const TensorRef out = ctx.output(0);
  require_float(ctx, "x", x);
  require_same_dtype(ctx, "out", out, "x", x);
  const ReductionLayout layout = plan_reduction(ctx, x);
  require_shape(ctx, "out", out, layout.out_shape);
  const std::vector<float> values = read_f32(layout.kept_then_reduced);
  std::vector<float> result(static_cast<size_t>(layout.outer));
  for (int64_t o = 0; o < layout.outer; ++o) {
    result[o] = reduce_run(ctx.op, values.data() + o * layout.inner, layout.inner);
  }
  write_f32(out, result);
}

void run_argmax(const OpContext& ctx) {
  require_io_counts(ctx, 1, 1);
  const TensorRef x = ctx.input(0);
  const TensorRef out = ctx.output(0);
  require_float(ctx, "x", x);
  require_index(ctx, "out", out);
  const uint32_t mask = ctx.params().reduce.axes_mask;
  if (mask == 0 || (mask & (mask - 1)) != 0) {
    fail(ctx, "axes_mask must name exactly one axis, got " + std::to_string(mask));
  }
  const ReductionLayout layout = plan_reduction(ctx, x);
  require_shape(ctx, "out", out, layout.out_shape);
  const std::vector<float> values = read_f32(layout.kept_then_reduced);
  std::vector<int64_t> result(static_cast<size_t>(layout.outer));
  for (int64_t o = 0; o < layout.outer; ++o) {
    result[o] = argmax_run(values.data() + o * layout.inner, layout.inner);
  }
  write_i64(out, result);
}

}  // namespace sy_reference
