// SCALED_DOT_PRODUCT_ATTENTION and its backward (docs/ops.md section 18) in f32, tiled over query
// rows: for each (b, h) and block of up to kRows queries, S = Q K^T * scale with oneDNN's sgemm,
// the mask, causal limit, softmax and dropout on S in place, then O = P V with sgemm. Nothing
// larger than kRows x Tk per thread is ever in memory; a causal block stops at its last query's
// key. The blocks run in parallel, each sgemm on one thread; a call with a single block lets sgemm
// use the threads. The backward rebuilds P from the forward's log-sum-exp per block and
// accumulates dK and dV over the blocks of one (b, h), so it is parallel over (b, h).
// q, k, v and out are used in place when each row is dense (unit stride on D) at any row, head
// and batch strides: the [B, T, H, D] views of a projection split into heads. f16 and bf16 run
// through f32 copies.
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/fast_math.h"
#include "ops/ops.h"
#include "switchyard/plugin_support/philox.h"

namespace sy_onednn {
namespace {

constexpr int64_t kRows = 64;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

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

void sgemm(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (dnnl_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) != dnnl_success) {
    fail_invalid("SCALED_DOT_PRODUCT_ATTENTION: oneDNN's sgemm refused a product");
  }
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
};

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

// Row i of (b, h) of the scores, `keys` long: mask and causal limit added to the scaled products.
void mask_row(const Problem& pr, int64_t b, int64_t h, int64_t i, float* s, int64_t keys) {
  if (pr.mask != nullptr) {
    const TensorView& m = *pr.mask;
    const float* row = reinterpret_cast<const float*>(m.data) + b * m.strides[0] +
                       h * m.strides[1] + i * m.strides[2];
    const int64_t step = m.strides[3];
    for (int64_t j = 0; j < keys; ++j) s[j] += row[j * step];
  }
  if (pr.p.causal != 0) {
    for (int64_t j = i + 1; j < keys; ++j) s[j] = kNegInf;
  }
}

// The dropout factors of row i: 0 or 1 / (1 - p) per key (docs/ops.md section 18).
void dropout_row(const Problem& pr, int64_t b, int64_t h, int64_t i, float* factors, int64_t keys) {
  const uint64_t first = static_cast<uint64_t>(((b * pr.h + h) * pr.tq + i) * pr.tk);
  const auto threshold = static_cast<float>(pr.p.dropout_p);
  const auto keep = static_cast<float>(1.0 / (1.0 - pr.p.dropout_p));
  for (int64_t j = 0; j < keys; ++j) {
    const float u = sy_unit_float(sy_philox_for_element(pr.p.seed, pr.p.offset, first + j).w[0]);
    factors[j] = u > threshold ? keep : 0.0f;
  }
}

// exp(s - m) for each score, exactly 0 where the score is -inf.
float exp_row(float* s, int64_t keys, float m) {
  float sum = 0.0f;
  for (int64_t j = 0; j < keys; ++j) {
    const float e = exp_approx(s[j] - m);
    s[j] = s[j] == kNegInf ? 0.0f : e;
    sum += s[j];
  }
  return sum;
}

int threads_for_blocks(OpContext& ctx, int64_t flops, int64_t items) {
  const int threads = ctx.threads_for(flops, kMinFlops);
  ctx.use_threads(threads);
  return static_cast<int>(std::min<int64_t>(threads, items));
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
  const Operand q = input_operand(ctx, ctx.in[0]), k = input_operand(ctx, ctx.in[1]);
  const Operand v = input_operand(ctx, ctx.in[2]);
  const Operand out = output_operand(ctx, ctx.out[0]);
  const TensorView* lse = with_lse ? &ctx.out[1] : nullptr;
  const int64_t items = pr.b * pr.h * pr.blocks();
  const int threads =
      threads_for_blocks(ctx, 2 * pr.b * pr.h * pr.tq * pr.tk * (pr.d + pr.dv), items);
  const bool dropout = pr.p.dropout_p > 0.0;
  const size_t per_thread = static_cast<size_t>(kRows * pr.tk) * (dropout ? 2 : 1);
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
    sgemm('N', 'T', rows, keys, pr.d, scale, qm.row(r0), qm.ld, km.data, km.ld, 0.0f, s, keys);
    float row_lse[kRows];
    bool empty_rows = false;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = r0 + r;
      float* row = s + r * keys;
      mask_row(pr, b, h, i, row, keys);
      float m = kNegInf;
      for (int64_t j = 0; j < keys; ++j) m = std::max(m, row[j]);
      row_lse[r] = kNegInf;
      if (m == kNegInf) {  // no key may be attended: NaN below, as softmax's 0 / 0
        std::fill(row, row + keys, 0.0f);
        empty_rows = true;
      } else {
        const float sum = exp_row(row, keys, m);
        const float inv = 1.0f / sum;
        if (dropout) {
          dropout_row(pr, b, h, i, factors, keys);
          for (int64_t j = 0; j < keys; ++j) row[j] *= inv * factors[j];
        } else {
          for (int64_t j = 0; j < keys; ++j) row[j] *= inv;
        }
        row_lse[r] = m + std::log(sum);
      }
      if (lse != nullptr) {
        *reinterpret_cast<float*>(
            lse->data + (b * lse->strides[0] + h * lse->strides[1] + i * lse->strides[2]) * 4) =
            row_lse[r];
      }
    }
    sgemm('N', 'N', rows, pr.dv, keys, 1.0f, s, keys, vm.data, vm.ld, 0.0f, om.row(r0), om.ld);
    if (empty_rows) {
      for (int64_t r = 0; r < rows; ++r) {
        if (row_lse[r] == kNegInf) {
          std::fill(om.row(r0 + r), om.row(r0 + r) + pr.dv,
                    std::numeric_limits<float>::quiet_NaN());
        }
      }
    }
  }
  finish(ctx, out);
}

