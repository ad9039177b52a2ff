// ONNX export (switchyard/onnx.h, `train.export: model.onnx`): every config of configs/, and
// models that use the layer types no config uses, trained for one epoch and exported, pass ONNX's
// own checker (python3-onnx, full_check) and, imported again, predict what the checkpoint's
// Predictor predicts on the same raw rows. Exports that cannot be written say where.
//
// The comparison is exact on the reference backend for most models: the exporter writes the ops
// that the layers run, in their order, and the importer runs the same switchyard ops (MatMul + Add
// fused back into linear, the Erf pattern into gelu). LayerNormalization is the exception: ONNX
// keeps its epsilon as a float, so 1e-5 arrives as 1e-5 rounded to float (a change of 2.5e-14 in
// the variance term, computed in double by the reference backend) and a row's result may move by
// an ulp; models with layer normalisation are held to 1e-5 relative instead.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "formats/onnx_export.h"
#include "onnx/onnx_test_support.h"
#include "switchyard/config.h"
#include "switchyard/onnx.h"
#include "switchyard/ops.h"
#include "switchyard/predict.h"
#include "switchyard/train.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

const std::string kPython = "/usr/bin/python3";

// What one export is checked against: its config, extra --set overrides, and whether the model
// has layer normalisation (see the file comment).
struct ExportCase {
  std::string name;
  std::string config;  // in configs/
  std::vector<std::string> overrides;
  bool layer_norm = false;
};

// Layer types no config uses, on the digits data: image layers, the sequence layers (every
// recurrent and Transformer option), and an embedding of the pixel values as ids.
const std::vector<ExportCase>& extra_cases() {
  static const std::vector<ExportCase> cases = {
      {"image-layers",
       "digits-cnn.yaml",
       {"model.layers=[{type: conv2d, out_channels: 4, kernel_size: 3, padding: 1}, "
        "{type: conv2d, out_channels: 8, kernel_size: 3, padding: 1, groups: 4}, "
        "{type: batchnorm2d}, {type: gelu}, {type: avgpool2d, kernel_size: 2}, "
        "{type: conv2d, out_channels: 6, kernel_size: 2, dilation: 2, padding: 1, bias: false, "
        "groups: 2}, "
        "{type: maxpool2d, kernel_size: 3, stride: 2, padding: 1}, {type: flatten}, "
        "{type: batchnorm1d}, {type: sigmoid}, {type: layernorm}, "
        "{type: linear, out_features: 12, bias: false}, {type: tanh}, {type: dropout, p: 0.5}, "
        "{type: vae_latent, latent: 6}, {type: linear, out_features: 10}]"},
       true},
      {"sequence-layers",
       "digits-transformer.yaml",
       {"model.layers=[{type: lstm, hidden_size: 8, num_layers: 2, bidirectional: true, "
        "dropout: 0.2}, {type: gru, hidden_size: 6, num_layers: 2, bidirectional: true}, "
        "{type: linear, out_features: 8}, {type: batchnorm1d}, {type: cls_token}, "
        "{type: positional_encoding, mode: learned}, {type: transformer_encoder, heads: 2, "
        "feedforward: 16, num_layers: 2, norm_first: true, activation: gelu}, "
        "{type: layernorm}, {type: sequence_pool, mode: first}, {type: linear, out_features: 10}]"},
       true},
      {"embedding",
       "digits-gru.yaml",
       {"data.scale=none", "data.sample_shape=[64]",
        "model.layers=[{type: embedding, num_embeddings: 17, embedding_dim: 6}, "
        "{type: gru, hidden_size: 8}, {type: sequence_pool, mode: mean}, {type: relu}, "
        "{type: linear, out_features: 10}]"},
       false},
  };
  return cases;
}

// The training configs in configs/ (digits-predict.yaml predicts from digits-mlp's checkpoint).
std::vector<ExportCase> config_cases() {
  std::vector<ExportCase> cases;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(SWITCHYARD_SOURCE_DIR) / "configs")) {
    const std::string text = read_text(entry.path());
    if (entry.path().extension() != ".yaml" || contains(text, "task: predict")) continue;
    const bool layer_norm = contains(text, "transformer_encoder") || contains(text, "layernorm");
    cases.push_back(
        {entry.path().stem().string(), entry.path().filename().string(), {}, layer_norm});
  }
  std::sort(cases.begin(), cases.end(),
            [](const ExportCase& a, const ExportCase& b) { return a.name < b.name; });
  return cases;
}

