// Elementwise binary ops with numpy broadcasting (docs/ops.md section 5).
//
// Plain loops: these ops are memory-bound, and max/min need NaN propagation that oneDNN's binary
// primitive does not promise. Small dense f32 calls take a fast path that skips loop planning,
// since dispatch overhead dominates them.
#include <algorithm>

#include "ops/elementwise_functors.h"
#include "ops/elementwise_kernels.h"
#include "ops/ops.h"
#include "ops/vector_clones.h"

namespace sy_onednn {
namespace {

constexpr int64_t kMinElementsPerThread = kMinMemoryBoundElements;

template <typename Fn>
void with_binary_functor(uint32_t op, Fn&& fn) {
  switch (op) {
    case SY_OP_ADD:
      fn(fn::Add{});
      break;
    case SY_OP_SUB:
      fn(fn::Sub{});
      break;
    case SY_OP_MUL:
      fn(fn::Mul{});
      break;
    case SY_OP_DIV:
      fn(fn::Div{});
      break;
    case SY_OP_MAX:
      fn(fn::Max{});
      break;
    case SY_OP_MIN:
      fn(fn::Min{});
      break;
    case SY_OP_POW:
      fn(fn::Pow{});
      break;
    case SY_OP_CMP_GT:
      fn(fn::CmpGt{});
      break;
    case SY_OP_CMP_EQ:
      fn(fn::CmpEq{});
      break;
    default:
      break;
  }
}

bool same_shape(const TensorView& a, const TensorView& b) {
  return a.rank == b.rank && std::equal(a.shape, a.shape + a.rank, b.shape);
}

// `rows` rows of `cols` floats: o's rows are dense, x's and y's `x_step` / `y_step` floats apart
// (cols for a dense operand, 0 for one row read again).
template <typename F>
SY_VECTOR_CLONES void rows_f32(float* o, const float* x, int64_t x_step, const float* y,
                               int64_t y_step, int64_t rows, int64_t cols, const F& f) {
  for (int64_t r = 0; r < rows; ++r) {
    float* orow = o + r * cols;
    const float* xrow = x + r * x_step;
    const float* yrow = y + r * y_step;
    for (int64_t j = 0; j < cols; ++j) orow[j] = f(xrow[j], yrow[j]);
  }
}

// Dense f32 operands of one shape, below the threading threshold: one loop, no planning.
bool try_dense_f32_fast_path(OpContext& ctx, const TensorView& a, const TensorView& b,
                             const TensorView& out) {
  if (out.dtype != SY_DTYPE_F32 || a.dtype != SY_DTYPE_F32 || b.dtype != SY_DTYPE_F32) return false;
  const int64_t count = out.numel();
  if (count > kMinElementsPerThread * 2 && ctx.device.threads > 1) return false;
  if (!same_shape(a, out) || !same_shape(b, out)) return false;
  if (!a.is_contiguous() || !b.is_contiguous() || !out.is_contiguous()) return false;
  const float* pa = a.as<float>();
  const float* pb = b.as<float>();
  float* po = out.as<float>();
  with_binary_functor(ctx.op,
                      [&](const auto& f) { rows_f32(po, pa, count, pb, count, 1, count, f); });
  return true;
}

// f32 operands that, walked in the output's memory order, are rows of one dense output: each
// input either dense like the output or one row read again for every row (a per-channel scale or
// bias on channels-last activations: EfficientNet's squeeze-excitation multiplies [1, C, 1, 1] by
// [1, C, H, W]). The generic loop pays its per-span work for every row of C elements; here a row
// is one vectorised inner loop. Returns false for any other layout.
bool try_rows_f32(OpContext& ctx, const TensorView& a, const TensorView& b, const TensorView& out) {
  if (out.dtype != SY_DTYPE_F32) return false;
  const StridedLoop<3> loop = plan_loop_in_memory_order<3>({&out, &a, &b});
  if (loop.rank != 2) return false;
  constexpr int64_t kSize = sizeof(float);
  const int64_t rows = loop.shape[0];
  const int64_t cols = loop.shape[1];
  if (loop.byte_strides[0][1] != kSize || loop.byte_strides[0][0] != cols * kSize) return false;
  // Per input: true when it is dense like the output, false when it is one row read again.
  bool dense[2];
  for (int k = 1; k <= 2; ++k) {
    if (loop.byte_strides[k][1] != kSize) return false;
    if (loop.byte_strides[k][0] == cols * kSize) {
      dense[k - 1] = true;
    } else if (loop.byte_strides[k][0] == 0) {
      dense[k - 1] = false;
    } else {
      return false;
    }
  }
  if (dense[0] == dense[1]) return false;  // both dense: plan_loop merged them into one span
  float* po = reinterpret_cast<float*>(loop.data[0]);
  const float* pa = reinterpret_cast<const float*>(loop.data[1]);
  const float* pb = reinterpret_cast<const float*>(loop.data[2]);
  // Short rows (squeeze-excitation's scale of 32 channels over 12544 pixels): the repeated row is
  // copied `group` times into scratch so that one inner loop spans `group` rows, and the vectorised
  // loop's per-row costs (alias checks, prologue, tail) come once a group. [1, 32, 112, 112] took
  // 100 us a call on one Zen 4 core, one loop per 32-float row.
  const int64_t group =
      cols < kLongRowFloats ? std::min(rows, (kLongRowFloats + cols - 1) / cols) : 1;
  if (group > 1) {
    const float* row = dense[0] ? pb : pa;
    float* repeated = static_cast<float*>(ctx.scratch(sizeof(float) * group * cols));
    for (int64_t g = 0; g < group; ++g) std::copy(row, row + cols, repeated + g * cols);
    (dense[0] ? pb : pa) = repeated;
  }
  const int64_t wide = group * cols;
  const int64_t groups = rows / group;
  const int64_t a_step = dense[0] ? wide : 0;
  const int64_t b_step = dense[1] ? wide : 0;
  // Split from kMinRowElements, not kMinElementsPerThread: a CNN's per-channel scales run between
  // convolutions whose threads are still awake, and EfficientNet-B0's [1, 32, 112, 112] and
  // [1, 144, 56, 56] (400-450k elements) took 67 us on one thread.
  const int threads = ctx.threads_for(out.numel(), kMinRowElements);
  with_binary_functor(ctx.op, [&](const auto& f) {
    parallel_ranges(groups, threads, [&](int64_t first, int64_t last) {
      rows_f32(po + first * wide, pa + first * a_step, a_step, pb + first * b_step, b_step,
               last - first, wide, f);
    });
    if (const int64_t rest = rows - groups * group; rest > 0) {  // fewer than `group` rows left
      const int64_t done = groups * group;
      rows_f32(po + done * cols, pa + (dense[0] ? done * cols : 0), dense[0] ? cols : 0,
               pb + (dense[1] ? done * cols : 0), dense[1] ? cols : 0, rest, cols, f);
    }
  });
  return true;
}

void run_with_scalar(OpContext& ctx) {
  const TensorView& a = ctx.in[0];
  const TensorView& out = ctx.out[0];
  ctx.require_same_shape(a, "a", out, "out");
  const float scalar = static_cast<float>(ctx.params.binary.scalar);
  const int threads = ctx.threads_for(out.numel(), kMinElementsPerThread);
  visit_float_dtype(out.dtype, [&](auto type_tag) {
    using T = decltype(type_tag);
    with_binary_functor(ctx.op,
                        [&](const auto& f) { run_scalar_kernel<T>(out, a, scalar, threads, f); });
  });
}

void check_broadcast_shape(const OpContext& ctx, const TensorView& a, const TensorView& b,
                           const TensorView& out) {
  const int rank = std::max(a.rank, b.rank);
  int64_t expected[SY_MAX_RANK] = {};
  for (int d = 0; d < rank; ++d) {
    int da = d - (rank - a.rank);
    int db = d - (rank - b.rank);
    int64_t sa = da >= 0 ? a.shape[da] : 1;
    int64_t sb = db >= 0 ? b.shape[db] : 1;
    if (sa != sb && sa != 1 && sb != 1) {
      ctx.fail_shape(cat("shapes ", shape_string(a), " and ", shape_string(b),
                         " do not broadcast (axis ", d, ": ", sa, " vs ", sb, ")"));
    }
    expected[d] = sa == 1 ? sb : sa;
  }
  if (out.rank != rank || !std::equal(expected, expected + rank, out.shape)) {
    ctx.fail_shape(cat("output shape ", shape_string(out), " is not the broadcast shape ",
                       shape_string(expected, rank), " of ", shape_string(a), " and ",
                       shape_string(b)));
  }
}

}  // namespace

void run_binary(OpContext& ctx) {
  const bool use_scalar = ctx.params.binary.use_scalar != 0;
  ctx.require_counts(use_scalar ? 1 : 2, 1);
  const TensorView& a = ctx.in[0];
  const TensorView& out = ctx.out[0];
  ctx.require_float(a, "a");
  ctx.require_same_dtype(a, "a", out, "out");
  if (use_scalar) {
    run_with_scalar(ctx);
    return;
  }
  const TensorView& b = ctx.in[1];
  ctx.require_same_dtype(a, "a", b, "b");
  if (try_dense_f32_fast_path(ctx, a, b, out)) return;
  check_broadcast_shape(ctx, a, b, out);
  if (out.numel() == 0) return;
  TensorView a_full;
  TensorView b_full;
  broadcast_view(a, out.shape, out.rank, &a_full);
  broadcast_view(b, out.shape, out.rank, &b_full);
  if (try_rows_f32(ctx, a_full, b_full, out)) return;
  const int threads = ctx.threads_for(out.numel(), kMinElementsPerThread);
  visit_float_dtype(out.dtype, [&](auto type_tag) {
    using T = decltype(type_tag);
    with_binary_functor(
        ctx.op, [&](const auto& f) { run_binary_kernel<T>(out, a_full, b_full, threads, f); });
  });
}

}  // namespace sy_onednn
