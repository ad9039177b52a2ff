// scaled_dot_product_attention (ops.h): SCALED_DOT_PRODUCT_ATTENTION and its backward where the
// device has them (docs/ops.md section 18), MATMUL, SOFTMAX and MATMUL where it does not.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "autograd/node.h"
#include "switchyard/device.h"
#include "switchyard/profile.h"
#include "switchyard/status.h"
#include "tensor/attention_internal.h"
#include "tensor/dispatch_internal.h"
#include "tensor/op_helpers.h"

namespace switchyard {

namespace {

using Grads = std::vector<Tensor>;

thread_local bool t_force_composed = false;

[[noreturn]] void refuse(const std::string& what) {
  throw_error(invalid_argument("scaled_dot_product_attention: " + what));
}

// The checks both paths share; returns the scale to use.
double checked_scale(const Tensor& q, const Tensor& k, const Tensor& v,
                     const AttentionOptions& options) {
  const Tensor* tensors[] = {&q, &k, &v};
  const char* names[] = {"q", "k", "v"};
  for (int n = 0; n < 3; ++n) {
    const Tensor& t = *tensors[n];
    require_float(t, "scaled_dot_product_attention");
    if (t.rank() != 4) {
      refuse(std::string(names[n]) + " must be [batch, heads, length, features], got " +
             t.shape().to_string());
    }
    if (t.dtype() != q.dtype() || t.device() != q.device()) {
      refuse("q, k and v must share one dtype and device; " + std::string(names[n]) + " is " +
             t.to_string() + " and q " + q.to_string());
    }
  }
  if (q.dim(2) < 1 || k.dim(2) < 1) {
    refuse("a sequence of length 0 has nothing to attend (q " + q.shape().to_string() + ", k " +
           k.shape().to_string() + ")");
  }
  if (k.dim(0) != q.dim(0) || k.dim(1) != q.dim(1) || k.dim(3) != q.dim(3) ||
      v.dim(0) != q.dim(0) || v.dim(1) != q.dim(1) || v.dim(2) != k.dim(2)) {
    refuse("k must be [B, H, Tk, D] and v [B, H, Tk, Dv] for q [B, H, Tq, D] = " +
           q.shape().to_string() + ", got k " + k.shape().to_string() + " and v " +
           v.shape().to_string());
  }
  const Shape scores{q.dim(0), q.dim(1), q.dim(2), k.dim(2)};
  if (options.attn_mask.defined()) {
    const Tensor& mask = options.attn_mask;
    if (!is_floating(mask.dtype())) {
      refuse("attn_mask must be additive (floating, -inf where not allowed), got " +
             mask.to_string());
    }
    bool fits = mask.rank() <= 4;
    for (int axis = 1; fits && axis <= mask.rank(); ++axis) {
      const int64_t extent = mask.dim(-axis);
      fits = extent == 1 || extent == scores[static_cast<size_t>(4 - axis)];
    }
    if (!fits) {
      refuse("attn_mask " + mask.shape().to_string() + " does not broadcast to the scores " +
             scores.to_string() + " [batch, heads, target, source]");
    }
  }
  if (!(options.dropout_p >= 0.0 && options.dropout_p < 1.0)) {
    refuse("dropout_p must be in [0, 1), got " + std::to_string(options.dropout_p));
  }
  if (!(options.scale >= 0.0) || !std::isfinite(options.scale)) {
    refuse("scale must be finite and >= 0 (0 for 1 / sqrt(D)), got " +
           std::to_string(options.scale));
  }
  return options.scale > 0.0 ? options.scale : 1.0 / std::sqrt(static_cast<double>(q.dim(3)));
}

// The additive [Tq, Tk] causal mask of the composed path: -inf where j > i.
Tensor causal_scores_mask(int64_t target, int64_t source, const std::shared_ptr<Device>& device) {
  std::vector<float> mask(static_cast<size_t>(target * source), 0.0f);
  for (int64_t i = 0; i < target; ++i) {
    for (int64_t j = i + 1; j < source; ++j) {
      mask[static_cast<size_t>(i * source + j)] = -std::numeric_limits<float>::infinity();
    }
  }
  return Tensor::from_host(mask, Shape{target, source}, device);
}

bool fused_available(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask) {
  if (t_force_composed) return false;
  if (mask.defined() && needs_grad(mask)) return false;  // the op gives the mask no gradient
  const sy_dtype dtype = to_sy_dtype(q.dtype());
  const Device& device = *q.device();
  if (!device.supports(SY_OP_SCALED_DOT_PRODUCT_ATTENTION, dtype)) return false;
  return !any_needs_grad({q, k, v}) ||
         device.supports(SY_OP_SCALED_DOT_PRODUCT_ATTENTION_BACKWARD, dtype);
}

Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                       const AttentionOptions& options, double scale) {
  const int64_t batch = q.dim(0), heads = q.dim(1), target = q.dim(2), source = k.dim(2);
  sy_op_params params{};
  params.attention.scale = scale;
  params.attention.dropout_p = options.dropout_p;
  params.attention.seed = options.seed;
  params.attention.offset = options.offset;
  params.attention.causal = options.is_causal ? 1 : 0;
  Tensor mask;
  if (options.attn_mask.defined()) {
    params.attention.has_mask = 1;
    Tensor m = options.attn_mask.detach().to(q.dtype());
    while (m.rank() < 4) m = m.unsqueeze(0);
    mask = m.expand(Shape{batch, heads, target, source});
  }
  Tensor out = empty_like_shape(q, Shape{batch, heads, target, v.dim(3)});
  const bool grad = any_needs_grad({q, k, v});
  // The log-sum-exp of each row is what the backward needs to rebuild the probabilities.
  Tensor lse = grad ? empty_like_shape(q, Shape{batch, heads, target}, DType::kF32) : Tensor();
  if (mask.defined() && grad) {
    run_op(SY_OP_SCALED_DOT_PRODUCT_ATTENTION, {q, k, v, mask}, {out, lse}, params);
  } else if (mask.defined()) {
    run_op(SY_OP_SCALED_DOT_PRODUCT_ATTENTION, {q, k, v, mask}, {out}, params);
  } else if (grad) {
    run_op(SY_OP_SCALED_DOT_PRODUCT_ATTENTION, {q, k, v}, {out, lse}, params);
  } else {
    run_op(SY_OP_SCALED_DOT_PRODUCT_ATTENTION, {q, k, v}, {out}, params);
  }
  if (!grad) return out;
  attach_node(out, "scaled_dot_product_attention", {q, k, v},
              [params, q = q.detach(), k = k.detach(), v = v.detach(), o = out.detach(), lse, mask](
                  const Tensor& g, const Node&) {
                Grads grads{empty_like_shape(q, q.shape()), empty_like_shape(k, k.shape()),
                            empty_like_shape(v, v.shape())};
                if (mask.defined()) {
                  run_op(SY_OP_SCALED_DOT_PRODUCT_ATTENTION_BACKWARD, {g, q, k, v, o, lse, mask},
                         {grads[0], grads[1], grads[2]}, params);
                } else {
                  run_op(SY_OP_SCALED_DOT_PRODUCT_ATTENTION_BACKWARD, {g, q, k, v, o, lse},
                         {grads[0], grads[1], grads[2]}, params);
                }
                return grads;
              });
  return out;
}

}  // namespace