// Loads configs/<config> with `overrides` plus one epoch, the checkpoint and train.export in `dir`.
TrainConfig export_config(const TempDir& dir, const ExportCase& c) {
  use_repository_data();
  std::vector<std::string> overrides = c.overrides;
  overrides.push_back("train.epochs=1");
  overrides.push_back("train.progress=none");
  overrides.push_back("train.checkpoint=" + (dir / "model.ckpt").string());
  overrides.push_back("train.export=" + (dir / "model.onnx").string());
  const Config config = value_or_throw(Config::load_file(
      std::filesystem::path(SWITCHYARD_SOURCE_DIR) / "configs" / c.config, overrides));
  return value_or_throw(TrainConfig::from_config(config));
}

bool python_onnx_available() {
  static const bool available =
      std::system((kPython + " -c 'import onnx' >/dev/null 2>&1").c_str()) == 0;
  return available;
}

// ONNX's checker with full_check (strict shape inference); "" when it passes, else its output.
std::string onnx_checker_errors(const std::filesystem::path& model) {
  const CommandResult result = run_command(
      kPython + " -c 'import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]), " +
      "full_check=True)' " + model.string());
  return result.exit_code == 0 ? ""
                               : result.output + " (exit " + std::to_string(result.exit_code) + ")";
}

struct RawRows {
  std::vector<float> values;  // rows x width, unscaled, as a CSV row holds them
  int64_t rows = 0;
  int64_t width = 0;
  bool relative = false;  // data.series with offset: last
};

// Up to 120 test rows as raw features. A series with offset: last keeps its windows relative to
// their last value; the window's own level (data.target_offsets) is added back.
RawRows raw_test_rows(const TrainConfig& config) {
  const PreparedData data = value_or_throw(prepare_data(config.data, config.base_dir));
  const Dataset& test = data.split.test;
  RawRows raw;
  raw.width = test.feature_count();
  raw.rows = std::min<int64_t>(test.sample_count, 120);
  raw.values.assign(test.features.begin(), test.features.begin() + raw.rows * raw.width);
  raw.relative = config.data.series.enabled && config.data.series.relative_to_last;
  if (raw.relative) {
    for (int64_t r = 0; r < raw.rows; ++r) {
      for (int64_t f = 0; f < raw.width; ++f)
        raw.values[r * raw.width + f] += test.target_offsets[r];
    }
  }
  return raw;
}

// What predict gives for raw rows: Predictor::predict_into, which for a series with offset: last
// reads each window relative to its last value and adds that value back to the outputs, as
// `switchyard predict` does (the series settings come from the YAML's data.series, since a series
// checkpoint keeps no table layout).
std::vector<float> predictor_outputs(Predictor& predictor, const RawRows& raw) {
  const int64_t outputs = predictor.output_width();
  std::vector<float> out(static_cast<size_t>(raw.rows * outputs));
  predictor.predict_into(raw.values.data(), raw.rows, out.data(), 64);
  return out;
}

struct Difference {
  double absolute = 0;
  double relative = 0;  // |a - b| / max(|b|, 1e-3)
};

Difference compare(const std::vector<float>& got, const std::vector<float>& expected) {
  REQUIRE(got.size() == expected.size());
  Difference d;
  for (size_t k = 0; k < got.size(); ++k) {
    const double diff = std::fabs(static_cast<double>(got[k]) - static_cast<double>(expected[k]));
    d.absolute = std::max(d.absolute, diff);
    d.relative =
        std::max(d.relative, diff / std::max(std::fabs(static_cast<double>(expected[k])), 1e-3));
  }
  return d;
}

