// CONV2D, CONV2D_GROUPED and their backward ops (docs/ops.md section 9) on oneDNN's convolution
// primitives. A grouped convolution's weights [O, C / G, KH, KW] are viewed as oneDNN's goihw
// [G, O / G, C / G, KH, KW] (dimension 0 split, no copy); depthwise (C / G = 1, O / G = 1 or a
// channel multiplier) then runs oneDNN's depthwise kernels.
//
// The primitives are created with format_tag::any so that oneDNN picks the blocked layouts its
// fastest kernels use; cached reorders convert the caller's NCHW/OIHW tensors (any strides) in
// and out. Padding is symmetric: oneDNN's right padding equals the left one, and its shape rule
// floors like ours. f16 runs through f32 scratch tensors.
#include <cstring>
#include <vector>

#include "cpu_info.h"
#include "dnnl_util.h"
#include "ops/conv_epilogue.h"
#include "ops/depthwise_kernel.h"
#include "ops/elementwise_functors.h"
#include "ops/elementwise_kernels.h"
#include "ops/finite_guard.h"
#include "ops/gemv.h"
#include "ops/ops.h"
#include "ops/silu_kernel.h"
#include "ops/strided_loop.h"

namespace sy_onednn {
namespace {

using dims = dnnl::memory::dims;
using tag = dnnl::memory::format_tag;

struct ConvGeometry {
  int64_t n = 0, c = 0, h = 0, w = 0, o = 0, kh = 0, kw = 0, oh = 0, ow = 0;
  int64_t groups = 1;
  dims strides, dilates, padding;