namespace detail {

Tensor composed_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                          const AttentionOptions& options, Tensor* probabilities) {
  const double scale = checked_scale(q, k, v, options);
  Tensor scores = matmul(q * scale, k, false, true);  // [B, H, Tq, Tk]
  if (options.attn_mask.defined()) scores = scores + options.attn_mask.to(scores.dtype());
  if (options.is_causal) {
    scores = scores + causal_scores_mask(q.dim(2), k.dim(2), q.device()).to(scores.dtype());
  }
  const Tensor p = softmax(scores, -1);
  if (probabilities != nullptr) *probabilities = p;
  const Tensor kept = options.dropout_p > 0.0
                          ? dropout(p, options.dropout_p, true, options.seed, options.offset)
                          : p;
  return matmul(kept, v);
}

ComposedAttentionScope::ComposedAttentionScope() : previous_(t_force_composed) {
  t_force_composed = true;
}

ComposedAttentionScope::~ComposedAttentionScope() {
  t_force_composed = previous_;
}

}  // namespace detail

Tensor scaled_dot_product_attention(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                                    const AttentionOptions& options) {
  if (!q_in.defined() || !k_in.defined() || !v_in.defined()) refuse("q, k and v must be defined");
  // Under autocast the products run in the low dtype, as matmul's would.
  const Tensor q = autocast_low(q_in), k = autocast_low(k_in), v = autocast_low(v_in);
  const double scale = checked_scale(q, k, v, options);
  if (fused_available(q, k, v, options.attn_mask)) {
    const ProfileSpan span = profile_span("attention: fused");
    return fused_attention(q, k, v, options, scale);
  }
  const ProfileSpan span = profile_span("attention: composed");
  return detail::composed_attention(q, k, v, options, nullptr);
}

}  // namespace switchyard