void check_export(const ExportCase& c) {
  INFO(c.name);
  TempDir dir;
  const TrainConfig config = export_config(dir, c);
  Trainer trainer(config, test_device());
  const TrainSummary summary = trainer.run();
  const std::filesystem::path file = dir / "model.onnx";
  REQUIRE(summary.exported_weights == file.string());
  REQUIRE(std::filesystem::exists(file));

  if (python_onnx_available()) {
    CHECK(onnx_checker_errors(file).empty());
  } else {
    WARN("skipped ONNX's checker: "
         << kPython << " cannot import onnx (tools/lib/setup.sh installs python3-onnx)");
  }

  const RawRows raw = raw_test_rows(config);
  Predictor predictor(config, dir / "model.ckpt", test_device());
  const std::vector<float> expected = predictor_outputs(predictor, raw);
  const std::unique_ptr<OnnxModel> model = OnnxModel::load(file, test_device());
  const std::vector<Tensor> outputs =
      model->run({Tensor::from_host(raw.values, Shape{raw.rows, raw.width}, test_device())});
  const bool regression = !predictor.target_names().empty();
  REQUIRE(outputs.size() == (regression ? 1U : 2U));
  const Difference d = compare(outputs[0].to_host_float(), expected);
  // One row alone: the batch axis is dynamic.
  const std::vector<Tensor> single = model->run(
      {Tensor::from_host(std::vector<float>(raw.values.begin(), raw.values.begin() + raw.width),
                         Shape{1, raw.width}, test_device())});
  const std::vector<float> first = single[0].to_host_float();
  const Difference d1 = compare(
      first,
      std::vector<float>(expected.begin(), expected.begin() + static_cast<int64_t>(first.size())));
  WARN(c.name << ": max difference to the Predictor over " << raw.rows << " rows: " << d.absolute
              << " absolute, " << d.relative << " relative; " << model->execution_summary());
  if (c.layer_norm) {
    CHECK(d.relative <= 1e-5);
    CHECK(d1.relative <= 1e-5);
  } else {
    CHECK(d.absolute == 0.0);
    CHECK(d1.absolute == 0.0);
  }
}

}  // namespace

TEST_CASE("every config exports as ONNX that predicts what its checkpoint predicts",
          "[onnx][export]") {
  for (const ExportCase& c : config_cases()) {
    DYNAMIC_SECTION(c.name) {
      check_export(c);
    }
  }
}

TEST_CASE("every layer type exports as ONNX that predicts what its checkpoint predicts",
          "[onnx][export]") {
  for (const ExportCase& c : extra_cases()) {
    DYNAMIC_SECTION(c.name) {
      check_export(c);
    }
  }
}

namespace {

// iris-mlp trained for one epoch with train.export in `dir` (a second of training).
TrainConfig trained_iris(const TempDir& dir) {
  const TrainConfig config = export_config(dir, {"iris-mlp", "iris-mlp.yaml", {}, false});
  Trainer trainer(config, test_device());
  trainer.run();
  return config;
}

std::string metadata(const onnx::ModelProto& model, const std::string& key) {
  for (const auto& entry : model.metadata_props()) {
    if (entry.key() == key) return entry.value();
  }
  return "(missing)";
}

}  // namespace

TEST_CASE("an exported model says what it is: producer, opset, batch axis, names and metadata",
          "[onnx][export]") {
  TempDir dir;
  const TrainConfig config = trained_iris(dir);
  Predictor predictor(config, dir / "model.ckpt", test_device());
  const onnx::ModelProto model = read_model(dir / "model.onnx");
  CHECK(model.producer_name() == "switchyard");
  REQUIRE(model.opset_import_size() == 1);
  CHECK(model.opset_import(0).domain().empty());
  CHECK(model.opset_import(0).version() == 17);
  CHECK(metadata(model, "switchyard.architecture") == predictor.built_model().architecture);
  CHECK(metadata(model, "switchyard.class_names") == "[\"setosa\",\"versicolor\",\"virginica\"]");

  const std::unique_ptr<OnnxModel> imported = OnnxModel::load(dir / "model.onnx", test_device());
  REQUIRE(imported->inputs().size() == 1);
  const OnnxValueInfo& input = imported->inputs()[0];
  CHECK(input.name == "features");
  CHECK(input.shape == std::vector<int64_t>{-1, 4});
  CHECK(input.dim_names[0] == "batch");
  REQUIRE(imported->outputs().size() == 2);
  CHECK(imported->outputs()[0].name == "probabilities");
  CHECK(imported->outputs()[1].name == "logits");
  CHECK(imported->outputs()[1].shape == std::vector<int64_t>{-1, 3});
  // The logits are the network's outputs on the scaled rows; the probabilities their softmax.
  const std::vector<Tensor> out = imported->run(
      {Tensor::from_host(std::vector<float>{5.1F, 3.5F, 1.4F, 0.2F}, Shape{1, 4}, test_device())});
  const std::vector<float> softmax_of_logits = softmax(out[1], 1).to_host_float();
  CHECK(out[0].to_host_float() == softmax_of_logits);
}