  // The weights' logical dims for oneDNN: oihw, or goihw when grouped.
  dims weight_dims() const {
    if (groups == 1) return {o, c, kh, kw};
    return {groups, o / groups, c / groups, kh, kw};
  }
};

bool is_grouped(const OpContext& ctx) {
  return ctx.op == SY_OP_CONV2D_GROUPED || ctx.op == SY_OP_CONV2D_GROUPED_BACKWARD_DATA ||
         ctx.op == SY_OP_CONV2D_GROUPED_BACKWARD_WEIGHT || ctx.op == SY_OP_CONV2D_FUSED;
}

// The caller's weights [O, C / G, KH, KW] as goihw [G, O / G, C / G, KH, KW]: dimension 0 split
// into two, whatever its stride (same memory).
TensorView weight_view(const TensorView& w, const ConvGeometry& g) {
  if (g.groups == 1) return w;
  TensorView split = w;
  split.rank = 5;
  for (int d = 4; d >= 2; --d) {
    split.shape[d] = w.shape[d - 1];
    split.strides[d] = w.strides[d - 1];
  }
  split.shape[0] = g.groups;
  split.shape[1] = g.o / g.groups;
  split.strides[1] = w.strides[0];
  split.strides[0] = w.strides[0] * (g.o / g.groups);
  return split;
}

struct ConvEntry : CachedPrimitive {
  dnnl::primitive primitive;
  ArgLayout first, second, third, fourth;  // the arguments in the order each op lists them
  ArgLayout residual;                      // CONV2D_FUSED's residual into the dst's layout
  dnnl::memory::desc scratchpad;
  bool silu_pass = false;  // bf16 SILU as activation_pass: oneDNN could not build its post-op
};

int64_t output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
  return (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

// Checks params and the shapes x [N, C, H, W], w [O, C, KH, KW], y [N, O, OH, OW].
ConvGeometry check_geometry(const OpContext& ctx, const TensorView& x, const TensorView& w,
                            const TensorView& y) {
  const auto& p = ctx.params.conv2d;
  if (p.stride_h < 1 || p.stride_w < 1 || p.pad_h < 0 || p.pad_w < 0 || p.dilation_h < 1 ||
      p.dilation_w < 1) {
    ctx.fail_shape(cat("invalid params: stride ", p.stride_h, "x", p.stride_w, ", pad ", p.pad_h,
                       "x", p.pad_w, ", dilation ", p.dilation_h, "x", p.dilation_w));
  }
  if (x.rank != 4 || w.rank != 4 || y.rank != 4) {
    ctx.fail_shape(cat("x ", shape_string(x), ", w ", shape_string(w), " and y ", shape_string(y),
                       " must all have rank 4 (NCHW, OIHW)"));
  }
  ConvGeometry g;
  g.n = x.shape[0], g.c = x.shape[1], g.h = x.shape[2], g.w = x.shape[3];
  g.o = w.shape[0], g.kh = w.shape[2], g.kw = w.shape[3];
  if (is_grouped(ctx)) g.groups = ctx.params.conv2d_grouped.groups;
  if (g.groups < 1 || g.c % g.groups != 0 || g.o % g.groups != 0) {
    ctx.fail_shape(cat("groups ", g.groups, " must be >= 1 and divide the ", g.c, " input and ",
                       g.o, " output channels"));
  }
  if (w.shape[1] * g.groups != g.c) {
    ctx.fail_shape(cat("channels differ: x ", shape_string(x), " (C=", g.c, ", ", g.groups,
                       " group(s)) vs w ", shape_string(w), " (C/groups=", w.shape[1], ")"));
  }
  g.oh = output_size(g.h, g.kh, p.stride_h, p.pad_h, p.dilation_h);
  g.ow = output_size(g.w, g.kw, p.stride_w, p.pad_w, p.dilation_w);
  if (g.oh < 1 || g.ow < 1 || g.kh < 1 || g.kw < 1) {
    ctx.fail_shape(cat("output size ", g.oh, "x", g.ow, " is below 1 for x ", shape_string(x),
                       " and w ", shape_string(w)));
  }
  const int64_t expected[4] = {g.n, g.o, g.oh, g.ow};
  const bool forward = ctx.op == SY_OP_CONV2D || ctx.op == SY_OP_CONV2D_GROUPED;
  ctx.require_shape(y, forward ? "y" : "grad_y", expected, 4);
  g.strides = {p.stride_h, p.stride_w};
  g.dilates = {p.dilation_h - 1, p.dilation_w - 1};
  g.padding = {p.pad_h, p.pad_w};
  return g;
}

dnnl::memory::desc any_desc(const dims& shape, uint32_t dtype) {
  return dnnl::memory::desc(shape, dnnl_type(dtype), tag::any);
}

TensorView describable(OpContext& ctx, const TensorView& view) {
  return dnnl_describable(view) ? view : dense_copy(ctx, view, view.dtype);
}

// A depthwise convolution (one input channel a group) does a few multiply-adds per value it loads
// and stores, so its time per flop is several times a dense one's: its flops count 8 times here.
// MobileNetV2's depthwise layers at 28x28 and below (0.85-2.7 MFLOP) then run on two threads:
// with the two ways on alternate passes of one `bench model` run (200 passes, 2-vCPU Zen 4),
// MobileNetV2 5.4% and 2.6% faster, EfficientNet-B0 level.
constexpr int64_t kDepthwiseFlopWeight = 8;

int conv_threads(OpContext& ctx, const ConvGeometry& g) {
  const double flops = 2.0 * static_cast<double>(g.n * g.o * g.oh * g.ow) *
                       static_cast<double>(g.c / g.groups * g.kh * g.kw);
  const int64_t weight = g.c / g.groups == 1 ? kDepthwiseFlopWeight : 1;
  const int threads = ctx.threads_for(static_cast<int64_t>(flops) * weight, kMinFlops);
  ctx.use_threads(threads);
  return threads;
}

CacheKey conv_key(const OpContext& ctx, int threads, std::initializer_list<const TensorView*> views,
                  bool activation_post_op = false) {
  const auto& p = ctx.params.conv2d;
  CacheKeyBuilder key(ctx.op);
  key.add(threads).add(p.stride_h).add(p.stride_w).add(p.pad_h).add(p.pad_w);
  key.add(p.dilation_h).add(p.dilation_w).add(p.has_bias);
  key.add(is_grouped(ctx) ? ctx.params.conv2d_grouped.groups : 1);
  if (ctx.op == SY_OP_CONV2D_FUSED) {
    const sy_conv2d_fused_params& f = ctx.params.conv2d_fused;
    key.add(f.activation).add(f.has_residual).add_double(f.low).add_double(f.high);
    key.add(activation_post_op ? 1 : 0);
  }
  for (const TensorView* v : views) {
    if (v) key.add_view(*v);
  }
  return key.finish();
}

// Whether the forward convolution runs on the caller's NCHW layout: a dense 1x1 convolution
// (stride 1, no padding, one group) over at least kPlainMinPixels output pixels, in f32. There
// it is one GEMM per image on oneDNN's gemm:jit, which measured as fast as or faster than the
// blocked jit_1x1 kernel before the two reorders that kernel needs (the activations to and from
// nChw16c), 10-45% faster with them: ResNet-50's and MobileNetV2's 1x1 layers at 56x56 and 28x28
// on a 2-core Zen 4. At 14x14 the two tied and at 7x7 with many channels the blocked kernel was
// up to 1.6x faster, so smaller outputs keep it.
constexpr int64_t kPlainMinPixels = 28 * 28;

bool plain_one_by_one(const OpContext& ctx, const ConvGeometry& g, uint32_t dtype) {
  const auto& p = ctx.params.conv2d;
  return dtype == SY_DTYPE_F32 && g.groups == 1 && g.kh == 1 && g.kw == 1 && p.stride_h == 1 &&
         p.stride_w == 1 && p.pad_h == 0 && p.pad_w == 0 && g.oh * g.ow >= kPlainMinPixels;
}

// The activations' layout a forward primitive is created with.
enum class ActivationLayout {
  kAny,   // blocked, of oneDNN's choosing, with cached reorders from and to the caller's layout
  kNchw,  // the caller's dense NCHW (plain_one_by_one)
  kNhwc,  // the caller's channels-last x and y (SY_CAP_CHANNELS_LAST): no reorder either side,
          // post-ops fused; oneDNN's brgconv kernels run on it as fast as on its blocked layouts
};

// The forward primitive's descriptor (the backward ops' hints take kAny).
dnnl::convolution_forward::primitive_desc forward_pd(
    const OpContext& ctx, const ConvGeometry& g, uint32_t dtype, const dnnl::memory::desc* bias,
    const dnnl::primitive_attr& attr, ActivationLayout layout = ActivationLayout::kAny) {
  auto activation = [&](const dims& shape) {
    switch (layout) {
      case ActivationLayout::kNchw:
        return dnnl::memory::desc(shape, dnnl_type(dtype), tag::nchw);
      case ActivationLayout::kNhwc:
        return dnnl::memory::desc(shape, dnnl_type(dtype), tag::nhwc);
      case ActivationLayout::kAny:
        break;
    }
    return any_desc(shape, dtype);
  };
  auto src = activation({g.n, g.c, g.h, g.w});
  auto wei = any_desc(g.weight_dims(), dtype);
  auto dst = activation({g.n, g.o, g.oh, g.ow});
  const auto prop = dnnl::prop_kind::forward_training;
  const auto alg = dnnl::algorithm::convolution_direct;
  if (bias) {
    return {{prop, alg, src, wei, *bias, dst, g.strides, g.dilates, g.padding, g.padding},
            attr,
            ctx.device.engine};
  }
  return {{prop, alg, src, wei, dst, g.strides, g.dilates, g.padding, g.padding},
          attr,
          ctx.device.engine};
}

// Whether the activation runs as our own pass after the primitive (activation_pass) rather than
// as a oneDNN post-op:
// - RELU and CLIP, whose post-ops map NaN to 0 and to `low` (oneDNN computes them with max/min
//   instructions that return their second operand when the first is NaN), where docs/ops.md says
//   NaN passes through, as PyTorch's relu and clamp do: a model gone to NaN would otherwise
//   predict numbers. The pass costs a read and a write of the output: MobileNetV2 (Clip) took
//   4.46-4.54 ms a pass against 4.02-4.45 with the post-ops (2-vCPU Zen 4, runs in turn). An
//   earlier A/B that found no cost had not noticed that the Clip pass ran scalar
//   (elementwise_kernels.h's unary_span): 6.1 ms then.
// - SILU in f32 (silu_kernel.h): oneDNN 2.6's eltwise_swish post-op doubled the time of
//   EfficientNet-B0's convolutions (a depthwise 3x3 over 144x56x56: 59 us plain, 188 us with
//   swish; the 1x1 16 -> 96 over 112x112: 196 and 438 us; 2-core Zen 4), more than a pass of
//   our own costs even where the output has left the cache. bf16 keeps the post-op.
bool own_activation(const OpContext& ctx, uint32_t dtype) {
  if (ctx.op != SY_OP_CONV2D_FUSED) return false;
  const uint32_t a = ctx.params.conv2d_fused.activation;
  return a == SY_ACTIVATION_RELU || a == SY_ACTIVATION_CLIP ||
         (a == SY_ACTIVATION_SILU && dtype == SY_DTYPE_F32);
}

// The threads for activation_pass or apply_conv_epilogue over `count` elements: from
// kMinRowElements, not kMinMemoryBoundElements, since the pass runs right after a convolution whose
// threads are still awake, and each element costs a load, a store and, for SILU, an exp and a
// reciprocal (silu_kernel.h: about 0.27 ns an element on one Zen 4 core, in cache). On one thread,
// EfficientNet-B0's 401k-element SiLU after its first depthwise layer took as long as that layer;
// MobileNetV2's Clip passes (scalar then) went from 7.0 to 6.0 ms a pass with it (2 threads).
int activation_threads(const OpContext& ctx, int64_t count) {
  return ctx.threads_for(count, kMinRowElements);
}

// RELU, CLIP or SILU in place over `view`, one dense span: the primitive's dst (own_activation).
void activation_pass(const OpContext& ctx, const TensorView& view, int threads) {
  const sy_conv2d_fused_params& f = ctx.params.conv2d_fused;
  if (f.activation == SY_ACTIVATION_SILU && view.dtype == SY_DTYPE_F32) {
    return silu_in_place(view.as<float>(), view.numel(), threads);
  }
  const auto run = [&](auto type_tag) {
    using T = decltype(type_tag);
    if (f.activation == SY_ACTIVATION_SILU) {
      run_unary_kernel<T>(view, view, threads, fn::Silu{});
    } else if (f.activation == SY_ACTIVATION_RELU) {
      run_unary_kernel<T>(view, view, threads, fn::Relu{});
    } else {
      run_unary_kernel<T>(view, view, threads, fn::Clip{f.low, f.high});
    }
  };
  if (view.dtype == SY_DTYPE_BF16) {
    run(bf16_t{});
  } else {
    run(float{});
  }
}

// Whether fused_attr gives SILU to oneDNN as a post-op (bf16; not on the plain 1x1 path).
bool silu_post_op(const OpContext& ctx, uint32_t dtype, bool plain) {
  return ctx.op == SY_OP_CONV2D_FUSED && !plain &&
         ctx.params.conv2d_fused.activation == SY_ACTIVATION_SILU && !own_activation(ctx, dtype);
}

// CONV2D_FUSED's residual and activation as oneDNN post-ops: a sum (the residual, placed in dst
// before the primitive runs), then SILU in bf16 as an eltwise op unless `silu_pass` (the others
// follow the primitive as activation_pass). The plain 1x1 path takes none: oneDNN's gemm:jit
// applies them in a slow pass of its own (MobileNetV2's twelve such layers took 28 ms with Clip
// fused that way, against 2 ms blocked), so apply_conv_epilogue follows it instead.
dnnl::primitive_attr fused_attr(const OpContext& ctx, uint32_t dtype, bool plain,
                                bool activation_post_op, bool silu_pass = false) {
  dnnl::primitive_attr attr = primitive_attr(ctx);
  if (ctx.op != SY_OP_CONV2D_FUSED || plain) return attr;
  const sy_conv2d_fused_params& f = ctx.params.conv2d_fused;
  dnnl::post_ops ops;
  if (f.has_residual != 0) ops.append_sum(1.0f);
  // oneDNN's swish keeps NaN (the special-value conformance cases check it).
  if (silu_post_op(ctx, dtype, plain) && !silu_pass) {
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_swish, 1.0f, 0.0f);
  }
  if (activation_post_op && f.activation == SY_ACTIVATION_RELU) {
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  } else if (activation_post_op && f.activation == SY_ACTIVATION_CLIP) {
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, f.low, f.high);
  }
  attr.set_post_ops(ops);
  return attr;
}

// Whether CONV2D_FUSED's RELU or CLIP may run as oneDNN's post-op (one pass over y instead of two)
// because no output can be NaN (ops/finite_guard.h): f32, no residual, weights the call promises
// constant (their |w| row sums are kept beside their other conversions in device.weights), x
// dense and, at this call, finite and small enough with the bias that nothing overflows. With the
// guard and without it on alternate passes of one `bench model` run (2-core Zen 4, 2 threads,
// fastest of 40 passes each), MobileNetV2's op times 4060 -> 3898 us a pass (its 16 -> 96
// expansion at 112x112 312 -> 271 us, the x scan included); ResNet-50 level.
bool activation_as_post_op(OpContext& ctx, const ConvGeometry& g, const TensorView& x,
                           const TensorView* bias, std::shared_ptr<const void>& kept) {
  if (ctx.op != SY_OP_CONV2D_FUSED || ctx.params.conv2d_fused.has_residual != 0) return false;
  const uint32_t a = ctx.params.conv2d_fused.activation;
  const TensorView& w = ctx.in[1];
  if ((a != SY_ACTIVATION_RELU && a != SY_ACTIVATION_CLIP) || x.dtype != SY_DTYPE_F32 ||
      w.dtype != SY_DTYPE_F32 || ctx.constant_buffer[1] == 0 || !dnnl_describable(w) ||
      !(x.is_contiguous() || x.is_channels_last())) {
    return false;
  }
  // One float per output channel, keyed as a conversion of w to this 1-D layout.
  const dnnl::memory::desc sums_desc({g.o}, dnnl::memory::data_type::f32, tag::a);
  const auto* sums =
      static_cast<const float*>(kept_conversion(ctx, 1, w, dnnl_desc(w), sums_desc, kept, [&] {
        void* out = ctx.scratch(static_cast<size_t>(g.o) * sizeof(float));
        abs_weight_sums(w.as<float>(), w.shape, w.strides, static_cast<float*>(out));
        return out;
      }));
  const uint32_t x_bits =
      max_abs_bits(x.as<float>(), x.numel(), ctx.threads_for(x.numel(), kMinRowElements));
  return outputs_stay_finite(x_bits, sums, g.o, bias != nullptr ? bias->as<float>() : nullptr,
                             bias != nullptr ? bias->strides[0] : 0);
}

// A 1x1 convolution of 1x1 images (squeeze-excitation's two layers: [N, C, 1, 1] -> [N, O, 1, 1])
// is N dot products per output channel: a few thousand multiply-adds that cost less than a oneDNN
// primitive's execution (about 13 us each, 32 of them per EfficientNet-B0 pass). Dot products
// (ops/gemv.h) in f32 for a small batch; the fused op's residual and activation as the plain 1x1
// path applies them. Returns false for anything else.
bool try_pixel_pointwise(OpContext& ctx, const ConvGeometry& g, const TensorView& x,
                         const TensorView& w, const TensorView* bias, const TensorView* residual,
                         const TensorView& y) {
  constexpr int64_t kMaxWork = int64_t{1} << 20;  // n * o * c multiply-adds
  if (x.dtype != SY_DTYPE_F32 || w.dtype != SY_DTYPE_F32 || y.dtype != SY_DTYPE_F32) return false;
  if (g.groups != 1 || g.kh != 1 || g.kw != 1 || g.h != 1 || g.w != 1 || g.oh != 1 || g.ow != 1) {
    return false;
  }
  const auto& p = ctx.params.conv2d;
  if (p.pad_h != 0 || p.pad_w != 0 || g.n * g.o * g.c > kMaxWork) return false;
  const float* xs = x.as<float>();
  const float* ws = w.as<float>();
  const float* bs = bias != nullptr ? bias->as<float>() : nullptr;
  std::vector<float> out(static_cast<size_t>(g.n * g.o));
  if ((x.strides[1] == 1 && w.strides[1] == 1) || g.c == 1) {
    GemvProblem gemv;  // vectorised dot products (ops/gemv.h)
    gemv.x = xs;
    gemv.x_row = x.strides[0];
    gemv.w = ws;
    gemv.w_row = w.strides[0];
    gemv.bias = bs;
    gemv.bias_stride = bs != nullptr ? bias->strides[0] : 0;
    gemv.y = out.data();
    gemv.y_row = g.o;
    gemv.rows = g.n, gemv.n = g.o, gemv.k = g.c;
    gemv_rows_f32(gemv, 1);
  } else {
    for (int64_t n = 0; n < g.n; ++n) {
      const float* xn = xs + n * x.strides[0];
      for (int64_t o = 0; o < g.o; ++o) {
        const float* wo = ws + o * w.strides[0];
        float acc = 0.0f;
        for (int64_t c = 0; c < g.c; ++c) acc += wo[c * w.strides[1]] * xn[c * x.strides[1]];
        out[static_cast<size_t>(n * g.o + o)] =
            acc + (bs != nullptr ? bs[o * bias->strides[0]] : 0.0f);
      }
    }
  }
  if (ctx.op == SY_OP_CONV2D_FUSED) {
    std::vector<float> r;
    if (residual != nullptr) {
      r.resize(out.size());
      const float* rs = residual->as<float>();
      for (int64_t n = 0; n < g.n; ++n) {
        for (int64_t o = 0; o < g.o; ++o) {
          r[static_cast<size_t>(n * g.o + o)] =
              rs[n * residual->strides[0] + o * residual->strides[1]];
        }
      }
    }
    apply_conv_epilogue(out.data(), residual != nullptr ? r.data() : nullptr,
                        static_cast<int64_t>(out.size()), ctx.params.conv2d_fused, 1);
  }
  float* ys = y.as<float>();
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t o = 0; o < g.o; ++o) {
      ys[n * y.strides[0] + o * y.strides[1]] = out[static_cast<size_t>(n * g.o + o)];
    }
  }
  return true;
}

