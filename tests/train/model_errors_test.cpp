// Errors found while building the model or shaping the data point at the YAML node they are
// about: file, line, column and the dotted key, like the schema's errors.
#include <catch2/catch.hpp>

#include "switchyard/nn.h"
#include "switchyard/ops.h"
#include "switchyard/train.h"
#include "train/trainer_test_support.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

TrainConfig config_from(const std::string& yaml) {
  use_repository_data();
  const Config config = value_or_throw(Config::load_string(yaml, "run.yaml"));
  return value_or_throw(TrainConfig::from_config(config));
}

// The status of building the model of `yaml` for samples of `sample_shape` and `classes` classes.
Status build_status(const std::string& yaml, const std::vector<int64_t>& sample_shape,
                    int64_t classes) {
  const TrainConfig config = config_from(yaml);
  InitContext init;
  init.device = reference_device();
  return build_model(config.model, sample_shape, classes, init).status();
}

}  // namespace

TEST_CASE("a layer that needs image-shaped samples names its file, line and column", "[model]") {
  const std::string yaml =
      "data: {dataset: digits}\n"
      "model:\n"
      "  layers:\n"
      "    - {type: linear, out_features: 16}\n"
      "    - {type: conv2d, out_channels: 4, kernel_size: 3}\n"
      "    - {type: linear, out_features: 10}\n";
  const Status status = build_status(yaml, {64}, 10);
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.message() ==
        "run.yaml:5:7: key 'model.layers[1]': conv2d needs image-shaped samples [C, H, W], but "
        "its input is [16]; set data.image_shape (e.g. [1, 8, 8] for digits)");
}

TEST_CASE("a model whose output does not match the classes points at its last layer", "[model]") {
  const std::string yaml =
      "data: {dataset: digits, image_shape: [1, 8, 8]}\n"
      "model:\n"
      "  layers:\n"
      "    - {type: conv2d, out_channels: 4, kernel_size: 1}\n"
      "    - {type: flatten}\n";
  const Status status = build_status(yaml, {1, 8, 8}, 10);
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.message() ==
        "run.yaml:5:7: key 'model.layers[1]': the model's output per sample is [256], but the "
        "data has 10 classes: end model.layers with {type: linear, out_features: 10}");
}

TEST_CASE("a window larger than its input names the layer's place", "[model]") {
  const std::string yaml =
      "data: {dataset: digits}\n"
      "model:\n"
      "  layers:\n"
      "    - {type: maxpool2d, kernel_size: 9}\n";
  const Status status = build_status(yaml, {1, 8, 8}, 10);
  CHECK(status.message() ==
        "run.yaml:4:7: key 'model.layers[0]': maxpool2d turns [1, 8, 8] into nothing");
}

TEST_CASE("conv2d groups that do not divide the channels name the layer's place", "[model]") {
  const std::string yaml =
      "data: {dataset: digits, image_shape: [1, 8, 8]}\n"
      "model:\n"
      "  layers:\n"
      "    - {type: conv2d, out_channels: 6, kernel_size: 3, padding: 1}\n"
      "    - {type: conv2d, out_channels: 6, kernel_size: 3, groups: 4}\n";
  const Status status = build_status(yaml, {1, 8, 8}, 10);
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.message() ==
        "run.yaml:5:7: key 'model.layers[1]': conv2d groups 4 must divide its input channels (6) "
        "and out_channels (6)");
}

TEST_CASE("a depthwise conv2d layer (groups = channels) has PyTorch's weight layout", "[model]") {
  const std::string yaml =
      "data: {dataset: digits, image_shape: [1, 8, 8]}\n"
      "model:\n"
      "  layers:\n"
      "    - {type: conv2d, out_channels: 6, kernel_size: 3, padding: 1}\n"
      "    - {type: conv2d, out_channels: 12, kernel_size: 3, groups: 6}\n"
      "    - {type: flatten}\n"
      "    - {type: linear, out_features: 10}\n";
  const TrainConfig config = config_from(yaml);
  InitContext init;
  init.device = reference_device();
  const BuiltModel model = value_or_throw(build_model(config.model, {1, 8, 8}, 10, init));
  const auto named = model.network->named_parameters();
  bool found = false;
  for (const auto& [name, tensor] : named) {
    if (tensor.shape() == Shape{12, 1, 3, 3}) found = true;  // [out, in / groups, k, k]
  }
  CHECK(found);
  const Tensor x = rand_uniform({2, 1, 8, 8}, -1.0, 1.0, 3, 0, init.device);
  CHECK(model.network->forward(x).shape() == Shape{2, 10});
}

TEST_CASE("a layer made in code (no YAML) is still named by its index", "[model]") {
  ModelSpec spec;
  LayerSpec layer;
  layer.type = "conv2d";
  layer.out_channels = 2;
  layer.kernel_size = 3;
  spec.layers.push_back(layer);
  InitContext init;
  init.device = reference_device();
  CHECK(build_model(spec, {4}, 2, init).status().message() ==
        "model.layers[0]: conv2d needs image-shaped samples [C, H, W], but its input is [4]; set "
        "data.image_shape (e.g. [1, 8, 8] for digits)");
}

TEST_CASE("an image shape that does not fit the data points at data.image_shape", "[model]") {
  const TrainConfig config = config_from(
      "data:\n  dataset: digits\n  image_shape: [3, 8, 8]\nmodel:\n  layers: [{type: flatten}]\n");
  const Status status = prepare_data(config.data, config.base_dir).status();
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.message() ==
        "run.yaml:3:16: key 'data.image_shape': data set digits has 64 features per sample, "
        "which cannot be shaped as [3x8x8]");
}
