// MAX_POOL2D, AVG_POOL2D and their backward ops (docs/ops.md section 10) on oneDNN's pooling
// primitives, with dense NCHW operands (strided ones go through dense scratch copies), or, in
// the forward ops, channels-last x and y as they are (SY_CAP_CHANNELS_LAST).
//
// The ABI's max-pool backward gets x, not the forward's argmax, so it re-runs the forward in
// training mode to get oneDNN's workspace (the argmax positions) and then runs the backward; an x
// holding a NaN goes through max_pool_backward_if_nan instead. 2x2 max pools of stride 2 run
// ops/max_pool_kernel.h instead of oneDNN where they can (direct_pool).
// Symmetric padding: oneDNN's right padding equals the left one and its shape rule floors like
// ours. f16 runs through f32 scratch tensors.
#include <algorithm>
#include <limits>
#include <vector>

#include "cpu_info.h"
#include "dnnl_util.h"
#include "dtype.h"
#include "ops/max_pool_kernel.h"
#include "ops/ops.h"
#include "ops/strided_loop.h"
#include "ops/vector_clones.h"

namespace sy_onednn {
namespace {

using dims = dnnl::memory::dims;

struct PoolGeometry {
  int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  dims kernel, strides, padding;
};

struct PoolEntry : CachedPrimitive {
  dnnl::primitive forward;   // forward (training mode for max-pool backward)
  dnnl::primitive backward;  // backward ops only
  dnnl::memory::desc src, dst, workspace, forward_scratchpad, backward_scratchpad;
};

bool is_max(uint32_t op) {
  return op == SY_OP_MAX_POOL2D || op == SY_OP_MAX_POOL2D_BACKWARD;
}

PoolGeometry check_geometry(const OpContext& ctx, const TensorView& x, const TensorView& y) {
  const auto& p = ctx.params.pool2d;
  if (p.kernel_h < 1 || p.kernel_w < 1 || p.stride_h < 1 || p.stride_w < 1 || p.pad_h < 0 ||
      p.pad_w < 0 || p.pad_h > p.kernel_h / 2 || p.pad_w > p.kernel_w / 2) {
    ctx.fail_shape(cat("invalid params: kernel ", p.kernel_h, "x", p.kernel_w, ", stride ",
                       p.stride_h, "x", p.stride_w, ", pad ", p.pad_h, "x", p.pad_w,
                       " (pad must be at most half the kernel)"));
  }
  if (x.rank != 4 || y.rank != 4) {
    ctx.fail_shape(cat("input ", shape_string(x), " and output ", shape_string(y),
                       " must have rank 4 (NCHW)"));
  }
  PoolGeometry g;
  g.n = x.shape[0], g.c = x.shape[1], g.h = x.shape[2], g.w = x.shape[3];
  g.oh = (g.h + 2 * p.pad_h - p.kernel_h) / p.stride_h + 1;
  g.ow = (g.w + 2 * p.pad_w - p.kernel_w) / p.stride_w + 1;
  if (g.h + 2 * p.pad_h < p.kernel_h || g.w + 2 * p.pad_w < p.kernel_w) g.oh = 0;
  if (g.oh < 1 || g.ow < 1) {
    ctx.fail_shape(cat("output size is below 1 for input ", shape_string(x), " and kernel ",
                       p.kernel_h, "x", p.kernel_w));
  }
  const int64_t expected[4] = {g.n, g.c, g.oh, g.ow};
  const bool forward = ctx.op == SY_OP_MAX_POOL2D || ctx.op == SY_OP_AVG_POOL2D;
  ctx.require_shape(y, forward ? "y" : "grad_y", expected, 4);
  g.kernel = {p.kernel_h, p.kernel_w};
  g.strides = {p.stride_h, p.stride_w};
  g.padding = {p.pad_h, p.pad_w};
  return g;
}

dnnl::algorithm pool_algorithm(const OpContext& ctx) {
  if (is_max(ctx.op)) return dnnl::algorithm::pooling_max;
  return ctx.params.pool2d.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                             : dnnl::algorithm::pooling_avg_exclude_padding;
}

std::shared_ptr<PoolEntry> make_entry(const OpContext& ctx, const PoolGeometry& g, uint32_t dtype,
                                      bool backward, bool nhwc) {
  auto e = std::make_shared<PoolEntry>();
  const dnnl::engine& engine = ctx.device.engine;
  if (nhwc) {
    using tag = dnnl::memory::format_tag;
    e->src = dnnl::memory::desc({g.n, g.c, g.h, g.w}, dnnl_type(dtype), tag::nhwc);
    e->dst = dnnl::memory::desc({g.n, g.c, g.oh, g.ow}, dnnl_type(dtype), tag::nhwc);
  } else {
    e->src = dnnl_dense_desc({g.n, g.c, g.h, g.w}, dtype);
    e->dst = dnnl_dense_desc({g.n, g.c, g.oh, g.ow}, dtype);
  }
  const auto prop =
      backward ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
  dnnl::pooling_forward::primitive_desc fwd(
      {prop, pool_algorithm(ctx), e->src, e->dst, g.strides, g.kernel, g.padding, g.padding},
      primitive_attr(ctx), engine);
  e->forward = dnnl::pooling_forward(fwd);
  e->forward_scratchpad = fwd.scratchpad_desc();
  e->workspace = fwd.workspace_desc();
  if (backward) {
    dnnl::pooling_backward::primitive_desc bwd(
        {pool_algorithm(ctx), e->src, e->dst, g.strides, g.kernel, g.padding, g.padding},
        primitive_attr(ctx), engine, fwd);
    e->backward = dnnl::pooling_backward(bwd);
    e->backward_scratchpad = bwd.scratchpad_desc();
  }
  return e;
}

std::shared_ptr<const PoolEntry> get_entry(OpContext& ctx, const PoolGeometry& g, uint32_t dtype,
                                           bool backward, bool nhwc = false) {
  const auto& p = ctx.params.pool2d;
  const int threads = ctx.threads_for(g.n * g.c * g.h * g.w, kMinRowElements);
  ctx.use_threads(threads);
  CacheKeyBuilder key(ctx.op);
  key.add(threads).add(dtype).add(g.n).add(g.c).add(g.h).add(g.w);
  key.add(p.kernel_h).add(p.kernel_w).add(p.stride_h).add(p.stride_w).add(p.pad_h).add(p.pad_w);
  key.add(p.count_include_pad).add(nhwc);
  return ctx.device.primitives.get_or_create<PoolEntry>(
      key.finish(), [&] { return make_entry(ctx, g, dtype, backward, nhwc); });
}

// A dense scratch tensor for an output that is not dense, else the output itself.
TensorView dense_target(OpContext& ctx, const TensorView& out) {
  return out.is_contiguous() ? out : ctx.scratch_view(out.dtype, out.rank, out.shape);
}

// Whether any of `count` consecutive values is NaN, or equals `lowest` (the most negative finite
// value). Integer OR-reductions of the comparisons, one loop per case, so that GCC vectorises them:
// written as `found |= v != v || (lowest_too && ...)` the loop stayed scalar, and ResNet-50's
// [1, 64, 112, 112] max pool took 563 us a pass against 62 in ONNX Runtime (the pool itself
// 75-110).
template <typename T>
SY_VECTOR_CLONES bool any_nan_or_lowest(const T* x, int64_t count, bool lowest_too) {
  constexpr float kLowest = std::numeric_limits<float>::lowest();
  int32_t hits = 0;
  if (lowest_too) {
    for (int64_t i = 0; i < count; ++i) {
      const float v = load_f32(x[i]);
      hits |= static_cast<int32_t>(v != v) | static_cast<int32_t>(v == kLowest);
    }
  } else {
    for (int64_t i = 0; i < count; ++i) {
      const float v = load_f32(x[i]);
      hits |= static_cast<int32_t>(v != v);
    }
  }
  return hits != 0;
}

template <typename T>
bool span_has(OpContext& ctx, const TensorView& view, bool lowest_too) {
  const int64_t count = view.numel();
  const int used = std::min(ctx.threads_for(count), 64);
  bool found[64] = {};
  parallel_parts(count, used, [&](int64_t t, int64_t begin, int64_t end) {
    found[t] =
        any_nan_or_lowest(reinterpret_cast<const T*>(view.data) + begin, end - begin, lowest_too);
  });
  return std::any_of(found, found + used, [](bool f) { return f; });
}

// The first maximum of window (oy, ox) in row-major order, a NaN counting as one (the first NaN
// wins; docs/ops.md): its row and column in x and its value. value_at(r, c) reads x there.
struct WindowMax {
  int64_t r, c;
  float value;
};

template <typename ValueAt>
WindowMax window_first_max(const sy_pool2d_params& p, const PoolGeometry& g, int64_t oy, int64_t ox,
                           const ValueAt& value_at) {
  const int64_t r0 = std::max<int64_t>(0, oy * p.stride_h - p.pad_h);
  const int64_t r1 = std::min<int64_t>(g.h, oy * p.stride_h - p.pad_h + p.kernel_h);
  const int64_t c0 = std::max<int64_t>(0, ox * p.stride_w - p.pad_w);
  const int64_t c1 = std::min<int64_t>(g.w, ox * p.stride_w - p.pad_w + p.kernel_w);
  WindowMax best{r0, c0, value_at(r0, c0)};
  for (int64_t r = r0; r < r1 && best.value == best.value; ++r) {
    for (int64_t c = c0; c < c1; ++c) {
      const float v = value_at(r, c);
      if (v != v || v > best.value) {
        best = {r, c, v};
        if (v != v) break;
      }
    }
  }
  return best;
}

// MAX_POOL2D: a window holding a NaN gives NaN, and one of -inf only gives -inf (docs/ops.md, as
// PyTorch), where oneDNN's maximum passes over NaN and starts from the most negative finite value
// (f32: -3.4e38 for a window of -inf), which would hide a diverged model. x (dense NCHW, or
// channels-last as it is) and y each fill one span of memory: x is checked for NaN and y for
// that starting value in vectorised passes, and only when one turns up are the windows computed
// again here.
template <typename T>
void fix_max_pool(OpContext& ctx, const TensorView& x, const TensorView& y, const PoolGeometry& g) {
  if (!span_has<T>(ctx, x, false) && !span_has<T>(ctx, y, true)) return;
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t c = 0; c < g.c; ++c) {
      const auto value_at = [&](int64_t r, int64_t col) {
        const int64_t at[4] = {n, c, r, col};
        return load_f32(*reinterpret_cast<const T*>(x.element(at)));
      };
      for (int64_t oy = 0; oy < g.oh; ++oy) {
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          const int64_t out[4] = {n, c, oy, ox};
          *reinterpret_cast<T*>(y.element(out)) =
              store_f32<T>(window_first_max(ctx.params.pool2d, g, oy, ox, value_at).value);
        }
      }
    }
  }
}

