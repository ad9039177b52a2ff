// SCALED_DOT_PRODUCT_ATTENTION and its backward (docs/ops.md section 18) in f32, two ways:
// - batched, where one batch entry's scores fit kBatchedScoreBytes: for a group of entries,
//   S = Q K^T as one oneDNN matmul over every head, the softmax (mask, causal limit, dropout) on
//   S in place in parallel rows, O = P V as one more; the backward likewise, five batched
//   products around P rebuilt from the forward's log-sum-exp and dS in place;
// - tiled, for longer sequences: per (b, h) and block of kRows queries, S = Q K^T * scale with
//   oneDNN's sgemm into the thread's scratch, the softmax in place, O = P V; a causal block stops
//   at its last query's key, and nothing larger than kRows x Tk per thread is in memory. The
//   backward accumulates dK and dV over the blocks of one (b, h), in parallel over (b, h). q, k,
//   v and out are used in place when each row is dense (unit stride on D) at any row, head and
//   batch strides: the [B, T, H, D] views of a projection split into heads.
// f16 and bf16 run through f32 copies (a broadcast mask's copy keeps its stride-0 axes).
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ops/fast_math.h"
#include "ops/ops.h"
#include "ops/vector_clones.h"
#include "switchyard/plugin_support/philox.h"

namespace sy_onednn {
namespace {

constexpr int64_t kRows = 64;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
// Scores of this many bytes per batch entry at most take the batched path.
constexpr int64_t kBatchedScoreBytes = int64_t{8} << 20;

// The operands of one (b, h): a row-major matrix with leading dimension ld.
struct Matrix {
  float* data = nullptr;
  int64_t ld = 0;
  float* row(int64_t i) const { return data + i * ld; }
};

// An f32 view of [B, H, T, C] whose rows sgemm can read or write in place, or a dense scratch
// copy (inputs) or scratch target (outputs, copied back by finish()).
struct Operand {
  TensorView view;  // what the kernel uses
  TensorView user;  // the caller's tensor
  bool staged = false;

  Matrix at(int64_t b, int64_t h) const {
    const auto* base = reinterpret_cast<float*>(view.data);
    const int64_t rows = view.shape[2], cols = view.shape[3];
    return {const_cast<float*>(base) + b * view.strides[0] + h * view.strides[1],
            rows > 1 ? view.strides[2] : cols};
  }
};

bool rows_dense(const TensorView& v) {
  return v.dtype == SY_DTYPE_F32 && (v.strides[3] == 1 || v.shape[3] == 1) &&
         (v.shape[2] == 1 || v.strides[2] >= v.shape[3]);
}

Operand input_operand(OpContext& ctx, const TensorView& view) {
  if (rows_dense(view)) return {view, view, false};
  return {dense_copy(ctx, view, SY_DTYPE_F32), view, true};
}

Operand output_operand(OpContext& ctx, const TensorView& view) {
  if (rows_dense(view)) return {view, view, false};
  return {ctx.scratch_view(SY_DTYPE_F32, view.rank, view.shape), view, true};
}

void finish(OpContext& ctx, const Operand& out) {
  if (out.staged) copy_view(out.view, out.user, ctx.threads_for(out.user.numel()));
}

struct Problem {
  int64_t b = 0, h = 0, tq = 0, tk = 0, d = 0, dv = 0;
  sy_attention_params p{};
  const TensorView* mask = nullptr;  // any strides (0 broadcasts), f32

