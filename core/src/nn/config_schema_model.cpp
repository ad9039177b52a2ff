// The model section of the configuration schema: every layer type and the keys it takes, owned
// here, by the layer that builds the layers, and registered with the runtime's schema
// (ConfigSection, runtime/config_schema.h). A new layer type is one more entry in layer_schema().
#include "runtime/config_schema_parts.h"

namespace switchyard::config_schema {
namespace {

// The keys of maxpool2d and avgpool2d; `what` says what the window does.
std::vector<SchemaField> pool_fields(const std::string& what) {
  return {
      {"kernel_size",
       int_in(1, kMaxWindow),
       kRequired,
       {"The side of the square window each output " + what + ".", "required", "2"}},
      {"stride",
       int_in(1, kMaxWindow),
       kOptional,
       {"How far the window moves between outputs.", "kernel_size", "2"}},
      {"padding",
       int_in(0, kMaxWindow),
       kOptional,
       {"Zeros added on each side of the input.", "0", "1"}},
  };
}

constexpr double kMaxLayers = 1024;  // num_layers, heads

SchemaField dropout_field(const std::string& where, const std::string& default_text) {
  return {
      "dropout",
      number_in(0.0, 1.0),
      kOptional,
      {"The probability of zeroing each value " + where + " while training.", default_text, "0.2"}};
}

// The keys of lstm and gru.
std::vector<SchemaField> recurrent_fields() {
  return {
      {"hidden_size",
       int_in(1, kMaxWidth),
       kRequired,
       {"Features of the hidden state (per direction): the layer's output per step.", "required",
        "128"}},
      {"num_layers",
       int_in(1, kMaxLayers),
       kOptional,
       {"Recurrent layers stacked, each reading the one before.", "1", "2"}},
      {"bidirectional",
       boolean(),
       kOptional,
       {"Whether a second direction reads the sequence backwards; the outputs are joined "
        "(2 x hidden_size per step).",
        "false", "true"}},
      dropout_field("between stacked layers", "0"),
  };
}

std::vector<SchemaField> transformer_fields() {
  return {
      {"heads",
       int_in(1, kMaxLayers),
       kOptional,
       {"Attention heads; the features per step must be a multiple of it.", "1", "4"}},
      {"feedforward",
       int_in(1, kMaxWidth),
       kOptional,
       {"Width of the feed-forward block.", "4 x features per step", "1024"}},
      {"num_layers", int_in(1, kMaxLayers), kOptional, {"Encoder layers stacked.", "1", "2"}},
      dropout_field("in attention and feed-forward blocks", "0.1"),
      {"activation",
       one_of({"relu", "gelu"}),
       kOptional,
       {"The feed-forward block's activation.", "relu", "gelu"}},
      {"norm_first",
       boolean(),
       kOptional,
       {"Layer norm before each block (pre-norm, with a final norm after the stack) instead of "
        "after.",
        "false", "true"}},
      {"eps",
       number_above_to(0.0, 1.0),
       kOptional,
       {"The layer norms' epsilon.", "1e-05", "1e-06"}},
  };
}

std::vector<SchemaField> batch_norm_fields() {
  return {{"eps",
           number_above_to(0.0, 1.0),
           kOptional,
           {"Added to the variance before the square root.", "1e-05", "0.001"}}};
}

// Sequence layers: samples are [time, features] (data.sample_shape).
std::vector<std::pair<std::string, std::vector<SchemaField>>> sequence_layer_types() {
  return {
      {"embedding",
       {{"num_embeddings",
         int_in(1, kMaxWidth),
         kRequired,
         {"Rows of the table: token ids run from 0 to num_embeddings - 1.", "required", "1000"}},
        {"embedding_dim",
         int_in(1, kMaxWidth),
         kRequired,
         {"Features per token.", "required", "64"}},
        {"padding_idx",
         int_in(0, kMaxWidth),
         kOptional,
         {"A token id whose row stays zero and is not trained.", "none", "0"}}}},
      {"lstm", recurrent_fields()},
      {"gru", recurrent_fields()},
      {"positional_encoding",
       {{"mode",
         one_of({"sinusoidal", "learned"}),
         kOptional,
         {"Fixed sinusoids, or a learned vector per position.", "sinusoidal", "learned"}},
        {"max_len",
         int_in(1, kMaxWidth),
         kOptional,
         {"The longest sequence it can encode.", "the sequence length", "512"}}}},
      {"cls_token", {}},
      {"transformer_encoder", transformer_fields()},
      {"sequence_pool",
       {{"mode",
         one_of({"mean", "last", "first"}),
         kOptional,
         {"How [time, features] becomes [features]: the mean over time, the last step, or the "
          "first (a cls_token's position).",
          "mean", "last"}}}},
      {"batchnorm1d", batch_norm_fields()},
      {"batchnorm2d", batch_norm_fields()},
  };
}

SchemaNode layer_schema() {
  std::vector<SchemaVariant> variants = {
      {"linear",
       {{"out_features",
         int_in(1, kMaxWidth),
         kRequired,
         {"Outputs per sample.", "required", "10"}},
        {"bias",
         boolean(),
         kOptional,
         {"Whether the layer adds a learned bias.", "true", "false"}}}},
      {"conv2d",
       {{"out_channels",
         int_in(1, kMaxWidth),
         kRequired,
         {"Output channels (filters).", "required", "16"}},
        {"kernel_size",
         int_in(1, kMaxWindow),
         kRequired,
         {"The side of the square filter.", "required", "3"}},
        {"stride",
         int_in(1, kMaxWindow),
         kOptional,
         {"How far the filter moves between outputs.", "1", "2"}},
        {"padding",
         int_in(0, kMaxWindow),
         kOptional,
         {"Zeros added on each side of the input.", "0", "1"}},
        {"dilation",
         int_in(1, kMaxWindow),
         kOptional,
         {"Spacing between the filter's taps.", "1", "2"}},
        {"groups",
         int_in(1, kMaxWidth),
         kOptional,
         {"Channel groups, each convolved on its own; must divide the input channels and "
          "out_channels (the input channels: depthwise).",
          "1", "16"}},
        {"bias",
         boolean(),
         kOptional,
         {"Whether the layer adds a learned bias.", "true", "false"}}}},
      {"maxpool2d", pool_fields("takes the largest value of")},
      {"avgpool2d", pool_fields("averages")},
      {"dropout",
       {{"p",
         number_in(0.0, 1.0),
         kOptional,
         {"The probability of zeroing each value while training.", "0.5", "0.2"}}}},
      {"layernorm",
       {{"eps",
         number_above_to(0.0, 1.0),
         kOptional,
         {"Added to the variance before the square root.", "1e-05", "1e-06"}}}},
      {"relu", {}},
      {"gelu", {}},
      {"tanh", {}},
      {"sigmoid", {}},
      {"flatten", {}},
      {"vae_latent",
       {{"latent",
         int_in(1, kMaxWidth),
         kRequired,
         {"Numbers in the code: linear heads give the mean mu and the log-variance logvar of each, "
          "and the layer outputs z = mu + exp(logvar / 2) * eps (eps ~ N(0, 1), seeded) while "
          "training, mu when evaluating and predicting. On [features] samples.",
          "required", "8"}},
        {"beta",
         number_from_to(0.0, 1e6),
         kOptional,
         {"Weight of the KL term added to the loss: beta * KL(N(mu, exp(logvar)) || N(0, 1)), "
          "the KL summed over the code and averaged over the batch's samples.",
          "1", "0.01"}}}},
  };
  for (auto& [type, fields] : sequence_layer_types()) variants.push_back({type, std::move(fields)});
  return tagged_map_of(
      "type", {"The layer's type, which decides the other keys it takes.", "required", "linear"},
      std::move(variants));
}

SchemaNode model_schema() {
  return map_of({
      {"layers",
       sequence_of(layer_schema(),
                   "a sequence of layers, such as [{type: linear, out_features: 10}]"),
       kOptional,
       {"The layers in order (see Layer types).", "linear(64), relu, linear(one output per class)",
        "[{type: linear, out_features: 16}, {type: relu}, {type: linear, out_features: 3}]"}},
      {"init",
       one_of({"kaiming", "xavier"}),
       kOptional,
       {"How weights are initialised (uniform).", "kaiming", "xavier"}},
      {"weights",
       path_value(),
       kOptional,
       {"A safetensors file to start from instead of random weights.", "none",
        "pretrained.safetensors"}},
  });
}

}  // namespace

const ConfigSection kModelSection(20, [] {
  return SchemaField{"model", model_schema(), kOptional, {"The network.", "", ""}};
});
}  // namespace switchyard::config_schema