// MAX_POOL2D_BACKWARD when x holds a NaN: oneDNN's workspace records the largest number of each
// window and passes over NaN, so its backward sent the gradient of a window holding a NaN to a
// number, where docs/ops.md (as PyTorch) sends it to the first NaN. x (dense) is checked in a
// vectorised pass, as the forward's y is; only when it holds a NaN is grad_x (dense) computed here,
// plane by plane, and true returned: each window's gradient added at its first maximum, in
// row-major window order, in f32 (as the reference), for any kernel, stride and padding.
template <typename T>
bool max_pool_backward_if_nan(OpContext& ctx, const TensorView& grad_y, const TensorView& x,
                              const TensorView& grad_x, const PoolGeometry& g) {
  if (!span_has<T>(ctx, x, false)) return false;
  const int64_t planes = g.n * g.c, in_plane = g.h * g.w, out_plane = g.oh * g.ow;
  const T* gy = grad_y.as<T>();
  T* gx = grad_x.as<T>();
  const int threads = ctx.threads_for(planes * in_plane, kMinRowElements);
  ctx.use_threads(threads);
  parallel_parts(planes, threads, [&](int64_t, int64_t begin, int64_t end) {
    std::vector<float> sums(static_cast<size_t>(in_plane));
    for (int64_t q = begin; q < end; ++q) {
      const T* plane = x.as<T>() + q * in_plane;
      const auto value_at = [&](int64_t r, int64_t c) { return load_f32(plane[r * g.w + c]); };
      std::fill(sums.begin(), sums.end(), 0.0f);
      for (int64_t oy = 0; oy < g.oh; ++oy) {
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          const WindowMax best = window_first_max(ctx.params.pool2d, g, oy, ox, value_at);
          sums[static_cast<size_t>(best.r * g.w + best.c)] +=
              load_f32(gy[q * out_plane + oy * g.ow + ox]);
        }
      }
      for (int64_t i = 0; i < in_plane; ++i) gx[q * in_plane + i] = store_f32<T>(sums[i]);
    }
  });
  return true;
}