// A depthwise convolution (groups = C = O) over channels-last f32 x and y on our own AVX-512
// kernel (ops/depthwise_kernel.h), with CONV2D_FUSED's residual and activation in its epilogue:
// no oneDNN primitive and no second pass over y. With the two ways on alternate passes of one
// `bench model` run (2-core Zen 4, 2 threads, fastest of 40 passes each): MobileNetV2's 17
// depthwise layers, oneDNN's kernel and our Clip pass against this one, [32, 112, 112] 105 ->
// 77 us, [144, 56, 56] 100 -> 81, [192, 28, 28] 37 -> 30, [576, 14, 14] 40 -> 31; its op times
// summed 4287 -> 4166 us. EfficientNet-B0 (SiLU, ten 5x5 layers) 6281 -> 6219 us. The weights
// are kept as [KH, KW, C] (device.weights) when the call promises them constant. Returns false
// for anything else: other dtypes, NCHW, a channel multiplier, a CPU without AVX-512.
bool try_depthwise_kernel(OpContext& ctx, const ConvGeometry& g, const TensorView& x,
                          const TensorView& w, const TensorView* bias, const TensorView* residual,
                          const TensorView& y) {
  if (x.dtype != SY_DTYPE_F32 || w.dtype != SY_DTYPE_F32 || y.dtype != SY_DTYPE_F32) return false;
  if (g.groups != g.c || g.o != g.c || g.kh > 16 || !depthwise_kernel_available()) return false;
  if (x.strides[1] != 1 || y.strides[1] != 1 ||
      (residual != nullptr && residual->strides[1] != 1)) {
    return false;
  }
  const auto& p = ctx.params.conv2d;
  DepthwiseProblem d;
  d.x = x.as<float>();
  d.x_n = x.strides[0], d.x_h = x.strides[2], d.x_w = x.strides[3];
  d.y = y.as<float>();
  d.y_n = y.strides[0], d.y_h = y.strides[2], d.y_w = y.strides[3];
  if (residual != nullptr) {
    d.residual = residual->as<float>();
    d.r_n = residual->strides[0], d.r_h = residual->strides[2], d.r_w = residual->strides[3];
  }
  if (bias != nullptr) {
    d.bias = bias->strides[0] == 1 ? bias->as<float>()
                                   : dense_copy(ctx, *bias, SY_DTYPE_F32).as<float>();
  }
  d.n = g.n, d.c = g.c, d.h = g.h, d.w = g.w, d.oh = g.oh, d.ow = g.ow, d.kh = g.kh, d.kw = g.kw;
  d.stride_h = p.stride_h, d.stride_w = p.stride_w, d.pad_h = p.pad_h, d.pad_w = p.pad_w;
  d.dilation_h = p.dilation_h, d.dilation_w = p.dilation_w;
  if (ctx.op == SY_OP_CONV2D_FUSED) {
    const sy_conv2d_fused_params& f = ctx.params.conv2d_fused;
    d.activation = f.activation;
    d.low = f.low;
    d.high = f.high;
  }
  // [C, 1, KH, KW] as [KH, KW, C]: a layout of our own, keyed apart from oneDNN's in the cache.
  const dnnl::memory::desc hwc({g.c, 1, g.kh, g.kw}, dnnl::memory::data_type::f32,
                               dims{1, g.kh * g.kw * g.c, g.kw * g.c, g.c});
  std::shared_ptr<const void> kept;
  d.weights = static_cast<const float*>(kept_conversion(ctx, 1, w, dnnl_desc(w), hwc, kept, [&] {
    void* out = ctx.scratch(hwc.get_size());
    depthwise_weights_hwc(w.as<float>(), w.strides, g.c, g.kh, g.kw, static_cast<float*>(out));
    return out;
  }));
  depthwise_nhwc_f32(d, conv_threads(ctx, g));
  return true;
}

