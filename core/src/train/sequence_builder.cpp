// Sequence layers and batch normalisation from model.layers (see sequence_builder.h).
#include "train/sequence_builder.h"

#include <algorithm>
#include <sstream>

#include "switchyard/nn_sequence.h"

namespace switchyard::detail {
namespace {

const char* const kSequenceTypes[] = {"embedding",           "lstm",        "gru",
                                      "positional_encoding", "cls_token",   "transformer_encoder",
                                      "sequence_pool",       "batchnorm1d", "batchnorm2d"};

std::string shape_words(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

Status needs_sequence(const LayerSpec& layer, const std::vector<int64_t>& shape) {
  if (shape.size() == 2) return ok_status();
  return invalid_argument(layer.type + " needs sequence-shaped samples [time, features], but its " +
                          "input is " + shape_words(shape) +
                          "; set data.sample_shape (e.g. [8, 8] for digits as 8 steps of 8)");
}

Result<BuiltLayer> embedding(const LayerSpec& layer, const std::vector<int64_t>& shape,
                             InitContext& init) {
  if (shape.size() != 1) {
    return invalid_argument("embedding needs samples of token ids [time], but its input is " +
                            shape_words(shape));
  }
  std::optional<int64_t> padding;
  if (layer.padding_idx >= 0) padding = layer.padding_idx;
  auto module =
      std::make_shared<Embedding>(init, layer.num_embeddings, layer.embedding_dim, padding);
  return BuiltLayer{module,
                    {shape[0], layer.embedding_dim},
                    "embedding(" + std::to_string(layer.num_embeddings) + "x" +
                        std::to_string(layer.embedding_dim) +
                        (padding ? ",pad" + std::to_string(*padding) : std::string()) + ")"};
}

Result<BuiltLayer> recurrent(const LayerSpec& layer, const std::vector<int64_t>& shape,
                             InitContext& init) {
  SY_RETURN_IF_ERROR(needs_sequence(layer, shape));
  RecurrentOptions options;
  options.input_size = shape[1];
  options.hidden_size = layer.hidden_size;
  options.num_layers = layer.num_layers;
  options.batch_first = true;
  options.dropout = layer.dropout;
  options.bidirectional = layer.bidirectional;
  std::shared_ptr<Module> module;
  if (layer.type == "lstm") {
    module = std::make_shared<LSTM>(init, options);
  } else {
    module = std::make_shared<GRU>(init, options);
  }
  const int64_t width = (layer.bidirectional ? 2 : 1) * layer.hidden_size;
  std::ostringstream part;
  part << layer.type << "(" << shape[1] << "->" << layer.hidden_size << ",layers"
       << layer.num_layers << (layer.bidirectional ? ",bidirectional" : "") << ",dropout"
       << layer.dropout << ")";
  return BuiltLayer{module, {shape[0], width}, part.str()};
}

Result<BuiltLayer> positional(const LayerSpec& layer, const std::vector<int64_t>& shape,
                              InitContext& init) {
  SY_RETURN_IF_ERROR(needs_sequence(layer, shape));
  const std::string kind = layer.mode.empty() ? "sinusoidal" : layer.mode;
  if (kind != "sinusoidal" && kind != "learned") {
    return invalid_argument("positional_encoding: mode must be sinusoidal or learned, not '" +
                            kind + "'");
  }
  const int64_t max_len = layer.max_len > 0 ? layer.max_len : shape[0];
  if (max_len < shape[0]) {
    return invalid_argument("positional_encoding: max_len " + std::to_string(max_len) +
                            " is shorter than the sequence (" + std::to_string(shape[0]) +
                            " steps)");
  }
  auto module = std::make_shared<PositionalEncoding>(init,
                                                     kind == "learned"
                                                         ? PositionalEncoding::Kind::kLearned
                                                         : PositionalEncoding::Kind::kSinusoidal,
                                                     shape[1], max_len, true);
  return BuiltLayer{module, shape,
                    "positional_encoding(" + kind + ",max_len" + std::to_string(max_len) + ")"};
}

Result<BuiltLayer> transformer(const LayerSpec& layer, const std::vector<int64_t>& shape,
                               InitContext& init) {
  SY_RETURN_IF_ERROR(needs_sequence(layer, shape));
  if (shape[1] % layer.heads != 0) {
    return invalid_argument("transformer_encoder: the features per step (" +
                            std::to_string(shape[1]) + ") must be a multiple of heads (" +
                            std::to_string(layer.heads) + "); put a linear layer before it");
  }
  TransformerEncoderOptions options;
  options.d_model = shape[1];
  options.nhead = layer.heads;
  options.dim_feedforward = layer.feedforward > 0 ? layer.feedforward : 4 * shape[1];
  options.dropout = layer.dropout;
  options.activation = layer.activation;
  options.layer_norm_eps = layer.eps;
  options.batch_first = true;
  options.norm_first = layer.norm_first;
  auto module =
      std::make_shared<TransformerEncoder>(init, options, layer.num_layers, layer.norm_first);
  std::ostringstream part;
  part << "transformer_encoder(d" << shape[1] << ",heads" << layer.heads << ",ff"
       << options.dim_feedforward << ",layers" << layer.num_layers << "," << layer.activation
       << (layer.norm_first ? ",norm_first" : "") << ",dropout" << layer.dropout << ")";
  return BuiltLayer{module, shape, part.str()};
}

Result<BuiltLayer> pool(const LayerSpec& layer, const std::vector<int64_t>& shape) {
  SY_RETURN_IF_ERROR(needs_sequence(layer, shape));
  const std::string mode = layer.mode.empty() ? "mean" : layer.mode;
  SequencePool::Mode value = SequencePool::Mode::kMean;
  if (mode == "last") {
    value = SequencePool::Mode::kLast;
  } else if (mode == "first") {
    value = SequencePool::Mode::kFirst;
  } else if (mode != "mean") {
    return invalid_argument("sequence_pool: mode must be mean, last or first, not '" + mode + "'");
  }
  return BuiltLayer{
      std::make_shared<SequencePool>(value), {shape[1]}, "sequence_pool(" + mode + ")"};
}

Result<BuiltLayer> batch_norm(const LayerSpec& layer, const std::vector<int64_t>& shape,
                              InitContext& init) {
  const bool two_d = layer.type == "batchnorm2d";
  if (two_d ? shape.size() != 3 : (shape.empty() || shape.size() > 2)) {
    return invalid_argument(
        layer.type + " needs samples shaped " +
        (two_d ? "[channels, height, width]" : "[features] or [channels, length]") +
        ", but its input is " + shape_words(shape));
  }
  BatchNormOptions options;
  options.epsilon = layer.eps;
  auto module = std::make_shared<BatchNorm>(init, shape[0], two_d ? 2 : 1, options);
  std::ostringstream part;
  part << layer.type << "(" << shape[0] << ",eps" << layer.eps << ")";
  return BuiltLayer{module, shape, part.str()};
}

}  // namespace

bool is_sequence_layer(const std::string& type) {
  return std::find(std::begin(kSequenceTypes), std::end(kSequenceTypes), type) !=
         std::end(kSequenceTypes);
}

Result<BuiltLayer> build_sequence_layer(const LayerSpec& layer, const std::vector<int64_t>& shape,
                                        InitContext& init) {
  const std::string& type = layer.type;
  if (type == "embedding") return embedding(layer, shape, init);
  if (type == "lstm" || type == "gru") return recurrent(layer, shape, init);
  if (type == "positional_encoding") return positional(layer, shape, init);
  if (type == "transformer_encoder") return transformer(layer, shape, init);
  if (type == "sequence_pool") return pool(layer, shape);
  if (type == "batchnorm1d" || type == "batchnorm2d") return batch_norm(layer, shape, init);
  if (type == "cls_token") {
    SY_RETURN_IF_ERROR(needs_sequence(layer, shape));
    return BuiltLayer{std::make_shared<ClsToken>(init, shape[1]),
                      {shape[0] + 1, shape[1]},
                      "cls_token(" + std::to_string(shape[1]) + ")"};
  }
  return invalid_argument("unknown layer type '" + type + "'");
}

}  // namespace switchyard::detail
