// MultiheadAttention and the Transformer encoder, composed from matmul, softmax and layer norm.
#include <cmath>

#include "switchyard/nn_sequence.h"
#include "switchyard/ops.h"
#include "switchyard/status.h"
#include "tensor/attention_internal.h"

namespace switchyard {

namespace {

// [B, L, E] -> [B, heads, L, E / heads]
Tensor split_heads(const Tensor& x, int64_t heads) {
  return x.reshape(Shape{x.dim(0), x.dim(1), heads, x.dim(2) / heads}).permute({0, 2, 1, 3});
}

// An additive mask from a user's mask: integer (or bool-like) 1 = not allowed becomes -inf
// (log(1 - m)); a float mask is already additive.
Tensor additive_mask(const Tensor& mask) {
  if (is_floating(mask.dtype())) return mask.to(DType::kF32).detach();
  return log(1.0 - mask.to(DType::kF32).detach());
}

// The additive masks for scores [B, H, T, S], combined, or undefined when there are none. The
// causal mask is the attention op's flag, never a tensor.
Tensor score_mask(const AttentionMasks& masks, int64_t batch, int64_t target, int64_t source) {
  Tensor total;
  auto combine = [&total](const Tensor& mask) { total = total.defined() ? total + mask : mask; };
  if (masks.attn_mask.defined()) {
    if (masks.attn_mask.rank() != 2 || masks.attn_mask.dim(0) != target ||
        masks.attn_mask.dim(1) != source) {
      throw_error(invalid_argument("MultiheadAttention: attn_mask must be [target, source] = [" +
                                   std::to_string(target) + ", " + std::to_string(source) +
                                   "], got " + masks.attn_mask.shape().to_string()));
    }
    combine(additive_mask(masks.attn_mask));
  }
  if (masks.is_causal && target != source) {
    throw_error(
        invalid_argument("MultiheadAttention: a causal mask needs target length == "
                         "source length, got " +
                         std::to_string(target) + " and " + std::to_string(source)));
  }
  if (masks.key_padding_mask.defined()) {
    const Tensor& m = masks.key_padding_mask;
    if (m.rank() != 2 || m.dim(0) != batch || m.dim(1) != source) {
      throw_error(
          invalid_argument("MultiheadAttention: key_padding_mask must be [batch, source] = [" +
                           std::to_string(batch) + ", " + std::to_string(source) + "], got " +
                           m.shape().to_string()));
    }
    const Tensor padding = additive_mask(m).reshape(Shape{batch, 1, 1, source});
    total = total.defined() ? total.reshape(Shape{1, 1, target, source}) + padding : padding;
  }
  return total;
}

}  // namespace

// ---- MultiheadAttention -------------------------------------------------------------------------

MultiheadAttention::MultiheadAttention(InitContext& init, int64_t embed_dim, int64_t num_heads,
                                       double dropout, bool bias, bool batch_first,
                                       uint64_t dropout_seed)
    : embed_dim_(embed_dim), num_heads_(num_heads), batch_first_(batch_first) {
  if (embed_dim < 1 || num_heads < 1 || embed_dim % num_heads != 0) {
    throw_error(invalid_argument("MultiheadAttention: embed_dim (" + std::to_string(embed_dim) +
                                 ") must be a positive multiple of num_heads (" +
                                 std::to_string(num_heads) + ")"));
  }
  // PyTorch's initialisation: Xavier-uniform in_proj, zero biases, out_proj as a Linear.
  in_proj_weight_ =
      register_parameter("in_proj_weight", xavier_uniform(init, Shape{3 * embed_dim, embed_dim}));
  if (bias) {
    in_proj_bias_ =
        register_parameter("in_proj_bias", zeros(Shape{3 * embed_dim}, init.device, init.dtype));
  }
  out_proj_ = std::make_shared<Linear>(init, embed_dim, embed_dim, bias);
  if (bias) {
    Tensor out_bias = out_proj_->bias();
    out_bias.fill_(0.0);
  }
  register_module("out_proj", out_proj_);
  dropout_ = std::make_shared<Dropout>(dropout, dropout_seed);
  register_module("attn_dropout", dropout_);
}

AttentionResult MultiheadAttention::attend(const Tensor& query, const Tensor& key,
                                           const Tensor& value, const AttentionMasks& masks,
                                           bool need_weights) {
  for (const Tensor* t : {&query, &key, &value}) {
    if (t->rank() != 3 || t->dim(2) != embed_dim_) {
      throw_error(invalid_argument(describe() + ": query, key and value must be " +
                                   (batch_first_ ? "[batch, length, " : "[length, batch, ") +
                                   std::to_string(embed_dim_) + "], got " +
                                   t->shape().to_string()));
    }
  }
  auto batch_major = [this](const Tensor& t) { return batch_first_ ? t : t.transpose(0, 1); };
  const Tensor q_in = batch_major(query), k_in = batch_major(key), v_in = batch_major(value);
  const int64_t e = embed_dim_;
  Tensor q, k, v;
  if (query.shares_storage_with(key) && query.shape() == key.shape() &&
      key.shares_storage_with(value) && key.shape() == value.shape()) {
    const Tensor qkv = linear(q_in, in_proj_weight_, in_proj_bias_);  // one product for all three
    q = qkv.narrow(2, 0, e), k = qkv.narrow(2, e, e), v = qkv.narrow(2, 2 * e, e);
  } else {
    auto project = [this, e](const Tensor& x, int64_t part) {
      return linear(x, in_proj_weight_.narrow(0, part * e, e),
                    in_proj_bias_.defined() ? in_proj_bias_.narrow(0, part * e, e) : Tensor());
    };
    q = project(q_in, 0), k = project(k_in, 1), v = project(v_in, 2);
  }
  const int64_t batch = q_in.dim(0), target = q_in.dim(1), source = k_in.dim(1);
  AttentionOptions options;
  options.attn_mask = score_mask(masks, batch, target, source);
  options.is_causal = masks.is_causal;
  options.scale = 1.0 / std::sqrt(static_cast<double>(e / num_heads_));
  if (dropout_->is_training() && dropout_->p() > 0.0) {
    options.dropout_p = dropout_->p();
    options.seed = dropout_->seed();
    options.offset = dropout_->reserve_counters(batch * num_heads_ * target * source);
  }
  const Tensor qh = split_heads(q, num_heads_), kh = split_heads(k, num_heads_);
  const Tensor vh = split_heads(v, num_heads_);
  // The weights are the composed path's probabilities; without them one attention op runs.
  Tensor probabilities;
  const Tensor heads = need_weights  // [B, H, T, d]
                           ? detail::composed_attention(qh, kh, vh, options, &probabilities)
                           : scaled_dot_product_attention(qh, kh, vh, options);
  Tensor out = (*out_proj_)(heads.permute({0, 2, 1, 3}).reshape(Shape{batch, target, e}));
  AttentionResult result;
  result.output = batch_first_ ? out : out.transpose(0, 1);
  if (need_weights) result.weights = mean(probabilities, {1});
  return result;
}

std::string MultiheadAttention::describe() const {
  return "MultiheadAttention(embed_dim=" + std::to_string(embed_dim_) +
         ", num_heads=" + std::to_string(num_heads_) +
         ", dropout=" + std::to_string(dropout_->p()) +
         ", batch_first=" + (batch_first_ ? "true" : "false") + ")";
}

// ---- TransformerEncoderLayer --------------------------------------------------------------------

TransformerEncoderLayer::TransformerEncoderLayer(InitContext& init,
                                                 const TransformerEncoderOptions& options)
    : options_(options) {
  if (options.activation != "relu" && options.activation != "gelu") {
    throw_error(invalid_argument("TransformerEncoderLayer: activation must be relu or gelu, not '" +
                                 options.activation + "'"));
  }
  if (options.dim_feedforward < 1) {
    throw_error(invalid_argument("TransformerEncoderLayer: dim_feedforward must be >= 1"));
  }
  const uint64_t seed = options.dropout_seed;
  self_attn_ =
      std::make_shared<MultiheadAttention>(init, options.d_model, options.nhead, options.dropout,
                                           options.bias, options.batch_first, seed);
  register_module("self_attn", self_attn_);
  linear1_ = std::make_shared<Linear>(init, options.d_model, options.dim_feedforward, options.bias);
  register_module("linear1", linear1_);
  dropout_ = std::make_shared<Dropout>(options.dropout, seed + 1);
  register_module("dropout", dropout_);
  linear2_ = std::make_shared<Linear>(init, options.dim_feedforward, options.d_model, options.bias);
  register_module("linear2", linear2_);
  norm1_ = std::make_shared<LayerNorm>(init, std::vector<int64_t>{options.d_model},
                                       options.layer_norm_eps);
  register_module("norm1", norm1_);
  norm2_ = std::make_shared<LayerNorm>(init, std::vector<int64_t>{options.d_model},
                                       options.layer_norm_eps);
  register_module("norm2", norm2_);
  dropout1_ = std::make_shared<Dropout>(options.dropout, seed + 2);
  register_module("dropout1", dropout1_);
  dropout2_ = std::make_shared<Dropout>(options.dropout, seed + 3);
  register_module("dropout2", dropout2_);
}

Tensor TransformerEncoderLayer::self_attention_block(const Tensor& x, const AttentionMasks& masks) {
  return (*dropout1_)(self_attn_->attend(x, x, x, masks).output);
}

Tensor TransformerEncoderLayer::feed_forward_block(const Tensor& x) {
  const Tensor hidden = (*linear1_)(x);
  const Tensor activated = options_.activation == "gelu" ? gelu(hidden) : relu(hidden);
  return (*dropout2_)((*linear2_)((*dropout_)(activated)));
}

Tensor TransformerEncoderLayer::encode(const Tensor& input, const AttentionMasks& masks) {
  if (options_.norm_first) {
    const Tensor x = input + self_attention_block((*norm1_)(input), masks);
    return x + feed_forward_block((*norm2_)(x));
  }
  const Tensor x = (*norm1_)(input + self_attention_block(input, masks));
  return (*norm2_)(x + feed_forward_block(x));
}

std::string TransformerEncoderLayer::describe() const {
  const TransformerEncoderOptions& o = options_;
  return "TransformerEncoderLayer(d_model=" + std::to_string(o.d_model) +
         ", nhead=" + std::to_string(o.nhead) +
         ", dim_feedforward=" + std::to_string(o.dim_feedforward) +
         ", dropout=" + std::to_string(o.dropout) + ", activation=" + o.activation +
         ", norm_first=" + (o.norm_first ? "true" : "false") + ")";
}

// ---- TransformerEncoder -------------------------------------------------------------------------

TransformerEncoder::TransformerEncoder(InitContext& init, const TransformerEncoderOptions& layer,
                                       int num_layers, bool final_norm) {
  if (num_layers < 1) {
    throw_error(invalid_argument("TransformerEncoder: num_layers must be >= 1, got " +
                                 std::to_string(num_layers)));
  }
  auto list = std::make_shared<Sequential>();
  for (int i = 0; i < num_layers; ++i) {
    TransformerEncoderOptions options = layer;
    options.dropout_seed = layer.dropout_seed + 4 * static_cast<uint64_t>(i);
    layers_.push_back(std::make_shared<TransformerEncoderLayer>(init, options));
    list->add(layers_.back());
  }
  register_module("layers", list);
  if (final_norm) {
    norm_ = std::make_shared<LayerNorm>(init, std::vector<int64_t>{layer.d_model},
                                        layer.layer_norm_eps);
    register_module("norm", norm_);
  }
}

Tensor TransformerEncoder::encode(const Tensor& input, const AttentionMasks& masks) {
  Tensor x = input;
  for (const auto& layer : layers_) x = layer->encode(x, masks);
  return norm_ ? (*norm_)(x) : x;
}

std::string TransformerEncoder::describe() const {
  return "TransformerEncoder(num_layers=" + std::to_string(layers_.size()) +
         ", norm=" + (norm_ ? "true" : "false") + ")";
}

}  // namespace switchyard