// `view` (rank 4) as dense channels-last f32: itself where it is, else a copy in scratch.
TensorView channels_last_f32(OpContext& ctx, const TensorView& view) {
  if (view.dtype == SY_DTYPE_F32 && view.is_channels_last()) return view;
  const int64_t nhwc[4] = {view.shape[0], view.shape[2], view.shape[3], view.shape[1]};
  TensorView copy = ctx.scratch_view(SY_DTYPE_F32, 4, nhwc);
  // The copy seen as NCHW: the same shape and strides as `view`'s logical axes.
  const int64_t strides[4] = {copy.strides[0], copy.strides[3], copy.strides[1], copy.strides[2]};
  for (int d = 0; d < 4; ++d) {
    copy.shape[d] = view.shape[d];
    copy.strides[d] = strides[d];
  }
  copy_view(view, copy, ctx.threads_for(view.numel()));
  return copy;
}

void conv_forward(OpContext& ctx) {
  const bool fused = ctx.op == SY_OP_CONV2D_FUSED;
  const bool has_bias = ctx.params.conv2d.has_bias != 0;
  const bool has_residual = fused && ctx.params.conv2d_fused.has_residual != 0;
  TensorView x = ctx.in[0];
  TensorView w = ctx.in[1];
  const TensorView& y = ctx.out[0];
  const ConvGeometry g = check_geometry(ctx, x, w, y);
  TensorView bias;
  if (has_bias) {
    bias = ctx.in[2];
    ctx.require_shape(bias, "bias", &g.o, 1);
    bias = describable(ctx, bias);
  }
  TensorView residual;
  if (has_residual) {
    residual = ctx.in[has_bias ? 3 : 2];
    ctx.require_same_shape(residual, "residual", y, "y");
    residual = describable(ctx, residual);
  }
  if (y.numel() == 0) return;
  if (g.c == 0 && fused) {
    ctx.fail_shape("CONV2D_FUSED needs at least one input channel (x " + shape_string(x) + ")");
  }
  if (g.c == 0) {  // an empty sum: y is the bias (or zero) everywhere
    TensorView expanded;
    if (has_bias) {
      TensorView bias_column = bias;
      bias_column.rank = 3;  // [O, 1, 1]
      bias_column.shape[1] = bias_column.shape[2] = 1;
      bias_column.strides[1] = bias_column.strides[2] = 0;
      broadcast_view(bias_column, y.shape, 4, &expanded);
      return copy_view(expanded, y, ctx.threads_for(y.numel()));
    }
    return fill_zero(y, ctx.threads_for(y.numel()));
  }
  if (try_pixel_pointwise(ctx, g, x, w, has_bias ? &bias : nullptr,
                          has_residual ? &residual : nullptr, y)) {
    return;
  }
  if (try_depthwise_kernel(ctx, g, x, w, has_bias ? &bias : nullptr,
                           has_residual ? &residual : nullptr, y)) {
    return;
  }
  x = describable(ctx, x);
  w = weight_view(describable(ctx, w), g);
  ActivationLayout layout = ActivationLayout::kAny;
  if (x.is_channels_last() && y.is_channels_last()) {
    layout = ActivationLayout::kNhwc;
  } else if (plain_one_by_one(ctx, g, x.dtype)) {
    layout = ActivationLayout::kNchw;
  }
  const bool plain = layout == ActivationLayout::kNchw;
  // A channels-last f32 residual before an activation of our own (ResNet's blocks: Add, Relu) is
  // added in the activation's pass (apply_conv_epilogue) rather than copied into y for oneDNN's
  // sum post-op, which read and wrote the output once more: ResNet-50's 13 such layers 565-620 ->
  // 520-532 us each (ONNX Runtime 483-494), about 1 ms of its 40 a pass.
  // Where oneDNN runs its SSE4.1 kernels (onednn_legacy_sse), its depthwise convolution's sum
  // post-op reads dst at every pixel with a legacy-SSE memory operand, which faults when a pixel's
  // C floats are not a multiple of 16 bytes (SIGSEGV for C = 6 and 7, channels-last; found by the
  // drawn conformance cases under ONEDNN_MAX_CPU_ISA=AVX): there every channels-last f32 residual
  // is added in our pass, from a channels-last copy where it is stored otherwise.
  const bool nhwc_f32_residual =
      layout == ActivationLayout::kNhwc && has_residual && x.dtype == SY_DTYPE_F32;
  const bool legacy_sum = nhwc_f32_residual && onednn_legacy_sse();
  const bool residual_in_pass = legacy_sum || (nhwc_f32_residual && own_activation(ctx, x.dtype) &&
                                               residual.is_channels_last());
  const bool epilogue_pass = plain || residual_in_pass;         // no post-ops: a pass of ours after
  const bool residual_in_dst = has_residual && !epilogue_pass;  // sum post-op reads dst
  std::shared_ptr<const void> sums_kept;
  const bool activation_post_op =
      !plain && activation_as_post_op(ctx, g, x, has_bias ? &bias : nullptr, sums_kept);
  const int threads = conv_threads(ctx, g);
  auto entry = ctx.device.primitives.get_or_create<ConvEntry>(
      conv_key(ctx, threads,
               {&x, &w, has_bias ? &bias : nullptr, &y, has_residual ? &residual : nullptr},
               activation_post_op),
      [&] {
        auto e = std::make_shared<ConvEntry>();
        const dnnl::engine& engine = ctx.device.engine;
        dnnl::memory::desc bias_desc = has_bias ? dnnl_desc(bias) : dnnl::memory::desc();
        auto pd = forward_pd(ctx, g, x.dtype, has_bias ? &bias_desc : nullptr,
                             fused_attr(ctx, x.dtype, epilogue_pass, activation_post_op), layout);
        try {
          e->primitive = dnnl::convolution_forward(pd);
        } catch (const dnnl::error&) {
          // oneDNN 2.6 describes grouped bf16 convolutions with the SILU post-op on its gemm
          // implementation and then fails to build that post-op's kernel (found by the drawn
          // conformance cases: groups 2 and 3, any kernel). The primitive without it, and SILU as
          // a pass of ours after it.
          if (!silu_post_op(ctx, x.dtype, epilogue_pass)) throw;
          e->silu_pass = true;
          pd =
              forward_pd(ctx, g, x.dtype, has_bias ? &bias_desc : nullptr,
                         fused_attr(ctx, x.dtype, epilogue_pass, activation_post_op, true), layout);
          e->primitive = dnnl::convolution_forward(pd);
        }
        if (residual_in_dst)
          e->residual = make_input_layout(engine, dnnl_desc(residual), pd.dst_desc());
        e->first = make_input_layout(engine, dnnl_desc(x), pd.src_desc());
        e->second = make_input_layout(engine, dnnl_desc(w), pd.weights_desc());
        if (has_bias) e->third = make_input_layout(engine, bias_desc, bias_desc);
        e->fourth = make_output_layout(engine, dnnl_desc(y), pd.dst_desc());
        e->scratchpad = pd.scratchpad_desc();
        return e;
      });
  void* src = prepare_input(ctx, entry->first, x.data);
  std::shared_ptr<const void> kept;
  void* wei = constant_weights(ctx, entry->second, w, kept);
  void* dst = nullptr;
  if (residual_in_dst && entry->fourth.same) {
    // y is the primitive's dst (channels-last, say): the residual goes in by a strided copy,
    // whatever its own layout.
    dst = y.data;
    copy_view(residual, y, ctx.threads_for(y.numel()));
  } else if (residual_in_dst && !entry->residual.same) {
    dst = prepare_input(ctx, entry->residual, residual.data);  // fresh scratch in dst's layout
  } else {
    dst = output_target(ctx, entry->fourth, y.data);
    if (residual_in_dst) {  // the residual is already in the primitive's (scratch) dst layout
      std::memcpy(dst, residual.data, entry->fourth.internal.get_size());
    }
  }
  execute_primitive(ctx, entry->primitive, entry->scratchpad,
                    {{DNNL_ARG_SRC, &entry->first.internal, src},
                     {DNNL_ARG_WEIGHTS, &entry->second.internal, wei},
                     {DNNL_ARG_BIAS, &entry->third.internal, has_bias ? bias.data : nullptr},
                     {DNNL_ARG_DST, &entry->fourth.internal, dst}});
  if (residual_in_pass) {  // dst is y, or a dense channels-last scratch: the residual's layout
    apply_conv_epilogue(static_cast<float*>(dst), channels_last_f32(ctx, residual).as<float>(),
                        y.numel(), ctx.params.conv2d_fused, activation_threads(ctx, y.numel()));
  } else if (!plain && !activation_post_op && (own_activation(ctx, x.dtype) || entry->silu_pass)) {
    // dst is dense in the primitive's layout, whether it is y itself (which then has that layout)
    // or scratch: the activation runs over the whole span, padding included.
    const int64_t count =
        static_cast<int64_t>(entry->fourth.internal.get_size()) / sy_dtype_size(y.dtype);
    activation_pass(ctx, make_dense_view(dst, y.dtype, 1, &count), activation_threads(ctx, count));
  }
  if (fused && plain) {  // dst is dense NCHW f32 here
    const TensorView r = has_residual ? dense_copy(ctx, residual, SY_DTYPE_F32) : TensorView();
    apply_conv_epilogue(static_cast<float*>(dst), has_residual ? r.as<float>() : nullptr, y.numel(),
                        ctx.params.conv2d_fused, activation_threads(ctx, y.numel()));
  }
  finish_output(ctx, entry->fourth, dst, y.data);
}

