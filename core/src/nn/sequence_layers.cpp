// Embedding, positional encodings, the CLS token and sequence pooling.
#include <cmath>
#include <limits>

#include "switchyard/nn_sequence.h"
#include "switchyard/ops.h"
#include "switchyard/status.h"

namespace switchyard {

namespace {

void require_at_least(int64_t value, int64_t least, const char* what, const std::string& layer) {
  if (value < least) {
    throw_error(invalid_argument(layer + ": " + what + " must be >= " + std::to_string(least) +
                                 ", got " + std::to_string(value)));
  }
}

// 1 where the key padding mask says "keep", 0 where it says "padding": [B, T] f32.
Tensor keep_mask(const Tensor& key_padding_mask, const Tensor& input) {
  if (key_padding_mask.rank() != 2 || key_padding_mask.dim(0) != input.dim(0) ||
      key_padding_mask.dim(1) != input.dim(1)) {
    throw_error(invalid_argument(
        "key_padding_mask must be [batch, time] = [" + std::to_string(input.dim(0)) + ", " +
        std::to_string(input.dim(1)) + "], got " + key_padding_mask.shape().to_string()));
  }
  return 1.0 - key_padding_mask.to(DType::kF32).detach();
}

}  // namespace

// ---- Embedding ----------------------------------------------------------------------------------

Embedding::Embedding(InitContext& init, int64_t num_embeddings, int64_t embedding_dim,
                     std::optional<int64_t> padding_idx)
    : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {
  require_at_least(num_embeddings, 1, "num_embeddings", "Embedding");
  require_at_least(embedding_dim, 1, "embedding_dim", "Embedding");
  if (padding_idx) {
    // PyTorch's rule: a negative padding_idx counts from the end.
    const int64_t index = *padding_idx < 0 ? *padding_idx + num_embeddings : *padding_idx;
    if (index < 0 || index >= num_embeddings) {
      throw_error(invalid_argument("Embedding: padding_idx " + std::to_string(*padding_idx) +
                                   " is outside [0, " + std::to_string(num_embeddings) + ")"));
    }
    padding_idx_ = index;
  }
  Tensor weight = init_normal(init, Shape{num_embeddings, embedding_dim}, 0.0, 1.0);
  if (padding_idx_) weight.narrow(0, *padding_idx_, 1).fill_(0.0);
  weight_ = register_parameter("weight", weight);
}

Tensor Embedding::forward(const Tensor& indices) {
  const Tensor flat = (is_floating(indices.dtype()) ? indices.detach().to(DType::kI64) : indices)
                          .reshape(Shape{indices.numel()});
  // An index outside the table: an error on the CPU backends, a NaN row on vulkan and cuda.
  Tensor rows = index_select_or_nan(weight_, 0, flat);
  if (padding_idx_) {
    // Rows read at padding_idx keep their value but pass no gradient back to the table.
    const Tensor pad = full(Shape{1}, static_cast<double>(*padding_idx_), flat.device());
    const Tensor keep = (1.0 - equal(flat.to(DType::kF32), pad)).reshape(Shape{flat.numel(), 1});
    rows = rows * keep.to(rows.dtype()) + rows.detach() * (1.0 - keep).to(rows.dtype());
  }
  std::vector<int64_t> shape(indices.shape().begin(), indices.shape().end());
  shape.push_back(embedding_dim_);
  return rows.reshape(Shape(shape));
}

std::string Embedding::describe() const {
  return "Embedding(" + std::to_string(num_embeddings_) + ", " + std::to_string(embedding_dim_) +
         (padding_idx_ ? ", padding_idx=" + std::to_string(*padding_idx_) : std::string()) + ")";
}

// ---- positional encodings -----------------------------------------------------------------------

PositionalEncoding::PositionalEncoding(InitContext& init, Kind kind, int64_t d_model,
                                       int64_t max_len, bool batch_first)
    : kind_(kind), d_model_(d_model), max_len_(max_len), batch_first_(batch_first) {
  require_at_least(d_model, 1, "d_model", "PositionalEncoding");
  require_at_least(max_len, 1, "max_len", "PositionalEncoding");
  if (kind == Kind::kLearned) {
    table_ = register_parameter("weight", init_normal(init, Shape{max_len, d_model}, 0.0, 0.02));
    return;
  }
  // pe[p, 2i] = sin(p / 10000^(2i/d)), pe[p, 2i+1] = cos(p / 10000^(2i/d)), computed in double.
  std::vector<float> table(static_cast<size_t>(max_len * d_model));
  for (int64_t p = 0; p < max_len; ++p) {
    for (int64_t i = 0; i < d_model; ++i) {
      const double angle =
          static_cast<double>(p) /
          std::pow(10000.0, static_cast<double>(i - i % 2) / static_cast<double>(d_model));
      table[static_cast<size_t>(p * d_model + i)] =
          static_cast<float>(i % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  }
  table_ = Tensor::from_host(table, Shape{max_len, d_model}, init.device, init.dtype);
}

Tensor PositionalEncoding::forward(const Tensor& input) {
  const int time_axis = batch_first_ ? 1 : 0;
  if (input.rank() != 3 || input.dim(2) != d_model_) {
    throw_error(invalid_argument(describe() + ": expects " +
                                 (batch_first_ ? "[batch, time, " : "[time, batch, ") +
                                 std::to_string(d_model_) + "], got " + input.shape().to_string()));
  }
  const int64_t steps = input.dim(time_axis);
  if (steps > max_len_) {
    throw_error(invalid_argument(describe() + ": the sequence has " + std::to_string(steps) +
                                 " steps, more than max_len"));
  }
  const Tensor positions = table_.narrow(0, 0, steps);
  return input + (batch_first_ ? positions : positions.unsqueeze(1)).to(input.dtype());
}

std::string PositionalEncoding::describe() const {
  return std::string(kind_ == Kind::kLearned ? "LearnedPositionalEncoding("
                                             : "SinusoidalPositionalEncoding(") +
         "d_model=" + std::to_string(d_model_) + ", max_len=" + std::to_string(max_len_) + ")";
}

// ---- CLS token and pooling ----------------------------------------------------------------------

ClsToken::ClsToken(InitContext& init, int64_t d_model) : d_model_(d_model) {
  require_at_least(d_model, 1, "d_model", "ClsToken");
  token_ = register_parameter("cls_token", init_normal(init, Shape{1, 1, d_model}, 0.0, 0.02));
}

Tensor ClsToken::forward(const Tensor& input) {
  if (input.rank() != 3 || input.dim(2) != d_model_) {
    throw_error(invalid_argument(describe() + ": expects [batch, time, " +
                                 std::to_string(d_model_) + "], got " + input.shape().to_string()));
  }
  const Tensor token = token_.to(input.dtype()).expand(Shape{input.dim(0), 1, d_model_});
  return concat({token, input}, 1);
}

std::string ClsToken::describe() const {
  return "ClsToken(d_model=" + std::to_string(d_model_) + ")";
}

Tensor SequencePool::pool(const Tensor& input, const Tensor& key_padding_mask) const {
  if (input.rank() != 3 || input.dim(1) < 1) {
    throw_error(invalid_argument(describe() +
                                 ": expects [batch, time, features] with time >= 1, "
                                 "got " +
                                 input.shape().to_string()));
  }
  const int64_t steps = input.dim(1);
  if (mode_ == Mode::kFirst) return input.narrow(1, 0, 1).squeeze(1);
  if (!key_padding_mask.defined()) {
    if (mode_ == Mode::kLast) return input.narrow(1, steps - 1, 1).squeeze(1);
    return mean(input, {1});
  }
  const Tensor keep = keep_mask(key_padding_mask, input);
  if (mode_ == Mode::kMean) {
    const Tensor kept = keep.to(input.dtype()).unsqueeze(2);
    return sum(input * kept, {1}) / sum(kept, {1});
  }
  // The last kept step of each sequence: its row in the [B * T, F] view of the input.
  const std::vector<float> keep_host = keep.to_host_float();
  std::vector<int64_t> rows;
  for (int64_t b = 0; b < input.dim(0); ++b) {
    int64_t last = 0;
    for (int64_t t = 0; t < steps; ++t) {
      if (keep_host[static_cast<size_t>(b * steps + t)] > 0.5f) last = t;
    }
    rows.push_back(b * steps + last);
  }
  const Tensor index = Tensor::from_host(rows, Shape{input.dim(0)}, input.device());
  return index_select(input.reshape(Shape{input.dim(0) * steps, input.dim(2)}), 0, index);
}

std::string SequencePool::describe() const {
  const char* names[] = {"mean", "last", "first"};
  return std::string("SequencePool(") + names[static_cast<int>(mode_)] + ")";
}

Tensor causal_mask(int64_t size, const std::shared_ptr<Device>& device) {
  std::vector<float> mask(static_cast<size_t>(size * size), 0.0f);
  for (int64_t target = 0; target < size; ++target) {
    for (int64_t source = target + 1; source < size; ++source) {
      mask[static_cast<size_t>(target * size + source)] = -std::numeric_limits<float>::infinity();
    }
  }
  return Tensor::from_host(mask, Shape{size, size}, device);
}

}  // namespace switchyard