  // The keys a block of queries [r0, r0 + rows) may see: all, or up to its last query (causal).
  int64_t keys_for(int64_t r0, int64_t rows) const {
    return p.causal != 0 ? std::min(tk, r0 + rows) : tk;
  }
  int64_t blocks() const { return (tq + kRows - 1) / kRows; }
  // The keys query i may see among the first `keys`: all, or up to itself (causal).
  int64_t visible(int64_t i, int64_t keys) const {
    return p.causal != 0 ? std::min(keys, i + 1) : keys;
  }
  // Whether one batch entry's scores fit the batched path, and how many entries it takes at once.
  bool batched() const { return h * tq * tk * 4 <= kBatchedScoreBytes; }
  int64_t batch_group() const {
    return std::clamp<int64_t>(kBatchedScoreBytes / (h * tq * tk * 4), 1, b);
  }
};

// Element [b, h, i] of a rank-3 f32 view (lse), or [b, h, i, 0] of a rank-4 one (a row).
float* f32_at(const TensorView& v, int64_t b, int64_t h, int64_t i) {
  return reinterpret_cast<float*>(v.data) + b * v.strides[0] + h * v.strides[1] + i * v.strides[2];
}

Problem checked_problem(OpContext& ctx, int first) {
  Problem pr;
  pr.p = ctx.params.attention;
  const sy_attention_params& p = pr.p;
  if (p.causal > 1 || p.has_mask > 1) {
    ctx.fail_shape(cat("params.attention.causal and has_mask must be 0 or 1, got ", p.causal,
                       " and ", p.has_mask));
  }
  if (!(p.scale > 0.0) || !std::isfinite(p.scale)) {
    ctx.fail_shape(cat("params.attention.scale must be positive and finite, got ", p.scale));
  }
  if (!(p.dropout_p >= 0.0 && p.dropout_p < 1.0)) {
    ctx.fail_shape(cat("params.attention.dropout_p must be in [0, 1), got ", p.dropout_p));
  }
  const TensorView& q = ctx.in[first];
  const TensorView& k = ctx.in[first + 1];
  const TensorView& v = ctx.in[first + 2];
  ctx.require_float(q, "q");
  ctx.require_same_dtype(k, "k", q, "q");
  ctx.require_same_dtype(v, "v", q, "q");
  if (q.rank != 4 || k.rank != 4 || v.rank != 4) {
    ctx.fail_shape(cat("q, k and v must be [B, H, T, D], got ", describe(q), ", ", describe(k),
                       " and ", describe(v)));
  }
  pr.b = q.shape[0], pr.h = q.shape[1], pr.tq = q.shape[2], pr.d = q.shape[3];
  pr.tk = k.shape[2], pr.dv = v.shape[3];
  if (pr.b < 1 || pr.h < 1 || pr.tq < 1 || pr.tk < 1 || pr.d < 1 || pr.dv < 1) {
    ctx.fail_shape(cat("needs at least one query, one key and D, Dv >= 1; got q ", describe(q),
                       " and v ", describe(v)));
  }
  const int64_t k_shape[] = {pr.b, pr.h, pr.tk, pr.d}, v_shape[] = {pr.b, pr.h, pr.tk, pr.dv};
  ctx.require_shape(k, "k", k_shape, 4);
  ctx.require_shape(v, "v", v_shape, 4);
  return pr;
}

void check_mask(OpContext& ctx, Problem& pr, int index) {
  if (pr.p.has_mask == 0) return;
  const TensorView& mask = ctx.in[index];
  ctx.require_same_dtype(mask, "mask", ctx.in[index == 3 ? 0 : 1], "q");
  const int64_t shape[] = {pr.b, pr.h, pr.tq, pr.tk};
  ctx.require_shape(mask, "mask", shape, 4);
  pr.mask = &ctx.in[index];
}

// 0 or `keep` for `count` consecutive Philox counters from `first`: keep where the uniform number
// exceeds `threshold`. The lanes are independent, so the loop vectorises (as RANDOM_UNIFORM's).
SY_VECTOR_CLONES void dropout_factors(uint64_t seed, uint64_t first, int64_t count, float threshold,
                                      float keep, float* factors) {
#pragma omp simd
  for (int64_t j = 0; j < count; ++j) {
    const SyPhiloxWords words = sy_philox_for_element(seed, first, static_cast<uint64_t>(j));
    const float u = static_cast<float>(words.w[0] >> 8) * 5.9604644775390625e-08f;
    factors[j] = u > threshold ? keep : 0.0f;
  }
}

// The dropout factors of row i: 0 or 1 / (1 - p) per key (docs/ops.md section 18).
void dropout_row(const Problem& pr, int64_t b, int64_t h, int64_t i, float* factors, int64_t keys) {
  const auto row = static_cast<uint64_t>(((b * pr.h + h) * pr.tq + i) * pr.tk);
  dropout_factors(pr.p.seed, pr.p.offset + row, keys, static_cast<float>(pr.p.dropout_p),
                  static_cast<float>(1.0 / (1.0 - pr.p.dropout_p)), factors);
}

// The largest of s[0, count) that is not NaN (-inf when there is none), as `v > m ? v : m` over
// the row gives it. GCC leaves a max reduction over floats scalar without -ffinite-math-only (a
// NaN would make the order matter), and an unrolled 16-lane version stayed 16 scalar maxss.
// Sixteen lanes in one GCC vector (a zmm register in the AVX-512 clone, four xmm in the baseline)
// compare and select in one instruction each: with the two ways on alternate calls of one `bench
// model` run (BERT, batch 1, 240 calls each, 2-core Zen 4, 2 threads), a
// scaled_dot_product_attention call took 401-405 us against 444 at the fastest, 482-538 against
// 528-572 at the median. Any order gives the same maximum, so the bits do not change.
constexpr int64_t kLanes = 16;
typedef float FloatLanes __attribute__((vector_size(kLanes * sizeof(float))));

// s[0, count) folded into `init` by `op(accumulator&, value)` (on a FloatLanes and on a float
// alike; by reference, since a 64-byte vector returned by value would change the ABI of the
// baseline clone): lane l takes s[l], s[l + 16], ...; then the lanes in order, then the tail.
// One order, so the same bits, in every clone.
template <typename Op>
inline float lane_fold(const float* s, int64_t count, float init, const Op& op) {
  FloatLanes lanes;
  for (int64_t l = 0; l < kLanes; ++l) lanes[l] = init;
  int64_t j = 0;
  for (; j + kLanes <= count; j += kLanes) {
    FloatLanes v;
    std::memcpy(&v, s + j, sizeof v);
    op(lanes, v);
  }
  float result = init;
  for (int64_t l = 0; l < kLanes; ++l) op(result, lanes[l]);
  for (; j < count; ++j) op(result, s[j]);
  return result;
}

inline float row_max(const float* s, int64_t count) {
  return lane_fold(s, count, kNegInf, [](auto& m, const auto& v) { m = v > m ? v : m; });
}

// The sum of s[0, count). A plain `sum += e` in the exp loop is a float reduction GCC may not
// reorder: it vectorised the exps and then added the sixteen lanes of each vector one after
// another, a chain of dependent adds (four cycles each on Zen 4). With the two ways on alternate
// calls of one `bench model` run (BERT, batch 1, 2-core Zen 4, 2 threads, 180 calls each, parity
// flipped in a second run): a scaled_dot_product_attention call took 358-360 us against 396-399
// at the median.
inline float row_sum(const float* s, int64_t count) {
  return lane_fold(s, count, 0.0f, [](auto& total, const auto& v) { total += v; });
}

// One row of scores in place: s * scale + mask over the first `visible` keys, -inf (so 0) beyond
// them (the causal limit), then softmax. Returns the row's log-sum-exp, or -inf for a row with
// no key to attend, whose scores are then all 0 (the caller writes its NaN). Compiled for
// AVX-512, AVX2 and the baseline; the exp is fast_math.h's (relative error below 2e-7).
SY_VECTOR_CLONES float normalise_row(float* s, int64_t keys, int64_t visible, float scale,
                                     const float* mask, int64_t mask_step) {
  if (mask != nullptr && mask_step == 1) {
    for (int64_t j = 0; j < visible; ++j) s[j] = s[j] * scale + mask[j];
  } else if (mask != nullptr) {
    for (int64_t j = 0; j < visible; ++j) s[j] = s[j] * scale + mask[j * mask_step];
  } else if (scale != 1.0f) {
    for (int64_t j = 0; j < visible; ++j) s[j] *= scale;
  }
  const float m = row_max(s, visible);
  if (m == kNegInf) {
    for (int64_t j = 0; j < keys; ++j) s[j] = 0.0f;
    return kNegInf;
  }
  for (int64_t j = 0; j < visible; ++j) {
    const float e = exp_approx(s[j] - m);
    s[j] = s[j] == kNegInf ? 0.0f : e;
  }
  const float sum = row_sum(s, visible);
  const float inv = 1.0f / sum;
  for (int64_t j = 0; j < visible; ++j) s[j] *= inv;
  for (int64_t j = visible; j < keys; ++j) s[j] = 0.0f;
  return m + std::log(sum);
}

// The backward's probabilities of one row from its scores (already scaled) and the forward's
// lse: exp(s + mask - lse) over the first `visible` keys, 0 beyond them and where s is -inf.
SY_VECTOR_CLONES void rebuild_row(float* s, int64_t keys, int64_t visible, float row_lse,
                                  const float* mask, int64_t mask_step) {
  if (mask != nullptr) {
    for (int64_t j = 0; j < visible; ++j) s[j] += mask[j * mask_step];
  }
  for (int64_t j = 0; j < visible; ++j) {
    const float e = exp_approx(s[j] - row_lse);
    s[j] = s[j] == kNegInf ? 0.0f : e;
  }
  for (int64_t j = visible; j < keys; ++j) s[j] = 0.0f;
}

// dS = P (Z dP - D) * scale for one row, in place over dP (Z null without dropout).
SY_VECTOR_CLONES void score_grad_row(float* d, const float* p, const float* z, float delta,
                                     float scale, int64_t keys) {
  if (z != nullptr) {
    for (int64_t j = 0; j < keys; ++j) d[j] = p[j] * (z[j] * d[j] - delta) * scale;
  } else {
    for (int64_t j = 0; j < keys; ++j) d[j] = p[j] * (d[j] - delta) * scale;
  }
}

// The mask's row i of (b, h) and its step along the keys, or null without a mask.
const float* mask_row_of(const Problem& pr, int64_t b, int64_t h, int64_t i, int64_t* step) {
  if (pr.mask == nullptr) return nullptr;
  *step = pr.mask->strides[3];
  return f32_at(*pr.mask, b, h, i);
}

// Softmax of row i of (b, h) in place (keys long), with dropout; writes lse when asked and
// returns it.
float finish_row(const Problem& pr, int64_t b, int64_t h, int64_t i, float* row, int64_t keys,
                 float scale, float* factors, const TensorView* lse) {
  int64_t step = 0;
  const float* mask = mask_row_of(pr, b, h, i, &step);
  const int64_t visible = pr.visible(i, keys);
  const float row_lse = normalise_row(row, keys, visible, scale, mask, step);
  if (pr.p.dropout_p > 0.0 && row_lse != kNegInf) {
    dropout_row(pr, b, h, i, factors, visible);
    for (int64_t j = 0; j < visible; ++j) row[j] *= factors[j];
  }
  if (lse != nullptr) *f32_at(*lse, b, h, i) = row_lse;
  return row_lse;
}

void fill_nan(float* row, int64_t count) {
  std::fill(row, row + count, kNaN);
}

int threads_for_blocks(OpContext& ctx, int64_t flops, int64_t items) {
  const int threads = ctx.threads_for(flops, kMinFlops);
  ctx.use_threads(threads);
  return static_cast<int>(std::min<int64_t>(threads, items));
}

// One MATMUL of the plugin's own on views, as an op of this dispatch: out = a b^T or a b.
void product(OpContext& ctx, const TensorView& a, const TensorView& b, const TensorView& out,
             bool transpose_b, bool transpose_a = false) {
  sy_op_params params{};
  params.matmul.transpose_a = transpose_a ? 1 : 0;
  params.matmul.transpose_b = transpose_b ? 1 : 0;
  OpContext inner(ctx.device, ctx.queue, SY_OP_MATMUL, params);
  inner.num_inputs = 2;
  inner.num_outputs = 1;
  inner.in[0] = a;
  inner.in[1] = b;
  inner.out[0] = out;
  run_matmul(inner);
}

// Batch entries [first, first + count) of a [B, ...] view.
TensorView batch_slice(const TensorView& view, int64_t first, int64_t count) {
  TensorView slice = view;
  slice.data += first * view.strides[0] * static_cast<int64_t>(view.element_size());
  slice.shape[0] = count;
  return slice;
}

// The batched path: for a group of batch entries, S = Q K^T as one oneDNN matmul over every
// head, the softmax on S in place (parallel over rows), O = P V as one more. The products run at
// oneDNN's batched speed; S for the group is the only extra memory.
void forward_batched(OpContext& ctx, const Problem& pr, const TensorView* lse) {
  const TensorView q = ctx.in[0], k = ctx.in[1], v = ctx.in[2], out = ctx.out[0];
  const int64_t group = pr.batch_group();
  const int64_t scores_shape[] = {group, pr.h, pr.tq, pr.tk};
  const TensorView scores_all = ctx.scratch_view(SY_DTYPE_F32, 4, scores_shape);
  const bool dropout = pr.p.dropout_p > 0.0;
  const auto scale = static_cast<float>(pr.p.scale);
  for (int64_t first = 0; first < pr.b; first += group) {
    const int64_t count = std::min(group, pr.b - first);
    TensorView scores = scores_all;
    scores.shape[0] = count;
    product(ctx, batch_slice(q, first, count), batch_slice(k, first, count), scores, true);
    const int64_t rows = count * pr.h * pr.tq;
    const int threads = ctx.threads_for(rows * pr.tk, kMinRowElements);
    ctx.use_threads(threads);
    float* factors =
        dropout
            ? static_cast<float*>(ctx.scratch(static_cast<size_t>(pr.tk * threads) * sizeof(float)))
            : nullptr;
    float* row_lse = static_cast<float*>(ctx.scratch(static_cast<size_t>(rows) * sizeof(float)));
#pragma omp parallel for num_threads(threads) if (threads > 1)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = r % pr.tq, bh = r / pr.tq, b = first + bh / pr.h, h = bh % pr.h;
      float* row = reinterpret_cast<float*>(scores.data) + r * pr.tk;
      float* f = factors != nullptr ? factors + pr.tk * omp_get_thread_num() : nullptr;
      row_lse[r] = finish_row(pr, b, h, i, row, pr.tk, scale, f, lse);
    }
    const TensorView out_slice = batch_slice(out, first, count);
    product(ctx, scores, batch_slice(v, first, count), out_slice, false);
    // Rows with no key to attend: NaN (their probabilities were left 0).
    for (int64_t r = 0; r < rows; ++r) {
      if (row_lse[r] != kNegInf) continue;
      const int64_t i = r % pr.tq, bh = r / pr.tq, h = bh % pr.h, b = bh / pr.h;
      float* row = f32_at(out_slice, b, h, i);
      for (int64_t x = 0; x < pr.dv; ++x) row[x * out_slice.strides[3]] = kNaN;
    }
  }
}

// The tiled path: blocks of kRows queries per (b, h) in parallel, each block's scores
// [kRows, keys] in the thread's scratch between two sgemm calls.
void forward_tiled(OpContext& ctx, const Problem& pr, const TensorView* lse) {
  const Operand q = input_operand(ctx, ctx.in[0]), k = input_operand(ctx, ctx.in[1]);
  const Operand v = input_operand(ctx, ctx.in[2]);
  const Operand out = output_operand(ctx, ctx.out[0]);
  const int64_t items = pr.b * pr.h * pr.blocks();
  const int threads =
      threads_for_blocks(ctx, 2 * pr.b * pr.h * pr.tq * pr.tk * (pr.d + pr.dv), items);
  const size_t per_thread = static_cast<size_t>(kRows * pr.tk) * 2;
  float* scratch = static_cast<float*>(ctx.scratch(per_thread * threads * sizeof(float)));
  const auto scale = static_cast<float>(pr.p.scale);
#pragma omp parallel for schedule(dynamic) num_threads(threads) if (threads > 1)
  for (int64_t item = 0; item < items; ++item) {
    const int64_t bh = item / pr.blocks(), b = bh / pr.h, h = bh % pr.h;
    const int64_t r0 = (item % pr.blocks()) * kRows, rows = std::min(kRows, pr.tq - r0);
    const int64_t keys = pr.keys_for(r0, rows);
    float* s = scratch + per_thread * static_cast<size_t>(omp_get_thread_num());
    float* factors = s + kRows * pr.tk;
    const Matrix qm = q.at(b, h), km = k.at(b, h), vm = v.at(b, h), om = out.at(b, h);
    sgemm(ctx, 'N', 'T', rows, keys, pr.d, scale, qm.row(r0), qm.ld, km.data, km.ld, 0.0f, s, keys);
    float row_lse[kRows];
    for (int64_t r = 0; r < rows; ++r) {
      row_lse[r] = finish_row(pr, b, h, r0 + r, s + r * keys, keys, 1.0f, factors, lse);
    }
    sgemm(ctx, 'N', 'N', rows, pr.dv, keys, 1.0f, s, keys, vm.data, vm.ld, 0.0f, om.row(r0), om.ld);
    for (int64_t r = 0; r < rows; ++r) {
      if (row_lse[r] == kNegInf) fill_nan(om.row(r0 + r), pr.dv);
    }
  }
  finish(ctx, out);
}

void forward_f32(OpContext& ctx) {
  const bool has_mask = ctx.params.attention.has_mask != 0;
  const bool with_lse = ctx.num_outputs == 2;
  if (ctx.num_inputs != (has_mask ? 4 : 3) || (ctx.num_outputs != 1 && !with_lse)) {
    ctx.require_counts(has_mask ? 4 : 3, 1);
  }
  Problem pr = checked_problem(ctx, 0);
  check_mask(ctx, pr, 3);
  const int64_t out_shape[] = {pr.b, pr.h, pr.tq, pr.dv}, lse_shape[] = {pr.b, pr.h, pr.tq};
  ctx.require_same_dtype(ctx.out[0], "out", ctx.in[0], "q");
  ctx.require_shape(ctx.out[0], "out", out_shape, 4);
  if (with_lse) {
    ctx.require_dtype_in(ctx.out[1], "lse", {SY_DTYPE_F32});
    ctx.require_shape(ctx.out[1], "lse", lse_shape, 3);
  }
  const TensorView* lse = with_lse ? &ctx.out[1] : nullptr;
  if (pr.batched()) {
    forward_batched(ctx, pr, lse);
  } else {
    forward_tiled(ctx, pr, lse);
  }
}

// Per (b, h), per block of queries: P from S and lse, dV += (P Z)^T dO, dP = dO V^T,
// dS = P (Z dP - D) * scale with D_i = dO_i . O_i, dQ = dS K, dK += dS^T Q.
void backward_tiled(OpContext& ctx, const Problem& pr) {
  const Operand d_o = input_operand(ctx, ctx.in[0]), q = input_operand(ctx, ctx.in[1]);
  const Operand k = input_operand(ctx, ctx.in[2]), v = input_operand(ctx, ctx.in[3]);
  const Operand o = input_operand(ctx, ctx.in[4]);
  const TensorView& lse = ctx.in[5];
  const Operand dq = output_operand(ctx, ctx.out[0]), dk = output_operand(ctx, ctx.out[1]);
  const Operand dv = output_operand(ctx, ctx.out[2]);
  const int64_t items = pr.b * pr.h;
  const int threads =
      threads_for_blocks(ctx, 4 * pr.b * pr.h * pr.tq * pr.tk * (pr.d + pr.dv), items);
  fill_zero(dk.view, threads);
  fill_zero(dv.view, threads);
  const bool dropout = pr.p.dropout_p > 0.0;
  const size_t block = static_cast<size_t>(kRows * pr.tk);
  const size_t per_thread = block * (dropout ? 3 : 2);
  float* scratch = static_cast<float*>(ctx.scratch(per_thread * threads * sizeof(float)));
  const auto scale = static_cast<float>(pr.p.scale);
#pragma omp parallel for schedule(dynamic) num_threads(threads) if (threads > 1)
  for (int64_t bh = 0; bh < items; ++bh) {
    const int64_t b = bh / pr.h, h = bh % pr.h;
    float* p = scratch + per_thread * static_cast<size_t>(omp_get_thread_num());
    float* ds = p + block;
    float* factors = ds + block;
    const Matrix qm = q.at(b, h), km = k.at(b, h), vm = v.at(b, h), om = o.at(b, h);
    const Matrix gm = d_o.at(b, h), dqm = dq.at(b, h), dkm = dk.at(b, h), dvm = dv.at(b, h);
    for (int64_t r0 = 0; r0 < pr.tq; r0 += kRows) {
      const int64_t rows = std::min(kRows, pr.tq - r0), keys = pr.keys_for(r0, rows);
      sgemm(ctx, 'N', 'T', rows, keys, pr.d, scale, qm.row(r0), qm.ld, km.data, km.ld, 0.0f, p,
            keys);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t i = r0 + r;
        float* row = p + r * keys;
        const float row_lse = *f32_at(lse, b, h, i);
        int64_t step = 0;
        const float* mask = mask_row_of(pr, b, h, i, &step);
        rebuild_row(row, keys, pr.visible(i, keys), row_lse, mask, step);
        // An empty row: NaN gradients, as the forward's NaN row.
        if (row_lse == kNegInf) fill_nan(row, keys);
        if (dropout) dropout_row(pr, b, h, i, factors + r * keys, keys);
      }
      // dV += (P Z)^T dO: P Z goes through ds, which dP overwrites next.
      const float* pz = p;
      if (dropout) {
        for (size_t x = 0; x < static_cast<size_t>(rows * keys); ++x) ds[x] = p[x] * factors[x];
        pz = ds;
      }
      sgemm(ctx, 'T', 'N', keys, pr.dv, rows, 1.0f, pz, keys, gm.row(r0), gm.ld, 1.0f, dvm.data,
            dvm.ld);
      sgemm(ctx, 'N', 'T', rows, keys, pr.dv, 1.0f, gm.row(r0), gm.ld, vm.data, vm.ld, 0.0f, ds,
            keys);
      for (int64_t r = 0; r < rows; ++r) {
        const float* grad = gm.row(r0 + r);
        const float* out_row = om.row(r0 + r);
        float delta = 0.0f;
        for (int64_t x = 0; x < pr.dv; ++x) delta += grad[x] * out_row[x];
        score_grad_row(ds + r * keys, p + r * keys, dropout ? factors + r * keys : nullptr, delta,
                       scale, keys);
      }
      sgemm(ctx, 'N', 'N', rows, pr.d, keys, 1.0f, ds, keys, km.data, km.ld, 0.0f, dqm.row(r0),
            dqm.ld);
      sgemm(ctx, 'T', 'N', keys, pr.d, rows, 1.0f, ds, keys, qm.row(r0), qm.ld, 1.0f, dkm.data,
            dkm.ld);
    }
  }
  finish(ctx, dq);
  finish(ctx, dk);
  finish(ctx, dv);
}