void conv_backward_data(OpContext& ctx) {
  TensorView grad_y = ctx.in[0];
  TensorView w = ctx.in[1];
  const TensorView& grad_x = ctx.out[0];
  const ConvGeometry g = check_geometry(ctx, grad_x, w, grad_y);
  if (grad_x.numel() == 0) return;
  if (grad_y.numel() == 0) return fill_zero(grad_x, ctx.threads_for(grad_x.numel()));
  grad_y = describable(ctx, grad_y);
  w = weight_view(describable(ctx, w), g);
  const int threads = conv_threads(ctx, g);
  auto entry = ctx.device.primitives.get_or_create<ConvEntry>(
      conv_key(ctx, threads, {&grad_y, &w, &grad_x}), [&] {
        auto e = std::make_shared<ConvEntry>();
        const dnnl::engine& engine = ctx.device.engine;
        auto hint = forward_pd(ctx, g, grad_y.dtype, nullptr, primitive_attr(ctx));
        auto diff_src = any_desc({g.n, g.c, g.h, g.w}, grad_y.dtype);
        auto wei = any_desc(g.weight_dims(), grad_y.dtype);
        auto diff_dst = any_desc({g.n, g.o, g.oh, g.ow}, grad_y.dtype);
        dnnl::convolution_backward_data::primitive_desc pd(
            {dnnl::algorithm::convolution_direct, diff_src, wei, diff_dst, g.strides, g.dilates,
             g.padding, g.padding},
            primitive_attr(ctx), engine, hint);
        e->primitive = dnnl::convolution_backward_data(pd);
        e->first = make_input_layout(engine, dnnl_desc(grad_y), pd.diff_dst_desc());
        e->second = make_input_layout(engine, dnnl_desc(w), pd.weights_desc());
        e->third = make_output_layout(engine, dnnl_desc(grad_x), pd.diff_src_desc());
        e->scratchpad = pd.scratchpad_desc();
        return e;
      });
  void* diff_dst = prepare_input(ctx, entry->first, grad_y.data);
  void* wei = prepare_input(ctx, entry->second, w.data);
  void* diff_src = output_target(ctx, entry->third, grad_x.data);
  execute_primitive(ctx, entry->primitive, entry->scratchpad,
                    {{DNNL_ARG_DIFF_DST, &entry->first.internal, diff_dst},
                     {DNNL_ARG_WEIGHTS, &entry->second.internal, wei},
                     {DNNL_ARG_DIFF_SRC, &entry->third.internal, diff_src}});
  finish_output(ctx, entry->third, diff_src, grad_x.data);
}

