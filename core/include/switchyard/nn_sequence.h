// Sequence layers with PyTorch's semantics, parameter names and layouts, so that a PyTorch
// state_dict saved as safetensors loads strictly: Embedding, LSTM, GRU, MultiheadAttention,
// TransformerEncoderLayer / TransformerEncoder, positional encodings and sequence heads.
//
// Sequences are [batch, time, features] with batch_first, else [time, batch, features], as in
// PyTorch. A key padding mask is [batch, time] with 1 (or true) where a position is padding and
// must be ignored; an attention mask is [target, source], additive (0 or -inf) or, when its dtype
// is an integer one, 1 where attention is not allowed. Layers are composed from the op set, so
// every backend runs them; Module::forward(x) runs the common case (self-attention, zero initial
// states) and the named methods take the rest.
//
// Threads: as every Module (nn.h): shared for eval-mode forward passes, one thread at a time for
// anything else.
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "switchyard/nn.h"

namespace switchyard {

// A lookup table: weight [num_embeddings, embedding_dim], initialised N(0, 1). forward takes
// indices of any shape (an integer dtype, or floats holding whole numbers) and returns
// [..., embedding_dim]. The padding_idx row starts at zero and receives no gradient.
class Embedding : public Module {
 public:
  Embedding(InitContext& init, int64_t num_embeddings, int64_t embedding_dim,
            std::optional<int64_t> padding_idx = std::nullopt);
  Tensor forward(const Tensor& indices) override;
  std::string describe() const override;
  const Tensor& weight() const { return weight_; }

 private:
  int64_t num_embeddings_, embedding_dim_;
  std::optional<int64_t> padding_idx_;
  Tensor weight_;
};

struct RecurrentOptions {
  int64_t input_size = 0;
  int64_t hidden_size = 0;
  int num_layers = 1;
  bool bias = true;
  bool batch_first = false;
  double dropout = 0.0;  // on the outputs of every layer but the last, while training
  bool bidirectional = false;
  uint64_t dropout_seed = 0;
};

// What an LSTM or GRU returns: output [B, T, D*H] (batch_first) or [T, B, D*H]; h_n (and for the
// LSTM c_n) [num_layers * D, B, H], D = 2 when bidirectional. Undefined c_n for a GRU.
struct RecurrentResult {
  Tensor output, h_n, c_n;
};

// LSTM (gates i, f, g, o) and GRU (gates r, z, n) with PyTorch's equations and parameter names
// weight_ih_l{k}[_reverse] [G*H, in], weight_hh_l{k} [G*H, H], bias_ih_l{k}, bias_hh_l{k} [G*H],
// all initialised U(-1/sqrt(H), 1/sqrt(H)).
class RecurrentBase : public Module {
 public:
  Tensor forward(const Tensor& input) override { return run(input).output; }
  // h0 / c0 [num_layers * D, B, H], or undefined for zeros.
  RecurrentResult run(const Tensor& input, const Tensor& h0 = {}, const Tensor& c0 = {});
  std::string describe() const override;
  const RecurrentOptions& options() const { return options_; }

 protected:
  enum class Cell { kLstm, kGru };
  RecurrentBase(InitContext& init, const RecurrentOptions& options, Cell cell);

 private:
  struct Weights {
    Tensor w_ih, w_hh, b_ih, b_hh;
  };
  void check_state(const Tensor& state, const char* name, int64_t batch) const;

  RecurrentOptions options_;
  Cell cell_;
  std::vector<Weights> weights_;                    // layer-major, forward then reverse
  std::vector<std::shared_ptr<Dropout>> dropouts_;  // between layers
};

class LSTM : public RecurrentBase {
 public:
  LSTM(InitContext& init, const RecurrentOptions& options)
      : RecurrentBase(init, options, Cell::kLstm) {}
};

class GRU : public RecurrentBase {
 public:
  GRU(InitContext& init, const RecurrentOptions& options)
      : RecurrentBase(init, options, Cell::kGru) {}
};

struct AttentionMasks {
  Tensor key_padding_mask;  // [B, S], 1 = ignore that key
  Tensor attn_mask;         // [T, S] additive, or integer with 1 = not allowed
  bool is_causal = false;   // adds the causal mask (a target attends to sources <= itself)
};

struct AttentionResult {
  Tensor output;   // like the query
  Tensor weights;  // [B, T, S], averaged over heads (when asked for)
};

// PyTorch's nn.MultiheadAttention with kdim = vdim = embed_dim: in_proj_weight [3E, E],
// in_proj_bias [3E], out_proj.weight [E, E], out_proj.bias [E]. Dropout on the attention
// weights while training.
class MultiheadAttention : public Module {
 public:
  MultiheadAttention(InitContext& init, int64_t embed_dim, int64_t num_heads, double dropout = 0.0,
                     bool bias = true, bool batch_first = false, uint64_t dropout_seed = 0);
  Tensor forward(const Tensor& input) override { return attend(input, input, input).output; }
  AttentionResult attend(const Tensor& query, const Tensor& key, const Tensor& value,
                         const AttentionMasks& masks = {}, bool need_weights = false);
  std::string describe() const override;
  int64_t embed_dim() const { return embed_dim_; }
  int64_t num_heads() const { return num_heads_; }
  bool batch_first() const { return batch_first_; }