// 2x2 max pools of stride 2 without padding, f32 NCHW, on an AVX-512 CPU, with rows of at least 14
// columns: ops/max_pool_kernel.h. oneDNN 2.6 pools NCHW through blocked copies of its own, and its
// backward first re-runs the forward in training mode for the argmax workspace. Per call, one
// thread of a 2-core Zen 4, medians of 200 (oneDNN -> kernel, forward / backward, us):
// [64, 32, 14, 14] 120 -> 96 / 255 -> 165; [64, 32, 16, 16] 153 -> 103 / 326 -> 185;
// [32, 64, 28, 28] 1020-1100 -> 277-291 / 1840-1940 -> 443-459. Narrower rows fill too few of the
// kernel's 16 lanes: digits-cnn's [64, 32, 8, 8] 42 -> 54 / 87 -> 90-97 and [64, 64, 4, 4] 30 -> 54
// / 73 -> 105, so they stay on oneDNN.
bool direct_pool(const OpContext& ctx, const TensorView& x, const TensorView& y) {
  const auto& p = ctx.params.pool2d;
  return is_max(ctx.op) && x.dtype == SY_DTYPE_F32 && p.kernel_h == 2 && p.kernel_w == 2 &&
         p.stride_h == 2 && p.stride_w == 2 && p.pad_h == 0 && p.pad_w == 0 && x.rank == 4 &&
         x.shape[3] >= 14 && cpu_has_avx512f() &&
         // channels-last operands keep oneDNN's nhwc path (one channel is both layouts at once)
         (x.is_contiguous() || !(x.is_channels_last() && y.is_channels_last()));
}

