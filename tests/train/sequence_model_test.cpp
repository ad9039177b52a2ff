// Sequence models from model.layers: PyTorch's parameter names under the layer's position, the
// shapes each layer hands on, and errors that point at the YAML node they are about.
#include <catch2/catch.hpp>

#include "switchyard/train.h"
#include "train/trainer_test_support.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

TrainConfig sequence_config(const std::string& layers, const std::string& shape = "[8, 8]") {
  use_repository_data();
  const std::string yaml =
      "data: {dataset: digits, sample_shape: " + shape + "}\nmodel:\n  layers:\n" + layers;
  const Config config = value_or_throw(Config::load_string(yaml, "seq.yaml"));
  return value_or_throw(TrainConfig::from_config(config));
}

const std::shared_ptr<Device>& device() {
  static const std::shared_ptr<Device> shared = reference_device();
  return shared;
}

Result<BuiltModel> build(const TrainConfig& config, const std::vector<int64_t>& sample_shape) {
  InitContext init;
  init.device = device();
  return build_model(config.model, sample_shape, 10, init);
}

std::vector<std::string> names(const BuiltModel& model) {
  std::vector<std::string> out;
  for (const auto& [name, tensor] : model.network->state_dict()) out.push_back(name);
  return out;
}

}  // namespace

TEST_CASE("an LSTM model keeps PyTorch's parameter names and shapes", "[model][sequence]") {
  const TrainConfig config = sequence_config(
      "    - {type: lstm, hidden_size: 16, num_layers: 2, bidirectional: true, dropout: 0.2}\n"
      "    - {type: sequence_pool, mode: last}\n"
      "    - {type: linear, out_features: 10}\n");
  const BuiltModel model = value_or_throw(build(config, {8, 8}));
  const std::vector<std::string> got = names(model);
  REQUIRE(got.size() == 18);
  CHECK(got[0] == "0.weight_ih_l0");
  CHECK(got[4] == "0.weight_ih_l0_reverse");
  CHECK(got[15] == "0.bias_hh_l1_reverse");
  CHECK(got[16] == "2.weight");
  CHECK(model.network->state_dict()[8].second.shape() == Shape{64, 32});  // layer 1 reads 2 x 16
  CHECK(model.dropouts.size() == 1);  // between the two layers, seeded per step by the trainer
  CHECK(model.architecture ==
        "input[8, 8] lstm(8->16,layers2,bidirectional,dropout0.2) sequence_pool(last) "
        "linear(32->10,bias) classes=10 dtype=f32");
}

TEST_CASE(
    "a Transformer model: per-step linear, positions, encoder, pooling, and BatchNorm's "
    "buffers in the state",
    "[model][sequence]") {
  const TrainConfig config = sequence_config(
      "    - {type: linear, out_features: 16}\n"
      "    - {type: positional_encoding, mode: learned}\n"
      "    - {type: cls_token}\n"
      "    - {type: transformer_encoder, heads: 4, feedforward: 32, num_layers: 2}\n"
      "    - {type: sequence_pool, mode: first}\n"
      "    - {type: batchnorm1d}\n"
      "    - {type: linear, out_features: 10}\n");
  const BuiltModel model = value_or_throw(build(config, {8, 8}));
  const std::vector<std::string> got = names(model);
  CHECK(got[0] == "0.weight");
  CHECK(got[2] == "1.weight");  // learned positions [8, 16]
  CHECK(got[3] == "2.cls_token");
  CHECK(got[4] == "3.layers.0.self_attn.in_proj_weight");
  CHECK(std::find(got.begin(), got.end(), "5.running_var") != got.end());
  CHECK(std::find(got.begin(), got.end(), "5.num_batches_tracked") != got.end());
  CHECK(model.dropouts.size() == 8);  // 4 per encoder layer, each seeded by the trainer
  const Tensor x = zeros(Shape{3, 8, 8}, device());
  CHECK((*model.network)(x).shape() == Shape{3, 10});
}

TEST_CASE("sequence layers on the wrong shape name the layer and how to fix it",
          "[model][sequence]") {
  const TrainConfig flat = sequence_config(
      "    - {type: gru, hidden_size: 4}\n"
      "    - {type: linear, out_features: 10}\n");
  CHECK(build(flat, {64}).status().message() ==
        "seq.yaml:4:7: key 'model.layers[0]': gru needs sequence-shaped samples [time, "
        "features], but its input is [64]; set data.sample_shape (e.g. [8, 8] for digits as 8 "
        "steps of 8)");
  const TrainConfig heads = sequence_config(
      "    - {type: transformer_encoder, heads: 3}\n"
      "    - {type: sequence_pool}\n"
      "    - {type: linear, out_features: 10}\n");
  CHECK(build(heads, {8, 8}).status().message() ==
        "seq.yaml:4:7: key 'model.layers[0]': transformer_encoder: the features per step (8) "
        "must be a multiple of heads (3); put a linear layer before it");
  const TrainConfig positions = sequence_config(
      "    - {type: positional_encoding, max_len: 4}\n"
      "    - {type: sequence_pool}\n"
      "    - {type: linear, out_features: 10}\n");
  CHECK(build(positions, {8, 8}).status().message() ==
        "seq.yaml:4:7: key 'model.layers[0]': positional_encoding: max_len 4 is shorter than the "
        "sequence (8 steps)");
}

TEST_CASE("a sequence length that does not divide the row names data.sample_shape",
          "[model][sequence]") {
  use_repository_data();
  const Config config = value_or_throw(
      Config::load_string("data: {dataset: digits, sample_shape: [7, 9]}\n", "seq.yaml"));
  const TrainConfig train = value_or_throw(TrainConfig::from_config(config));
  const Status status = prepare_data(train.data, config.directory()).status();
  CHECK(status.message() ==
        "seq.yaml:1:39: key 'data.sample_shape': data set digits has 64 features per sample, "
        "which cannot be shaped as [7x9]");
}