 private:
  int64_t embed_dim_, num_heads_;
  bool batch_first_;
  Tensor in_proj_weight_, in_proj_bias_;
  std::shared_ptr<Linear> out_proj_;
  std::shared_ptr<Dropout> dropout_;  // on the attention weights
};

struct TransformerEncoderOptions {
  int64_t d_model = 0;
  int64_t nhead = 1;
  int64_t dim_feedforward = 2048;
  double dropout = 0.1;
  std::string activation = "relu";  // or "gelu"
  double layer_norm_eps = 1e-5;
  bool batch_first = false;
  bool norm_first = false;
  bool bias = true;
  uint64_t dropout_seed = 0;
};

// PyTorch's nn.TransformerEncoderLayer: children self_attn, linear1, dropout, linear2, norm1,
// norm2, dropout1, dropout2 (post-norm unless norm_first).
class TransformerEncoderLayer : public Module {
 public:
  TransformerEncoderLayer(InitContext& init, const TransformerEncoderOptions& options);
  Tensor forward(const Tensor& input) override { return encode(input); }
  Tensor encode(const Tensor& input, const AttentionMasks& masks = {});
  std::string describe() const override;
  const TransformerEncoderOptions& options() const { return options_; }

 private:
  Tensor self_attention_block(const Tensor& x, const AttentionMasks& masks);
  Tensor feed_forward_block(const Tensor& x);

  TransformerEncoderOptions options_;
  std::shared_ptr<MultiheadAttention> self_attn_;
  std::shared_ptr<Linear> linear1_, linear2_;
  std::shared_ptr<Dropout> dropout_, dropout1_, dropout2_;
  std::shared_ptr<LayerNorm> norm1_, norm2_;
};

// PyTorch's nn.TransformerEncoder: layers.0 ... layers.{n-1}, then an optional final norm.
class TransformerEncoder : public Module {
 public:
  TransformerEncoder(InitContext& init, const TransformerEncoderOptions& layer, int num_layers,
                     bool final_norm = false);
  Tensor forward(const Tensor& input) override { return encode(input); }
  Tensor encode(const Tensor& input, const AttentionMasks& masks = {});
  std::string describe() const override;

 private:
  std::vector<std::shared_ptr<TransformerEncoderLayer>> layers_;
  std::shared_ptr<LayerNorm> norm_;
};

// Adds position information to [B, T, d_model] (batch_first) or [T, B, d_model]: sinusoidal
// (the fixed encoding of "Attention Is All You Need", no parameters) or learned (a parameter
// "weight" [max_len, d_model], initialised N(0, 0.02)).
class PositionalEncoding : public Module {
 public:
  enum class Kind { kSinusoidal, kLearned };
  PositionalEncoding(InitContext& init, Kind kind, int64_t d_model, int64_t max_len,
                     bool batch_first = true);
  Tensor forward(const Tensor& input) override;
  std::string describe() const override;
  bool batch_first() const { return batch_first_; }
  // [max_len, d_model]: the learned parameter or the fixed sinusoids.
  const Tensor& table() const { return table_; }

 private:
  Kind kind_;
  int64_t d_model_, max_len_;
  bool batch_first_;
  Tensor table_;  // [max_len, d_model]: the parameter, or the fixed sinusoids
};

// Prepends a learned token ("cls_token" [1, 1, d_model], N(0, 0.02)) to [B, T, d] sequences, so
// that a CLS head can read position 0 after the encoder.
class ClsToken : public Module {
 public:
  ClsToken(InitContext& init, int64_t d_model);
  Tensor forward(const Tensor& input) override;
  std::string describe() const override;

 private:
  int64_t d_model_;
  Tensor token_;
};

// [B, T, F] -> [B, F]: the mean over time (leaving out padded steps when a mask is given), the
// last step, or the first step (a CLS token's position).
class SequencePool : public Module {
 public:
  enum class Mode { kMean, kLast, kFirst };
  explicit SequencePool(Mode mode) : mode_(mode) {}
  Tensor forward(const Tensor& input) override { return pool(input); }
  // key_padding_mask [B, T], 1 = padding: mean leaves those steps out; last takes each
  // sequence's last unpadded step.
  Tensor pool(const Tensor& input, const Tensor& key_padding_mask = {}) const;
  std::string describe() const override;
  Mode mode() const { return mode_; }

 private:
  Mode mode_;
};

// The additive form of a mask: 0 where allowed, -inf where not; [T, T] causal when asked.
Tensor causal_mask(int64_t size, const std::shared_ptr<Device>& device);

}  // namespace switchyard

#pragma GCC visibility pop