MaxPool2x2 pool_2x2(const PoolGeometry& g) {
  return {g.n * g.c, g.h, g.w, g.oh, g.ow};
}

void pool_forward(OpContext& ctx) {
  const TensorView& y = ctx.out[0];
  const PoolGeometry g = check_geometry(ctx, ctx.in[0], y);
  if (y.numel() == 0) return;
  TensorView target;
  if (direct_pool(ctx, ctx.in[0], y)) {
    const TensorView x = dense_copy(ctx, ctx.in[0], ctx.in[0].dtype);
    target = dense_target(ctx, y);
    const int threads = ctx.threads_for(x.numel(), kMinRowElements);
    ctx.use_threads(threads);
    max_pool_2x2_f32(pool_2x2(g), x.as<float>(), target.as<float>(), threads);
  } else {
    const bool nhwc = ctx.in[0].is_channels_last() && y.is_channels_last() &&
                      dnnl_describable(ctx.in[0]) && dnnl_describable(y);
    const TensorView x = nhwc ? ctx.in[0] : dense_copy(ctx, ctx.in[0], ctx.in[0].dtype);
    target = nhwc ? y : dense_target(ctx, y);
    auto entry = get_entry(ctx, g, x.dtype, false, nhwc);
    execute_primitive(
        ctx, entry->forward, entry->forward_scratchpad,
        {{DNNL_ARG_SRC, &entry->src, x.data}, {DNNL_ARG_DST, &entry->dst, target.data}});
    if (is_max(ctx.op)) {
      if (x.dtype == SY_DTYPE_BF16) {
        fix_max_pool<bf16_t>(ctx, x, target, g);
      } else {
        fix_max_pool<float>(ctx, x, target, g);
      }
    }
  }
  if (target.data != y.data) copy_view(target, y, ctx.threads_for(y.numel()));
}