// The batched path of the backward, for a group of batch entries at a time: S = Q K^T, P rebuilt
// in place, dV = (P Z)^T dO, dP = dO V^T, dS in place, dQ = dS K, dK = dS^T Q, each product one
// oneDNN matmul over every head of the group.
void backward_batched(OpContext& ctx, const Problem& pr) {
  const TensorView d_o = ctx.in[0], q = ctx.in[1], k = ctx.in[2], v = ctx.in[3], o = ctx.in[4];
  const TensorView& lse = ctx.in[5];
  const int64_t group = pr.batch_group();
  const int64_t scores_shape[] = {group, pr.h, pr.tq, pr.tk};
  const bool dropout = pr.p.dropout_p > 0.0;
  const TensorView p_all = ctx.scratch_view(SY_DTYPE_F32, 4, scores_shape);
  const TensorView d_all = ctx.scratch_view(SY_DTYPE_F32, 4, scores_shape);
  const TensorView z_all = dropout ? ctx.scratch_view(SY_DTYPE_F32, 4, scores_shape) : TensorView{};
  const auto scale = static_cast<float>(pr.p.scale);
  for (int64_t first = 0; first < pr.b; first += group) {
    const int64_t count = std::min(group, pr.b - first);
    TensorView p = p_all, d = d_all, z = z_all;
    p.shape[0] = d.shape[0] = z.shape[0] = count;
    const TensorView q_g = batch_slice(q, first, count), k_g = batch_slice(k, first, count);
    const TensorView v_g = batch_slice(v, first, count), g_g = batch_slice(d_o, first, count);
    product(ctx, q_g, k_g, p, true);
    const int64_t rows = count * pr.h * pr.tq;
    int threads = ctx.threads_for(rows * pr.tk, kMinRowElements);
    ctx.use_threads(threads);
#pragma omp parallel for num_threads(threads) if (threads > 1)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = r % pr.tq, bh = r / pr.tq, b = first + bh / pr.h, h = bh % pr.h;
      float* row = reinterpret_cast<float*>(p.data) + r * pr.tk;
      const float row_lse = *f32_at(lse, b, h, i);
      int64_t step = 0;
      const float* mask = mask_row_of(pr, b, h, i, &step);
      for (int64_t j = 0; j < pr.tk; ++j) row[j] *= scale;
      rebuild_row(row, pr.tk, pr.visible(i, pr.tk), row_lse, mask, step);
      if (row_lse == kNegInf) fill_nan(row, pr.tk);
      if (dropout) {
        float* factors = reinterpret_cast<float*>(z.data) + r * pr.tk;
        dropout_row(pr, b, h, i, factors, pr.tk);
        float* pz = reinterpret_cast<float*>(d.data) + r * pr.tk;
        for (int64_t j = 0; j < pr.tk; ++j) pz[j] = row[j] * factors[j];
      }
    }
    product(ctx, dropout ? d : p, g_g, batch_slice(ctx.out[2], first, count), false, true);
    product(ctx, g_g, v_g, d, true);
    threads = ctx.threads_for(rows * pr.tk, kMinRowElements);
    ctx.use_threads(threads);
    const TensorView o_g = batch_slice(o, first, count);
#pragma omp parallel for num_threads(threads) if (threads > 1)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = r % pr.tq, bh = r / pr.tq, b = bh / pr.h, h = bh % pr.h;
      const float* grad = f32_at(g_g, b, h, i);
      const float* out_row = f32_at(o_g, b, h, i);
      float delta = 0.0f;
      for (int64_t x = 0; x < pr.dv; ++x) {
        delta += grad[x * g_g.strides[3]] * out_row[x * o_g.strides[3]];
      }
      score_grad_row(reinterpret_cast<float*>(d.data) + r * pr.tk,
                     reinterpret_cast<const float*>(p.data) + r * pr.tk,
                     dropout ? reinterpret_cast<const float*>(z.data) + r * pr.tk : nullptr, delta,
                     scale, pr.tk);
    }
    product(ctx, d, k_g, batch_slice(ctx.out[0], first, count), false);
    product(ctx, d, q_g, batch_slice(ctx.out[1], first, count), false, true);
  }
}