// Per (b, h), per block of queries: P from S and lse, dV += (P Z)^T dO, dP = dO V^T,
// dS = P (Z dP - D) * scale with D_i = dO_i . O_i, dQ = dS K, dK += dS^T Q.
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
      sgemm('N', 'T', rows, keys, pr.d, scale, qm.row(r0), qm.ld, km.data, km.ld, 0.0f, p, keys);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t i = r0 + r;
        float* row = p + r * keys;
        mask_row(pr, b, h, i, row, keys);
        const float row_lse = *reinterpret_cast<const float*>(
            lse.data + (b * lse.strides[0] + h * lse.strides[1] + i * lse.strides[2]) * 4);
        for (int64_t j = 0; j < keys; ++j) {
          const float e = exp_approx(row[j] - row_lse);
          row[j] = row[j] == kNegInf ? 0.0f : e;
        }
        if (row_lse == kNegInf) {  // an empty row: NaN gradients, as the forward's NaN row
          std::fill(row, row + keys, std::numeric_limits<float>::quiet_NaN());
        }
        if (dropout) dropout_row(pr, b, h, i, factors + r * keys, keys);
      }
      // dV += (P Z)^T dO: P Z goes through ds, which dP overwrites next.
      const float* pz = p;
      if (dropout) {
        for (size_t x = 0; x < static_cast<size_t>(rows * keys); ++x) ds[x] = p[x] * factors[x];
        pz = ds;
      }
      sgemm('T', 'N', keys, pr.dv, rows, 1.0f, pz, keys, gm.row(r0), gm.ld, 1.0f, dvm.data, dvm.ld);
      sgemm('N', 'T', rows, keys, pr.dv, 1.0f, gm.row(r0), gm.ld, vm.data, vm.ld, 0.0f, ds, keys);
      for (int64_t r = 0; r < rows; ++r) {
        const float* grad = gm.row(r0 + r);
        const float* out_row = om.row(r0 + r);
        float delta = 0.0f;
        for (int64_t x = 0; x < pr.dv; ++x) delta += grad[x] * out_row[x];
        float* d_row = ds + r * keys;
        const float* p_row = p + r * keys;
        if (dropout) {
          const float* z = factors + r * keys;
          for (int64_t j = 0; j < keys; ++j)
            d_row[j] = p_row[j] * (z[j] * d_row[j] - delta) * scale;
        } else {
          for (int64_t j = 0; j < keys; ++j) d_row[j] = p_row[j] * (d_row[j] - delta) * scale;
        }
      }
      sgemm('N', 'N', rows, pr.d, keys, 1.0f, ds, keys, km.data, km.ld, 0.0f, dqm.row(r0), dqm.ld);
      sgemm('T', 'N', keys, pr.d, rows, 1.0f, ds, keys, qm.row(r0), qm.ld, 1.0f, dkm.data, dkm.ld);
    }
  }
  finish(ctx, dq);
  finish(ctx, dk);
  finish(ctx, dv);
}

}  // namespace

void run_attention(OpContext& ctx) {
  const uint32_t dtype = ctx.in[0].dtype;
  if (dtype == SY_DTYPE_F16 || dtype == SY_DTYPE_BF16)
    return run_through_f32(ctx, forward_f32, dtype);
  forward_f32(ctx);
}

void run_attention_backward(OpContext& ctx) {
  const uint32_t dtype = ctx.in[0].dtype;
  if (dtype == SY_DTYPE_F16 || dtype == SY_DTYPE_BF16) {
    return run_through_f32(ctx, backward_f32, dtype);
  }
  backward_f32(ctx);
}

}  // namespace sy_onednn