// The backward-weights primitive for diff weights/bias in `diff_dtype` (the data dtype, or f32
// when oneDNN has no kernel writing bf16 weight gradients).
dnnl::convolution_backward_weights::primitive_desc backward_weights_pd(
    const OpContext& ctx, const ConvGeometry& g, uint32_t dtype, uint32_t diff_dtype, bool bias) {
  dnnl::memory::desc bias_desc = dnnl_dense_desc({g.o}, diff_dtype);
  auto hint = forward_pd(ctx, g, dtype, bias ? &bias_desc : nullptr, primitive_attr(ctx));
  auto src = any_desc({g.n, g.c, g.h, g.w}, dtype);
  auto diff_wei = any_desc(g.weight_dims(), diff_dtype);
  auto diff_dst = any_desc({g.n, g.o, g.oh, g.ow}, dtype);
  const auto alg = dnnl::algorithm::convolution_direct;
  if (bias) {
    return {{alg, src, diff_wei, bias_desc, diff_dst, g.strides, g.dilates, g.padding, g.padding},
            primitive_attr(ctx),
            ctx.device.engine,
            hint};
  }
  return {{alg, src, diff_wei, diff_dst, g.strides, g.dilates, g.padding, g.padding},
          primitive_attr(ctx),
          ctx.device.engine,
          hint};
}