// oneDNN's backward into target (dense); for max pooling x (dense) runs the forward first, in
// training mode, for the argmax workspace.
void dnnl_pool_backward(OpContext& ctx, const PoolGeometry& g, const TensorView& grad_y,
                        const TensorView* x, const TensorView& target) {
  auto entry = get_entry(ctx, g, grad_y.dtype, true);
  void* workspace = nullptr;
  if (x != nullptr) {
    void* y = ctx.scratch(entry->dst.get_size());
    workspace = ctx.scratch(entry->workspace.get_size());
    execute_primitive(ctx, entry->forward, entry->forward_scratchpad,
                      {{DNNL_ARG_SRC, &entry->src, x->data},
                       {DNNL_ARG_DST, &entry->dst, y},
                       {DNNL_ARG_WORKSPACE, &entry->workspace, workspace}});
  }
  execute_primitive(ctx, entry->backward, entry->backward_scratchpad,
                    {{DNNL_ARG_DIFF_DST, &entry->dst, grad_y.data},
                     {DNNL_ARG_DIFF_SRC, &entry->src, target.data},
                     {DNNL_ARG_WORKSPACE, &entry->workspace, workspace}});
}

void pool_backward(OpContext& ctx) {
  const TensorView& grad_x = ctx.out[0];
  const PoolGeometry g = check_geometry(ctx, grad_x, ctx.in[0]);
  if (grad_x.numel() == 0) return;
  const bool max = is_max(ctx.op);
  if (max) ctx.require_same_shape(ctx.in[1], "x", grad_x, "grad_x");
  const TensorView grad_y = dense_copy(ctx, ctx.in[0], ctx.in[0].dtype);
  const TensorView target = dense_target(ctx, grad_x);
  if (!max) {
    dnnl_pool_backward(ctx, g, grad_y, nullptr, target);
  } else {
    const TensorView x = dense_copy(ctx, ctx.in[1], ctx.in[1].dtype);
    if (direct_pool(ctx, ctx.in[1], grad_y)) {
      const int threads = ctx.threads_for(x.numel(), kMinRowElements);
      ctx.use_threads(threads);
      max_pool_2x2_backward_f32(pool_2x2(g), grad_y.as<float>(), x.as<float>(), target.as<float>(),
                                threads);
    } else if (!(x.dtype == SY_DTYPE_BF16
                     ? max_pool_backward_if_nan<bf16_t>(ctx, grad_y, x, target, g)
                     : max_pool_backward_if_nan<float>(ctx, grad_y, x, target, g))) {
      dnnl_pool_backward(ctx, g, grad_y, &x, target);
    }
  }
  if (target.data != grad_x.data) copy_view(target, grad_x, ctx.threads_for(grad_x.numel()));
}

}  // namespace

void run_pool2d(OpContext& ctx) {
  ctx.require_counts(1, 1);
  ctx.require_float(ctx.in[0], "x");
  ctx.require_same_dtype(ctx.in[0], "x", ctx.out[0], "y");
  run_dnnl_backed(ctx, pool_forward);
}

void run_pool2d_backward(OpContext& ctx) {
  const bool max = is_max(ctx.op);
  ctx.require_counts(max ? 2 : 1, 1);
  ctx.require_float(ctx.in[0], "grad_y");
  if (max) ctx.require_same_dtype(ctx.in[0], "grad_y", ctx.in[1], "x");
  ctx.require_same_dtype(ctx.in[0], "grad_y", ctx.out[0], "grad_x");
  run_dnnl_backed(ctx, pool_backward);
}

}  // namespace sy_onednn