TEST_CASE("export_onnx from a checkpoint's Predictor writes what train.export wrote",
          "[onnx][export]") {
  TempDir dir;
  const TrainConfig config = trained_iris(dir);
  Predictor predictor(config, dir / "model.ckpt", test_device());
  throw_if_error(export_onnx(dir / "again.onnx", predictor));
  CHECK(read_bytes(dir / "again.onnx") == read_bytes(dir / "model.onnx"));
}

TEST_CASE("ONNX export errors name the file", "[onnx][export]") {
  TempDir dir;
  const TrainConfig config = trained_iris(dir);
  Predictor predictor(config, dir / "model.ckpt", test_device());
  write_text(dir / "plain-file", "not a folder");
  const std::filesystem::path below_a_file = dir / "plain-file" / "model.onnx";
  const Status status = export_onnx(below_a_file, predictor);
  REQUIRE_FALSE(status.ok());
  INFO(status.message());
  CHECK(contains(status.message(), below_a_file.string()));
  CHECK_FALSE(std::filesystem::exists(below_a_file));

  // A folder where the file should go: refused before training, naming the key and the path.
  std::filesystem::create_directories(dir / "folder.onnx");
  use_repository_data();
  const Config folder_config = value_or_throw(
      Config::load_file(std::filesystem::path(SWITCHYARD_SOURCE_DIR) / "configs" / "iris-mlp.yaml",
                        {"train.epochs=1", "train.progress=none", "train.checkpoint=none",
                         "train.export=" + (dir / "folder.onnx").string()}));
  const TrainConfig folder_train = value_or_throw(TrainConfig::from_config(folder_config));
  try {
    Trainer trainer(folder_train, test_device());
    trainer.run();
    FAIL("training with train.export on a folder succeeded");
  } catch (const Error& error) {
    INFO(error.what());
    CHECK(contains(error.what(), "train.export"));
    CHECK(contains(error.what(), "ONNX model " + (dir / "folder.onnx").string()));
  }
}

namespace {

// A layer type the exporter has never heard of.
class Doubler : public Module {
 public:
  Tensor forward(const Tensor& input) override { return input * 2.0; }
  std::string describe() const override { return "Doubler()"; }
};

}  // namespace

TEST_CASE("a layer without an ONNX form is refused, naming it", "[onnx][export]") {
  InitContext init{test_device()};
  BuiltModel built;
  built.network = std::make_shared<Sequential>();
  built.network->emplace<Linear>(init, 4, 3);
  detail::OnnxExportSource source;
  source.model = &built;
  source.sample_shape = {4};
  source.class_names = {"a", "b", "c"};

  SECTION("batch normalisation by each batch's statistics") {
    BatchNormOptions options;
    options.track_running_stats = false;
    built.network->emplace<BatchNorm>(init, 3, 1, options);
    const auto bytes = detail::onnx_model_bytes(source);
    REQUIRE_FALSE(bytes.ok());
    CHECK(bytes.status().code() == StatusCode::kInvalidArgument);
    CHECK(contains(bytes.status().message(), "BatchNorm1d(3"));
    CHECK(contains(bytes.status().message(), "track_running_stats"));
  }
  SECTION("a module the exporter does not know") {
    built.network->emplace<Doubler>();
    const auto bytes = detail::onnx_model_bytes(source);
    REQUIRE_FALSE(bytes.ok());
    CHECK(bytes.status().code() == StatusCode::kUnimplemented);
    CHECK(contains(bytes.status().message(), "layer 1, Doubler()"));
  }
}

TEST_CASE("switchyard run says where train.export wrote the ONNX model", "[onnx][export][cli]") {
  TempDir dir;
  const std::string file = (dir / "iris.onnx").string();
  const CommandResult run = run_command(
      "SWITCHYARD_DATA_DIR=" SWITCHYARD_SOURCE_DIR "/data " + cli() + " run " +
      SWITCHYARD_SOURCE_DIR "/configs/iris-mlp.yaml --set train.epochs=1 " +
      "--set train.progress=none --set train.checkpoint=none --set train.export=" + file);
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(contains(run.output, "model: " + file + " (ONNX)"));
  const std::unique_ptr<OnnxModel> model = OnnxModel::load(file, test_device());
  CHECK(model->outputs().size() == 2);
}
