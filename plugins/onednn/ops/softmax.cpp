// SOFTMAX, LOG_SOFTMAX and their backward ops (docs/ops.md section 7) on oneDNN's softmax and
// logsoftmax primitives. oneDNN gives the output the input's layout, so when the caller's layouts
// differ the operands go through dense scratch copies. f16 runs through f32 scratch tensors.
#include <cmath>
#include <cstring>
#include <limits>

#include "dnnl_util.h"
#include "dtype.h"
#include "ops/elementwise_kernels.h"
#include "ops/ops.h"
#include "ops/strided_loop.h"
#include "ops/vector_clones.h"

namespace sy_onednn {
namespace {

struct SoftmaxEntry : CachedPrimitive {
  dnnl::primitive primitive;
  dnnl::memory::desc data;  // x / y
  dnnl::memory::desc diff;  // grad_out / grad_in (backward only)
  dnnl::memory::desc scratchpad;
};

bool is_log(uint32_t op) {
  return op == SY_OP_LOG_SOFTMAX || op == SY_OP_LOG_SOFTMAX_BACKWARD;
}

std::shared_ptr<SoftmaxEntry> make_forward(const OpContext& ctx, const dnnl::memory::desc& data,
                                           int axis) {
  auto entry = std::make_shared<SoftmaxEntry>();
  entry->data = data;
  const auto prop = dnnl::prop_kind::forward_training;
  if (is_log(ctx.op)) {
    dnnl::logsoftmax_forward::primitive_desc pd({prop, data, axis}, primitive_attr(ctx),
                                                ctx.device.engine);
    entry->primitive = dnnl::logsoftmax_forward(pd);
    entry->scratchpad = pd.scratchpad_desc();
  } else {
    dnnl::softmax_forward::primitive_desc pd({prop, data, axis}, primitive_attr(ctx),
                                             ctx.device.engine);
    entry->primitive = dnnl::softmax_forward(pd);
    entry->scratchpad = pd.scratchpad_desc();
  }
  return entry;
}

std::shared_ptr<SoftmaxEntry> make_backward(const OpContext& ctx, const dnnl::memory::desc& data,
                                            const dnnl::memory::desc& diff, int axis) {
  auto entry = std::make_shared<SoftmaxEntry>();
  entry->data = data;
  entry->diff = diff;
  const auto prop = dnnl::prop_kind::forward_training;
  const dnnl::engine& engine = ctx.device.engine;
  if (is_log(ctx.op)) {
    dnnl::logsoftmax_forward::primitive_desc hint({prop, data, axis}, engine);
    dnnl::logsoftmax_backward::primitive_desc pd({diff, data, axis}, primitive_attr(ctx), engine,
                                                 hint);
    entry->primitive = dnnl::logsoftmax_backward(pd);
    entry->scratchpad = pd.scratchpad_desc();
  } else {
    dnnl::softmax_forward::primitive_desc hint({prop, data, axis}, engine);
    dnnl::softmax_backward::primitive_desc pd({diff, data, axis}, primitive_attr(ctx), engine,
                                              hint);
    entry->primitive = dnnl::softmax_backward(pd);
    entry->scratchpad = pd.scratchpad_desc();
  }
  return entry;
}

int checked_axis(const OpContext& ctx, const TensorView& x) {
  const int axis = ctx.params.softmax.axis;
  if (axis < 0 || axis >= x.rank) {
    ctx.fail_shape(cat("axis ", axis, " is out of range for ", shape_string(x)));
  }
  return axis;
}

// `in` and `out` in one layout that oneDNN can describe: as they are, or dense scratch copies.
bool harmonise(OpContext& ctx, TensorView* in, TensorView* out) {
  if (dnnl_describable(*in) && dnnl_desc(*in) == dnnl_desc(*out)) return false;
  *in = dense_copy(ctx, *in, in->dtype);
  if (!out->is_contiguous()) *out = ctx.scratch_view(out->dtype, out->rank, out->shape);
  return true;
}

// Whether a row of `count` values, `stride` elements apart, has no softmax: a NaN or +inf in
// it, or -inf everywhere (docs/ops.md: its output row is NaN, as PyTorch's). oneDNN's primitives
// return finite numbers for such rows (0 and 1 for a row holding +inf), which would hide a
// diverged model.
// Integer reductions of the comparisons, so that GCC vectorises the loop (with bool ones it stayed
// scalar).
template <typename T>
SY_VECTOR_CLONES bool row_has_no_softmax(const T* x, int64_t count, int64_t stride) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  int32_t bad = 0;
  int32_t all_negative_infinite = 1;
  for (int64_t i = 0; i < count; ++i) {
    const float v = load_f32(x[i * stride]);
    bad |= static_cast<int32_t>(!(v < kInf));  // NaN or +inf
    all_negative_infinite &= static_cast<int32_t>(v == -kInf);
  }
  return bad != 0 || all_negative_infinite != 0;
}

// Writes NaN over every row of `y` (along `axis`) whose row of `x` has no softmax. x and y have
// the same shape; any strides.
template <typename T>
void mark_rows_without_softmax(const TensorView& x, const TensorView& y, int axis, int threads) {
  const int64_t length = x.shape[axis];
  const int64_t rows = length == 0 ? 0 : x.numel() / length;
  const T nan = store_f32<T>(std::numeric_limits<float>::quiet_NaN());
  parallel_ranges(rows, threads, [&](int64_t first, int64_t last) {
    int64_t index[SY_MAX_RANK] = {};
    for (int64_t row = first; row < last; ++row) {
      int64_t rest = row;
      for (int d = x.rank - 1; d >= 0; --d) {  // the row's index, with 0 along the axis
        if (d == axis) continue;
        index[d] = rest % x.shape[d];
        rest /= x.shape[d];
      }
      index[axis] = 0;
      const T* xs = reinterpret_cast<const T*>(x.element(index));
      if (!row_has_no_softmax(xs, length, x.strides[axis])) continue;
      T* ys = reinterpret_cast<T*>(y.element(index));
      for (int64_t i = 0; i < length; ++i) ys[i * y.strides[axis]] = nan;
    }
  });
}

// Softmax along a single element: 1 (log: 0), and NaN where the row has none (x - x is NaN for
// NaN and both infinities). oneDNN's logsoftmax gave 1.4e-6 there, its log(1) (found by the drawn
// conformance cases), so such axes are computed here.
struct SingletonSoftmax {
  bool log_form;
  float operator()(float v) const {
    const float shifted = v - v;
    return log_form ? shifted : std::exp(shifted);
  }
};

void softmax_forward_f32_bf16(OpContext& ctx) {
  TensorView x = ctx.in[0];
  TensorView out = ctx.out[0];
  const int axis = checked_axis(ctx, x);
  if (out.numel() == 0) return;
  if (x.shape[axis] == 1) {
    const SingletonSoftmax f{is_log(ctx.op)};
    const int threads = ctx.threads_for(out.numel());
    if (x.dtype == SY_DTYPE_BF16) return run_unary_kernel<bf16_t>(out, x, threads, f);
    return run_unary_kernel<float>(out, x, threads, f);
  }
  harmonise(ctx, &x, &out);
  const int threads = ctx.threads_for(out.numel(), kMinRowElements);
  ctx.use_threads(threads);
  CacheKeyBuilder key(ctx.op);
  key.add(threads).add(axis).add_view(out);
  auto entry = ctx.device.primitives.get_or_create<SoftmaxEntry>(
      key.finish(), [&] { return make_forward(ctx, dnnl_desc(out), axis); });
  execute_primitive(ctx, entry->primitive, entry->scratchpad,
                    {{DNNL_ARG_SRC, &entry->data, x.data}, {DNNL_ARG_DST, &entry->data, out.data}});
  if (x.dtype == SY_DTYPE_BF16) {
    mark_rows_without_softmax<bf16_t>(x, out, axis, threads);
  } else {
    mark_rows_without_softmax<float>(x, out, axis, threads);
  }
  if (out.data != ctx.out[0].data) copy_view(out, ctx.out[0], ctx.threads_for(out.numel()));
}

void softmax_backward_f32_bf16(OpContext& ctx) {
  TensorView grad_out = ctx.in[0];
  TensorView y = ctx.in[1];
  TensorView grad_in = ctx.out[0];
  const int axis = checked_axis(ctx, y);
  if (grad_in.numel() == 0) return;
  harmonise(ctx, &grad_out, &grad_in);
  if (!dnnl_describable(y)) y = dense_copy(ctx, y, y.dtype);
  const int threads = ctx.threads_for(grad_in.numel(), kMinRowElements);
  ctx.use_threads(threads);
  CacheKeyBuilder key(ctx.op);
  key.add(threads).add(axis).add_view(y).add_view(grad_in);
  auto entry = ctx.device.primitives.get_or_create<SoftmaxEntry>(
      key.finish(), [&] { return make_backward(ctx, dnnl_desc(y), dnnl_desc(grad_in), axis); });
  execute_primitive(ctx, entry->primitive, entry->scratchpad,
                    {{DNNL_ARG_DST, &entry->data, y.data},
                     {DNNL_ARG_DIFF_DST, &entry->diff, grad_out.data},
                     {DNNL_ARG_DIFF_SRC, &entry->diff, grad_in.data}});
  if (grad_in.data != ctx.out[0].data) {
    copy_view(grad_in, ctx.out[0], ctx.threads_for(grad_in.numel()));
  }
}

}  // namespace