// Whether some weight tap along one axis reads only padding at every output position (a 4-wide
// kernel over a 1-column image padded by 3): its gradient is 0.
bool axis_has_padding_only_tap(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                               int64_t dilation, int64_t pad) {
  for (int64_t k = 0; k < kernel; ++k) {
    bool reads_data = false;
    for (int64_t i = 0; i < out && !reads_data; ++i) {
      const int64_t at = i * stride - pad + k * dilation;
      reads_data = at >= 0 && at < in;
    }
    if (!reads_data) return true;
  }
  return false;
}

// oneDNN 2.6's bf16 backward-weights kernel (AVX-512) reads scratchpad it never wrote for such
// taps: their gradients came out as whatever the workspace held before (found by the drawn
// conformance cases: 2.9e38 or NaN where the answer is 0). Those geometries get a zeroed
// scratchpad; F32, and F16 (run through F32), were right without it.
bool needs_zeroed_scratchpad(const ConvGeometry& g, uint32_t dtype) {
  return dtype == SY_DTYPE_BF16 &&
         (axis_has_padding_only_tap(g.h, g.oh, g.kh, g.strides[0], g.dilates[0] + 1,
                                    g.padding[0]) ||
          axis_has_padding_only_tap(g.w, g.ow, g.kw, g.strides[1], g.dilates[1] + 1, g.padding[1]));
}