void backward_f32(OpContext& ctx) {
  const bool has_mask = ctx.params.attention.has_mask != 0;
  ctx.require_counts(has_mask ? 7 : 6, 3);
  Problem pr = checked_problem(ctx, 1);
  check_mask(ctx, pr, 6);
  const int64_t out_shape[] = {pr.b, pr.h, pr.tq, pr.dv}, lse_shape[] = {pr.b, pr.h, pr.tq};
  ctx.require_same_dtype(ctx.in[0], "grad_out", ctx.in[1], "q");
  ctx.require_shape(ctx.in[0], "grad_out", out_shape, 4);
  ctx.require_same_dtype(ctx.in[4], "out", ctx.in[1], "q");
  ctx.require_shape(ctx.in[4], "out", out_shape, 4);
  ctx.require_dtype_in(ctx.in[5], "lse", {SY_DTYPE_F32});
  ctx.require_shape(ctx.in[5], "lse", lse_shape, 3);
  const char* roles[] = {"grad_q", "grad_k", "grad_v"};
  for (int n = 0; n < 3; ++n) {
    ctx.require_same_dtype(ctx.out[n], roles[n], ctx.in[1], "q");
    ctx.require_shape(ctx.out[n], roles[n], ctx.in[1 + n].shape, 4);
  }
  if (pr.batched()) {
    backward_batched(ctx, pr);
  } else {
    backward_tiled(ctx, pr);
  }
}