void softmax_views(OpContext& parent, uint32_t op, const TensorView& x, const TensorView& y,
                   int axis) {
  sy_op_params params;
  std::memset(&params, 0, sizeof(params));
  params.softmax.axis = axis;
  OpContext ctx(parent.device, parent.queue, op, params);
  ctx.num_inputs = 1;
  ctx.num_outputs = 1;
  ctx.in[0] = x;
  ctx.out[0] = y;
  softmax_forward_f32_bf16(ctx);
}

void run_softmax(OpContext& ctx) {
  ctx.require_counts(1, 1);
  ctx.require_float(ctx.in[0], "x");
  ctx.require_same_dtype(ctx.in[0], "x", ctx.out[0], "out");
  ctx.require_same_shape(ctx.in[0], "x", ctx.out[0], "out");
  run_dnnl_backed(ctx, softmax_forward_f32_bf16);
}

void run_softmax_backward(OpContext& ctx) {
  ctx.require_counts(2, 1);
  ctx.require_float(ctx.in[0], "grad_out");
  ctx.require_same_dtype(ctx.in[0], "grad_out", ctx.in[1], "y");
  ctx.require_same_dtype(ctx.in[0], "grad_out", ctx.out[0], "grad_in");
  ctx.require_same_shape(ctx.in[0], "grad_out", ctx.in[1], "y");
  ctx.require_same_shape(ctx.in[0], "grad_out", ctx.out[0], "grad_in");
  run_dnnl_backed(ctx, softmax_backward_f32_bf16);
}

}  // namespace sy_onednn