void conv_backward_weight(OpContext& ctx) {
  const bool has_bias = ctx.params.conv2d.has_bias != 0;
  TensorView grad_y = ctx.in[0];
  TensorView x = ctx.in[1];
  const TensorView& grad_w = ctx.out[0];
  const ConvGeometry g = check_geometry(ctx, x, grad_w, grad_y);
  if (has_bias) ctx.require_shape(ctx.out[1], "grad_bias", &g.o, 1);
  if (grad_w.numel() == 0 && (!has_bias || ctx.out[1].numel() == 0)) return;
  if (grad_y.numel() == 0 || x.numel() == 0) {  // nothing summed: zero gradients
    fill_zero(grad_w, 1);
    if (has_bias) fill_zero(ctx.out[1], 1);
    return;
  }
  grad_y = describable(ctx, grad_y);
  x = describable(ctx, x);
  const TensorView grad_w_view = weight_view(grad_w, g);
  const int threads = conv_threads(ctx, g);
  auto entry = ctx.device.primitives.get_or_create<ConvEntry>(
      conv_key(ctx, threads, {&grad_y, &x, &grad_w_view, has_bias ? &ctx.out[1] : nullptr}), [&] {
        auto e = std::make_shared<ConvEntry>();
        const dnnl::engine& engine = ctx.device.engine;
        dnnl::convolution_backward_weights::primitive_desc pd;
        try {
          pd = backward_weights_pd(ctx, g, x.dtype, x.dtype, has_bias);
        } catch (const dnnl::error&) {
          pd = backward_weights_pd(ctx, g, x.dtype, SY_DTYPE_F32, has_bias);
        }
        e->primitive = dnnl::convolution_backward_weights(pd);
        e->first = make_input_layout(engine, dnnl_desc(grad_y), pd.diff_dst_desc());
        e->second = make_input_layout(engine, dnnl_desc(x), pd.src_desc());
        e->third = make_output_layout(engine, dnnl_desc(grad_w_view), pd.diff_weights_desc());
        if (has_bias) {
          e->fourth = make_output_layout(engine, dnnl_desc(ctx.out[1]), pd.diff_bias_desc());
        }
        e->scratchpad = pd.scratchpad_desc();
        return e;
      });
  void* diff_dst = prepare_input(ctx, entry->first, grad_y.data);
  void* src = prepare_input(ctx, entry->second, x.data);
  void* diff_wei = output_target(ctx, entry->third, grad_w.data);
  void* diff_bias = has_bias ? output_target(ctx, entry->fourth, ctx.out[1].data) : nullptr;
  execute_primitive(ctx, entry->primitive, entry->scratchpad,
                    {{DNNL_ARG_DIFF_DST, &entry->first.internal, diff_dst},
                     {DNNL_ARG_SRC, &entry->second.internal, src},
                     {DNNL_ARG_DIFF_WEIGHTS, &entry->third.internal, diff_wei},
                     {DNNL_ARG_DIFF_BIAS, &entry->fourth.internal, diff_bias}},
                    needs_zeroed_scratchpad(g, x.dtype));
  finish_output(ctx, entry->third, diff_wei, grad_w.data);
  if (has_bias) finish_output(ctx, entry->fourth, diff_bias, ctx.out[1].data);
}

void check_dtypes(OpContext& ctx, const char* first, const char* second, const char* out) {
  ctx.require_float(ctx.in[0], first);
  ctx.require_same_dtype(ctx.in[0], first, ctx.in[1], second);
  ctx.require_same_dtype(ctx.in[0], first, ctx.out[0], out);
}

}  // namespace

void run_conv2d(OpContext& ctx) {
  const bool has_bias = ctx.params.conv2d.has_bias != 0;
  ctx.require_counts(has_bias ? 3 : 2, 1);
  check_dtypes(ctx, "x", "w", "y");
  if (has_bias) ctx.require_same_dtype(ctx.in[0], "x", ctx.in[2], "bias");
  run_dnnl_backed(ctx, conv_forward);
}

void run_conv2d_fused(OpContext& ctx) {
  const sy_conv2d_fused_params& f = ctx.params.conv2d_fused;
  const bool has_bias = f.conv.conv.has_bias != 0;
  if (f.has_residual > 1 || f.activation > SY_ACTIVATION_SILU ||
      (f.activation == SY_ACTIVATION_CLIP && !(f.low <= f.high))) {
    ctx.fail_shape(
        cat("params.conv2d_fused needs has_residual 0 or 1, an activation 0-3 and, for "
            "CLIP, low <= high; got has_residual ",
            f.has_residual, ", activation ", f.activation, ", low ", f.low, ", high ", f.high));
  }
  ctx.require_counts(2 + (has_bias ? 1 : 0) + (f.has_residual != 0 ? 1 : 0), 1);
  check_dtypes(ctx, "x", "w", "y");
  if (has_bias) ctx.require_same_dtype(ctx.in[0], "x", ctx.in[2], "bias");
  if (f.has_residual != 0) {
    ctx.require_same_dtype(ctx.in[0], "x", ctx.in[has_bias ? 3 : 2], "residual");
  }
  run_dnnl_backed(ctx, conv_forward);
}

void run_conv2d_backward_data(OpContext& ctx) {
  ctx.require_counts(2, 1);
  check_dtypes(ctx, "grad_y", "w", "grad_x");
  run_dnnl_backed(ctx, conv_backward_data);
}

void run_conv2d_backward_weight(OpContext& ctx) {
  const bool has_bias = ctx.params.conv2d.has_bias != 0;
  ctx.require_counts(2, has_bias ? 2 : 1);
  check_dtypes(ctx, "grad_y", "x", "grad_w");
  if (has_bias) ctx.require_same_dtype(ctx.in[0], "grad_y", ctx.out[1], "grad_bias");
  run_dnnl_backed(ctx, conv_backward_weight);
}

}  // namespace sy_onednn
