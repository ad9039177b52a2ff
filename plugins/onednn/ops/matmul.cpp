// MATMUL (docs/ops.md section 2) on oneDNN's matmul primitive.
//
// Transposes are strides in the memory descriptors, batch broadcasting is oneDNN's size-1 batch
// dims, the bias is the primitive's bias argument. When oneDNN would fall back to its reference
// kernel for the given strides, the operands are copied to dense scratch first (a copy is O(n^2),
// the product O(n^3)). Some transposed `a` are copied row-major first too (kAliasingStride). f16
// runs through f32 scratch tensors: oneDNN 2.6 has no f16 matmul on CPUs without AVX512-FP16.
#include <algorithm>
#include <cstring>

#include "cpu_info.h"
#include "dnnl_util.h"
#include "ops/gemv.h"
#include "ops/ops.h"
#include "ops/strided_loop.h"

namespace sy_onednn {
namespace {

// oneDNN 2.6's gemm:jit runs a transposed (column-major) `a` whose leading dimension is a multiple
// of 1024 floats (4 KiB: its columns alias in the cache) 1.5-1.8x slower than a row-major one once
// K is long: 1024x3200x256 f32 on one AVX2 core takes 64 ms, against 40 for a tiled-transpose copy
// and the row-major product. Weight gradients with 1024 outputs, grad^T x over batch x time rows
// (an LSTM's 4 x 256 gates, a feed-forward layer of 1024), are such products. Other leading
// dimensions measured 0.8-1.1x either way, so they are left alone.
constexpr int64_t kTransposedAMinK = 1024;
constexpr int64_t kAliasingStride = 1024;

// Whether `a`, as oneDNN sees it, is column-major in its last two dimensions with a leading
// dimension that aliases in the cache.
bool aliasing_column_major(const TensorView& a) {
  const int r = a.rank;
  return a.shape[r - 1] > 1 && a.shape[r - 2] > 1 && a.strides[r - 2] == 1 &&
         a.strides[r - 1] % kAliasingStride == 0;
}

struct MatmulShape {
  int64_t m = 0, n = 0, k = 0;
  int rank = 0;  // of the output
  int64_t batch = 1;
};

// Whether sgemm can read the last two axes of `v` as one stored matrix: the axis
// `unit_axis_from_end` from the end (1: the last, a row-major matrix; 2: the one before, a
// column-major one) has unit stride, and the other's stride, returned in `ld`, is at least the
// unit axis's size.
bool sgemm_layout(const TensorView& v, int unit_axis_from_end, int64_t* ld) {
  const int r = v.rank;
  const int unit = r - unit_axis_from_end;
  const int other = unit_axis_from_end == 1 ? r - 2 : r - 1;
  if (v.shape[unit] > 1 && v.strides[unit] != 1) return false;
  *ld = std::max<int64_t>(v.strides[other], 1);
  return *ld >= v.shape[unit];
}

// On AVX-512 CPUs the same products (a transposed in memory, K >= kTransposedAMinK: the weight
// gradients grad^T x) run best on oneDNN's sgemm reading `a` in place: the text RNN's
// [6400, 1024]^T x [6400, 2000] took 122 ms there, against 129 for the matmul primitive reading it
// in place and 137 + 2 for the row-major copy and product, on a 2-core Zen 4 (AVX-512).
// out = a^T-in-memory x b as one sgemm, for f32 2-D products (size-1 batch axes) without bias
// whose `a` is column-major: the weight gradients above. Returns false where it does not apply.
bool try_transposed_a_sgemm(OpContext& ctx, const TensorView& a, const TensorView& b,
                            const TensorView& out, const MatmulShape& s, int threads) {
  if (!cpu_has_avx512f() || s.batch != 1 || s.k < kTransposedAMinK || a.dtype != SY_DTYPE_F32 ||
      b.dtype != SY_DTYPE_F32 || out.dtype != SY_DTYPE_F32 || ctx.params.matmul.has_bias) {
    return false;
  }
  int64_t lda = 0, ldb = 0, ldc = 0;
  if (s.m < 2 || !sgemm_layout(a, 2, &lda) || !sgemm_layout(out, 1, &ldc)) return false;
  char tb = 'N';
  if (!sgemm_layout(b, 1, &ldb)) {
    if (!sgemm_layout(b, 2, &ldb)) return false;
    tb = 'T';
  }
  ctx.use_threads(threads);
  if (dnnl_sgemm('T', tb, s.m, s.n, s.k, 1.0f, a.as<float>(), lda, b.as<float>(), ldb, 0.0f,
                 out.as<float>(), ldc) != dnnl_success) {
    return false;
  }
  return true;
}

// out = a b (+ bias) as dot products (ops/gemv.h) for f32 products of at most kGemvMaxRows rows
// whose b, as oneDNN sees it, is a transposed [N, K] matrix with rows of unit stride that the call
// promised constant: an ONNX Linear or Gemm weight at batch 1, which oneDNN would otherwise pack.
// Only those: a weight being trained keeps oneDNN's kernels at every batch size, whose sums for a
// row do not depend on the other rows (scikit-learn's check_methods_subset_invariance asks that
// of predictions, to 1e-7). Returns false where it does not apply.
bool try_few_rows_gemv(OpContext& ctx, const TensorView& a, const TensorView& b,
                       const TensorView* bias, const TensorView& out, const MatmulShape& s) {
  const int r = s.rank;
  if (a.dtype != SY_DTYPE_F32 || s.batch != 1 || s.m > kGemvMaxRows || s.k < 1) return false;
  if (ctx.constant_buffer[1] == 0 || b.data != ctx.in[1].data) return false;
  if ((a.strides[r - 1] != 1 && s.k > 1) || (b.strides[r - 2] != 1 && s.k > 1)) return false;
  if (bias != nullptr && bias->strides[r - 2] != 0 && s.m > 1) return false;
  GemvProblem p;
  p.x = a.as<float>();
  p.x_row = a.strides[r - 2];
  p.w = b.as<float>();
  p.w_row = b.strides[r - 1];
  if (bias != nullptr) {
    p.bias = bias->as<float>();
    // A bias of one column ([1], [M, 1]) broadcasts over the columns: stride 0.
    p.bias_stride = bias->shape[r - 1] == 1 ? 0 : bias->strides[r - 1];
  }
  p.y = out.as<float>();
  p.y_row = out.strides[r - 2];
  p.y_col = out.strides[r - 1];
  p.rows = s.m, p.n = s.n, p.k = s.k;
  // Memory-bound: split by the weight's size, as plain loops are.
  gemv_rows_f32(p, ctx.threads_for(s.n * s.k, kMinMemoryBoundElements));
  return true;
}

struct MatmulEntry : CachedPrimitive {
  dnnl::primitive primitive;
  dnnl::memory::desc a, b, bias, out, scratchpad;
  bool dense = false;  // operands must be copied to dense scratch first
  // b's layout for the primitive: the caller's, or, for a b the call promised constant
  // (SY_CALL_CONSTANT_WEIGHTS: an ONNX initializer), one of oneDNN's choosing, converted once and
  // kept in device.weights, since a transposed [N, K] weight as oneDNN 2.6 reads it in place is
  // slow at few rows (a [1, 256] x [2000, 256]^T product: 42 us against 12.6 us packed, on a
  // 2-core Zen 4).
  ArgLayout b_layout;
};

// The operand as oneDNN sees it: rank `rank`, transposed if asked, stride-0 batch axes as size 1.
TensorView matmul_operand(const TensorView& view, bool transpose, int rank) {
  TensorView result;
  result.data = view.data;
  result.dtype = view.dtype;
  result.rank = rank;
  const int shift = rank - view.rank;
  for (int d = 0; d < rank; ++d) {
    result.shape[d] = d < shift ? 1 : view.shape[d - shift];
    result.strides[d] = d < shift ? 0 : view.strides[d - shift];
  }
  if (transpose) {
    std::swap(result.shape[rank - 1], result.shape[rank - 2]);
    std::swap(result.strides[rank - 1], result.strides[rank - 2]);
  }
  for (int d = 0; d < rank - 2; ++d) {
    if (result.strides[d] == 0) result.shape[d] = 1;
  }
  return result;
}

MatmulShape check_shapes(const OpContext& ctx, const TensorView& a, const TensorView& b,
                         const TensorView& out) {
  const auto& p = ctx.params.matmul;
  if (a.rank < 2 || b.rank < 2) {
    ctx.fail_shape(cat("operands need rank >= 2: a ", shape_string(a), ", b ", shape_string(b)));
  }
  MatmulShape s;
  s.m = p.transpose_a ? a.shape[a.rank - 1] : a.shape[a.rank - 2];
  s.k = p.transpose_a ? a.shape[a.rank - 2] : a.shape[a.rank - 1];
  int64_t kb = p.transpose_b ? b.shape[b.rank - 1] : b.shape[b.rank - 2];
  s.n = p.transpose_b ? b.shape[b.rank - 2] : b.shape[b.rank - 1];
  if (s.k != kb) {
    ctx.fail_shape(cat("inner dimensions differ: a ", shape_string(a), " (K=", s.k, ") vs b ",
                       shape_string(b), " (K=", kb, ")"));
  }
  s.rank = std::max(a.rank, b.rank);
  int64_t expected[SY_MAX_RANK] = {};
  for (int d = 0; d < s.rank - 2; ++d) {
    int da = d - (s.rank - a.rank);
    int db = d - (s.rank - b.rank);
    int64_t sa = da >= 0 ? a.shape[da] : 1;
    int64_t sb = db >= 0 ? b.shape[db] : 1;
    if (sa != sb && sa != 1 && sb != 1) {
      ctx.fail_shape(
          cat("batch dimensions do not broadcast: a ", shape_string(a), ", b ", shape_string(b)));
    }
    expected[d] = sa == 1 ? sb : sa;
    s.batch *= expected[d];
  }
  expected[s.rank - 2] = s.m;
  expected[s.rank - 1] = s.n;
  ctx.require_shape(out, "out", expected, s.rank);
  return s;
}

// The primitive for these operands: as they are (dense = false), or for dense copies of them;
// with b in a layout of oneDNN's choosing where `pack_b` (a constant b, converted once).
std::shared_ptr<MatmulEntry> create_entry(const OpContext& ctx, const TensorView& a,
                                          const TensorView& b, const TensorView* bias,
                                          const TensorView& out, bool dense, bool pack_b) {
  auto entry = std::make_shared<MatmulEntry>();
  auto desc_of = [dense](const TensorView& v) {
    return dense ? dnnl_dense_desc(dnnl_desc(v).dims(), v.dtype) : dnnl_desc(v);
  };
  entry->dense = dense;
  entry->a = desc_of(a);
  const dnnl::memory::desc b_user = desc_of(b);
  entry->b =
      pack_b ? dnnl::memory::desc(b_user.dims(), dnnl_type(b.dtype), dnnl::memory::format_tag::any)
             : b_user;
  entry->out = desc_of(out);
  if (bias) entry->bias = desc_of(*bias);
  dnnl::matmul::desc desc = bias ? dnnl::matmul::desc(entry->a, entry->b, entry->bias, entry->out)
                                 : dnnl::matmul::desc(entry->a, entry->b, entry->out);
  dnnl::matmul::primitive_desc pd(desc, primitive_attr(ctx), ctx.device.engine);
  entry->primitive = dnnl::matmul(pd);
  entry->scratchpad = pd.scratchpad_desc();
  if (!dense && std::strncmp(pd.impl_info_str(), "ref", 3) == 0) return nullptr;
  if (pack_b) entry->b = pd.weights_desc();
  entry->b_layout = make_input_layout(ctx.device.engine, b_user, entry->b);  // same unless packed
  return entry;
}

// out = 0 (+ bias): the K = 0 product.
void write_bias_or_zero(OpContext& ctx, const TensorView* bias, const TensorView& out) {
  if (bias) {
    TensorView expanded;
    broadcast_view(*bias, out.shape, out.rank, &expanded);
    copy_view(expanded, out, ctx.threads_for(out.numel()));
    return;
  }
  fill_zero(out, ctx.threads_for(out.numel()));
}

void run_matmul_f32_bf16(OpContext& ctx) {
  const auto& p = ctx.params.matmul;
  const TensorView& out = ctx.out[0];
  const MatmulShape s = check_shapes(ctx, ctx.in[0], ctx.in[1], out);
  const TensorView* bias_in = p.has_bias ? &ctx.in[2] : nullptr;
  TensorView bias;
  if (bias_in && !broadcast_view(*bias_in, out.shape, out.rank, &bias)) {
    ctx.fail_shape(cat("bias ", shape_string(*bias_in), " does not broadcast to the output ",
                       shape_string(out)));
  }
  if (out.numel() == 0) return;
  if (s.k == 0) return write_bias_or_zero(ctx, bias_in, out);
  if (bias_in) bias = matmul_operand(*bias_in, false, s.rank);

  TensorView a = matmul_operand(ctx.in[0], p.transpose_a != 0, s.rank);
  TensorView b = matmul_operand(ctx.in[1], p.transpose_b != 0, s.rank);
  const double flops = 2.0 * static_cast<double>(s.batch * s.m) * static_cast<double>(s.n * s.k);
  const int threads = ctx.threads_for(static_cast<int64_t>(flops), kMinFlops);
  if (try_transposed_a_sgemm(ctx, a, b, out, s, threads)) return;
  if (try_few_rows_gemv(ctx, a, b, bias_in ? &bias : nullptr, out, s)) return;
  if (s.k >= kTransposedAMinK && aliasing_column_major(a)) a = dense_copy(ctx, a, a.dtype);
  bool describable =
      dnnl_describable(a) && dnnl_describable(b) && (!bias_in || dnnl_describable(bias));
  ctx.use_threads(threads);
  // A constant b read in place (not a copy of it) is kept in the primitive's layout.
  const bool pack_b = describable && ctx.constant_buffer[1] != 0 && b.data == ctx.in[1].data;
  CacheKeyBuilder key(ctx.op);
  key.add(threads).add_view(a).add_view(b).add_view(out).add(bias_in != nullptr).add(pack_b);
  if (bias_in) key.add_view(bias);
  auto entry = ctx.device.primitives.get_or_create<MatmulEntry>(key.finish(), [&] {
    std::shared_ptr<MatmulEntry> made;
    if (describable) made = create_entry(ctx, a, b, bias_in ? &bias : nullptr, out, false, pack_b);
    if (!made) made = create_entry(ctx, a, b, bias_in ? &bias : nullptr, out, true, false);
    return made;
  });
  TensorView out_target = out;
  if (entry->dense) {
    a = dense_copy(ctx, a, a.dtype);
    b = dense_copy(ctx, b, b.dtype);
    if (bias_in) bias = dense_copy(ctx, bias, bias.dtype);
    if (!out.is_contiguous()) out_target = ctx.scratch_view(out.dtype, out.rank, out.shape);
  }
  std::shared_ptr<const void> kept;  // a kept conversion of b, alive while the primitive runs
  void* b_data = constant_weights(ctx, entry->b_layout, b, kept);
  execute_primitive(ctx, entry->primitive, entry->scratchpad,
                    {{DNNL_ARG_SRC, &entry->a, a.data},
                     {DNNL_ARG_WEIGHTS, &entry->b, b_data},
                     {DNNL_ARG_BIAS, &entry->bias, bias_in ? bias.data : nullptr},
                     {DNNL_ARG_DST, &entry->out, out_target.data}});
  if (out_target.data != out.data) copy_view(out_target, out, ctx.threads_for(out.numel()));
}

}  // namespace

void run_matmul(OpContext& ctx) {
  const bool has_bias = ctx.params.matmul.has_bias != 0;
  ctx.require_counts(has_bias ? 3 : 2, 1);
  ctx.require_float(ctx.in[0], "a");
  ctx.require_same_dtype(ctx.in[0], "a", ctx.in[1], "b");
  ctx.require_same_dtype(ctx.in[0], "a", ctx.out[0], "out");
  if (has_bias) ctx.require_same_dtype(ctx.in[0], "a", ctx.in[2], "bias");
  run_dnnl_backed(ctx, run_matmul_f32_bf16);
}

}  // namespace sy_onednn