// f16 and bf16 through f32 copies, the mask's broadcast kept. Every tensor but lse (f32: the
// forward's output 1, the backward's input 5) has q's dtype: checked here, since the copies would
// hide a mismatch.
void run_16_bit(OpContext& ctx, void (*runner)(OpContext&)) {
  const bool backward = ctx.op == SY_OP_SCALED_DOT_PRODUCT_ATTENTION_BACKWARD;
  for (int i = 0; i < ctx.num_inputs; ++i) {
    if (!(backward && i == 5)) ctx.require_same_dtype(ctx.in[i], "input", ctx.in[0], "input 0");
  }
  run_through_f32(ctx, runner, ctx.in[0].dtype, /*keep_broadcast=*/true);
}

bool sixteen_bit(uint32_t dtype) {
  return dtype == SY_DTYPE_F16 || dtype == SY_DTYPE_BF16;
}

}  // namespace

void run_attention(OpContext& ctx) {
  if (sixteen_bit(ctx.in[0].dtype)) return run_16_bit(ctx, forward_f32);
  forward_f32(ctx);
}

void run_attention_backward(OpContext& ctx) {
  if (sixteen_bit(ctx.in[0].dtype)) return run_16_bit(ctx, backward_f32);
  backward_f32(ctx);
}

}  // namespace sy_onednn
