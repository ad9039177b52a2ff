// SCALED_DOT_PRODUCT_ATTENTION and its backward (docs/ops.md section 18), in double from the
// stored inputs: the scores of one query row at a time, each output rounded once to its dtype.
// The oracle: plain loops, the whole [Tk] row of scores in memory.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops.h"
#include "switchyard/plugin_support/philox.h"

namespace sy_reference {
namespace {

constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();

// The call's tensors checked and read into row-major double arrays.
struct AttentionCall {
  int64_t b = 0, h = 0, tq = 0, tk = 0, d = 0, dv = 0;
  sy_attention_params p{};
  std::vector<double> q, k, v, mask;  // mask empty without one
};

std::vector<double> read_double(const TensorRef& tensor) {
  const std::vector<float> values = read_f32(tensor);
  return std::vector<double>(values.begin(), values.end());
}

// Reads q, k, v (inputs first..first+2) and the mask (input mask_index when has_mask) and checks
// their shapes and the params; the outputs are the caller's to check.
AttentionCall checked_call(const OpContext& ctx, uint32_t first, uint32_t mask_index) {
  AttentionCall call;
  call.p = ctx.params().attention;
  const sy_attention_params& p = call.p;
  if (p.causal > 1 || p.has_mask > 1) {
    fail(ctx, "params.attention.causal and has_mask must be 0 or 1, got " +
                  std::to_string(p.causal) + " and " + std::to_string(p.has_mask));
  }
  if (!(p.scale > 0.0) || !std::isfinite(p.scale)) {
    fail(ctx, "params.attention.scale must be positive and finite, got " + std::to_string(p.scale));
  }
  if (!(p.dropout_p >= 0.0 && p.dropout_p < 1.0)) {
    fail(ctx, "params.attention.dropout_p must be in [0, 1), got " + std::to_string(p.dropout_p));
  }
  const TensorRef q = ctx.input(first), k = ctx.input(first + 1), v = ctx.input(first + 2);
  require_float(ctx, "q", q);
  require_rank(ctx, "q", q, 4, "[B, H, Tq, D]");
  require_same_dtype(ctx, "k", k, "q", q);
  require_rank(ctx, "k", k, 4, "[B, H, Tk, D]");
  require_same_dtype(ctx, "v", v, "q", q);
  require_rank(ctx, "v", v, 4, "[B, H, Tk, Dv]");
  call.b = q.shape[0];
  call.h = q.shape[1];
  call.tq = q.shape[2];
  call.d = q.shape[3];
  call.tk = k.shape[2];
  call.dv = v.shape[3];
  if (call.b < 1 || call.h < 1 || call.tq < 1 || call.tk < 1 || call.d < 1 || call.dv < 1) {
    fail(ctx, "needs at least one query, one key and D, Dv >= 1; got q " + q.shape.to_string() +
                  " and v " + v.shape.to_string());
  }
  require_shape(ctx, "k", k, Shape::of({call.b, call.h, call.tk, call.d}));
  require_shape(ctx, "v", v, Shape::of({call.b, call.h, call.tk, call.dv}));
  call.q = read_double(q);
  call.k = read_double(k);
  call.v = read_double(v);
  if (p.has_mask != 0) {
    const TensorRef mask = ctx.input(mask_index);
    require_same_dtype(ctx, "mask", mask, "q", q);
    require_shape(ctx, "mask", mask, Shape::of({call.b, call.h, call.tq, call.tk}));
    call.mask = read_double(mask);
  }
  return call;
}

// Row i of (b, h): the scores s_j = q_i . k_j * scale + mask (-inf where causal hides key j).
void scores(const AttentionCall& c, int64_t bh, int64_t i, std::vector<double>& s) {
  s.assign(static_cast<size_t>(c.tk), 0.0);
  const double* q = c.q.data() + (bh * c.tq + i) * c.d;
  for (int64_t j = 0; j < c.tk; ++j) {
    const double* k = c.k.data() + (bh * c.tk + j) * c.d;
    double dot = 0.0;
    for (int64_t x = 0; x < c.d; ++x) dot += q[x] * k[x];
    double value = dot * c.p.scale;
    if (!c.mask.empty()) value += c.mask[static_cast<size_t>((bh * c.tq + i) * c.tk + j)];
    if (c.p.causal != 0 && j > i) value = kNegativeInfinity;
    s[static_cast<size_t>(j)] = value;
  }
}

// The dropout factor of probability (b, h, i, j): 0 or 1 / (1 - p).
double dropout_factor(const AttentionCall& c, int64_t bh, int64_t i, int64_t j) {
  if (c.p.dropout_p == 0.0) return 1.0;
  const auto index = static_cast<uint64_t>((bh * c.tq + i) * c.tk + j);
  const float u = sy_unit_float(sy_philox_for_element(c.p.seed, c.p.offset, index).w[0]);
  return u > static_cast<float>(c.p.dropout_p) ? 1.0 / (1.0 - c.p.dropout_p) : 0.0;
}

std::vector<float> to_float(const std::vector<double>& values) {
  return std::vector<float>(values.begin(), values.end());
}

}  // namespace

void run_attention(const OpContext& ctx) {
  const bool has_mask = ctx.params().attention.has_mask != 0;
  const uint32_t outputs = ctx.call.num_outputs;
  require_io_counts(ctx, has_mask ? 4 : 3, outputs == 2 ? 2 : 1);
  const AttentionCall c = checked_call(ctx, 0, 3);
  const TensorRef out = ctx.output(0);
  require_same_dtype(ctx, "out", out, "q", ctx.input(0));
  require_shape(ctx, "out", out, Shape::of({c.b, c.h, c.tq, c.dv}));
  std::vector<double> o(static_cast<size_t>(c.b * c.h * c.tq * c.dv), 0.0);
  std::vector<double> lse(static_cast<size_t>(c.b * c.h * c.tq));
  std::vector<double> s;
  for (int64_t bh = 0; bh < c.b * c.h; ++bh) {
    for (int64_t i = 0; i < c.tq; ++i) {
      scores(c, bh, i, s);
      double m = kNegativeInfinity;
      for (const double value : s) m = std::max(m, value);
      double* row = o.data() + (bh * c.tq + i) * c.dv;
      const auto r = static_cast<size_t>(bh * c.tq + i);
      if (m == kNegativeInfinity) {  // no key may be attended: softmax's 0 / 0
        for (int64_t x = 0; x < c.dv; ++x) row[x] = std::numeric_limits<double>::quiet_NaN();
        lse[r] = kNegativeInfinity;
        continue;
      }
      double sum = 0.0;
      for (double& value : s) sum += (value = std::exp(value - m));
      for (int64_t j = 0; j < c.tk; ++j) {
        const double weight = s[static_cast<size_t>(j)] / sum * dropout_factor(c, bh, i, j);
        if (weight == 0.0) continue;
        const double* v = c.v.data() + (bh * c.tk + j) * c.dv;
        for (int64_t x = 0; x < c.dv; ++x) row[x] += weight * v[x];
      }
      lse[r] = m + std::log(sum);
    }
  }
  write_f32(out, to_float(o));
  if (outputs == 2) {
    const TensorRef lse_out = ctx.output(1);
    if (lse_out.dtype != SY_DTYPE_F32)
      fail(ctx, "lse must be f32, got " + describe("lse", lse_out));
    require_shape(ctx, "lse", lse_out, Shape::of({c.b, c.h, c.tq}));
    write_f32(lse_out, to_float(lse));
  }
}

// P = exp(s - lse) from the forward's lse, D_i = dO_i . O_i, dV = (P Z)^T dO,
// dS = P (Z (dO V^T) - D), dQ = dS K * scale, dK = dS^T Q * scale (Z the dropout factors).
void run_attention_backward(const OpContext& ctx) {
  const bool has_mask = ctx.params().attention.has_mask != 0;
  require_io_counts(ctx, has_mask ? 7 : 6, 3);
  const AttentionCall c = checked_call(ctx, 1, 6);
  const TensorRef q = ctx.input(1);
  const Shape out_shape = Shape::of({c.b, c.h, c.tq, c.dv});
  const char* roles[] = {"grad_out", "out"};
  const uint32_t indices[] = {0, 4};
  for (int n = 0; n < 2; ++n) {
    require_same_dtype(ctx, roles[n], ctx.input(indices[n]), "q", q);
    require_shape(ctx, roles[n], ctx.input(indices[n]), out_shape);
  }
  const TensorRef lse_in = ctx.input(5);
  if (lse_in.dtype != SY_DTYPE_F32) fail(ctx, "lse must be f32, got " + describe("lse", lse_in));
  require_shape(ctx, "lse", lse_in, Shape::of({c.b, c.h, c.tq}));
  const char* grad_roles[] = {"grad_q", "grad_k", "grad_v"};
  const Shape grad_shapes[] = {Shape::of({c.b, c.h, c.tq, c.d}), Shape::of({c.b, c.h, c.tk, c.d}),
                               Shape::of({c.b, c.h, c.tk, c.dv})};
  for (uint32_t n = 0; n < 3; ++n) {
    require_same_dtype(ctx, grad_roles[n], ctx.output(n), "q", q);
    require_shape(ctx, grad_roles[n], ctx.output(n), grad_shapes[n]);
  }
  const std::vector<double> d_o = read_double(ctx.input(0)), o = read_double(ctx.input(4));
  const std::vector<double> lse = read_double(lse_in);
  std::vector<double> dq(c.q.size(), 0.0), dk(c.k.size(), 0.0), dv(c.v.size(), 0.0);
  std::vector<double> s;
  for (int64_t bh = 0; bh < c.b * c.h; ++bh) {
    for (int64_t i = 0; i < c.tq; ++i) {
      scores(c, bh, i, s);
      const auto r = static_cast<size_t>(bh * c.tq + i);
      const double* grad = d_o.data() + r * static_cast<size_t>(c.dv);
      const double* row = o.data() + r * static_cast<size_t>(c.dv);
      double delta = 0.0;
      for (int64_t x = 0; x < c.dv; ++x) delta += grad[x] * row[x];
      const double* qi = c.q.data() + r * static_cast<size_t>(c.d);
      double* dqi = dq.data() + r * static_cast<size_t>(c.d);
      for (int64_t j = 0; j < c.tk; ++j) {
        const double prob = std::exp(s[static_cast<size_t>(j)] - lse[r]);
        if (prob == 0.0) continue;
        const double z = dropout_factor(c, bh, i, j);
        const auto kj = static_cast<size_t>(bh * c.tk + j);
        const double* v = c.v.data() + kj * static_cast<size_t>(c.dv);
        double* dvj = dv.data() + kj * static_cast<size_t>(c.dv);
        double dp = 0.0;
        for (int64_t x = 0; x < c.dv; ++x) {
          dvj[x] += prob * z * grad[x];
          dp += grad[x] * v[x];
        }
        const double ds = prob * (z * dp - delta) * c.p.scale;
        const double* k = c.k.data() + kj * static_cast<size_t>(c.d);
        double* dkj = dk.data() + kj * static_cast<size_t>(c.d);
        for (int64_t x = 0; x < c.d; ++x) {
          dqi[x] += ds * k[x];
          dkj[x] += ds * qi[x];
        }
      }
    }
  }
  write_f32(ctx.output(0), to_float(dq));
  write_f32(ctx.output(1), to_float(dk));
  write_f32(ctx.output(2), to_float(dv));
}

}  // namespace sy_reference
