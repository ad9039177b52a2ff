// docs/config.md is generated from the schema, and the defaults it documents are the ones the code
// uses: both checked here, so neither can drift from the schema.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "config_test_support.h"
#include "runtime/config_schema.h"
#include "switchyard/data.h"
#include "switchyard/predict.h"
#include "switchyard/train.h"

namespace switchyard {
namespace {

namespace schema = config_schema;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const schema::SchemaNode& layer_schema() {
  return *schema::find_field(schema::find_field(schema::root_schema(), "model")->schema, "layers")
              ->schema.element;
}

// Every field of the schema by dotted key; a layer type's keys as "layer.<type>.<key>".
void collect_fields(const std::vector<schema::SchemaField>& fields, const std::string& prefix,
                    std::map<std::string, const schema::SchemaField*>& out) {
  for (const schema::SchemaField& field : fields) {
    out[prefix + field.key] = &field;
    if (field.schema.kind == schema::ValueKind::kMap) {
      collect_fields(field.schema.fields, prefix + field.key + ".", out);
    }
  }
}

std::map<std::string, const schema::SchemaField*> all_fields() {
  std::map<std::string, const schema::SchemaField*> fields;
  collect_fields(schema::root_schema().fields, "", fields);
  const schema::SchemaNode& layer = layer_schema();
  collect_fields(layer.fields, "layer.", fields);
  for (const schema::SchemaVariant& variant : layer.variants) {
    collect_fields(variant.fields, "layer." + variant.tag + ".", fields);
  }
  return fields;
}

// A default the code's settings can be compared with: a number, a boolean or one of the choices.
bool is_checkable_default(const schema::SchemaField& field) {
  const std::string& text = field.doc.default_value;
  if (field.required || text.empty()) return false;
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  if (end == text.c_str() + text.size()) return true;
  if (text == "true" || text == "false") return true;
  const auto& choices = field.schema.choices;
  return std::find(choices.begin(), choices.end(), text) != choices.end();
}

// The documented default of `key` equals `actual`: numerically when both are numbers.
void check_default(std::set<std::string>& checked, const std::string& key,
                   const std::string& actual) {
  checked.insert(key);
  const auto fields = all_fields();
  INFO("key " << key);
  REQUIRE(fields.count(key) == 1);
  const std::string& documented = fields.at(key)->doc.default_value;
  char* end = nullptr;
  const double documented_number = std::strtod(documented.c_str(), &end);
  const bool numeric = !documented.empty() && end == documented.c_str() + documented.size();
  if (numeric) {
    CHECK(documented_number == Approx(std::strtod(actual.c_str(), nullptr)).margin(1e-300));
  } else {
    CHECK(documented == actual);
  }
}

std::string text(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}
std::string text(bool value) {
  return value ? "true" : "false";
}

Config load(const std::string& yaml) {
  Result<Config> config = Config::load_string(yaml, "cfg.yaml");
  INFO(config.status().message());
  REQUIRE(config.ok());
  return std::move(config).value();
}

}  // namespace

TEST_CASE("docs/config.md is exactly what the schema generates", "[config][reference]") {
  const std::string committed = read_text(std::string(SWITCHYARD_SOURCE_DIR) + "/docs/config.md");
  const std::string generated = schema::reference_markdown();
  INFO(
      "docs/config.md is out of date: run `build/bin/switchyard config --reference > "
      "docs/config.md`");
  REQUIRE(committed == generated);
}

TEST_CASE("the reference lists every key, including each layer type's", "[config][reference]") {
  const std::string reference = schema::reference_markdown();
  for (const auto& [key, field] : all_fields()) {
    const std::string shown = key.rfind("layer.", 0) == 0 ? key.substr(key.rfind('.') + 1) : key;
    INFO("key " << key);
    const bool section =
        key.find('.') == std::string::npos && field->schema.kind == schema::ValueKind::kMap;
    CHECK(reference.find(section ? "## `" + key + "`" : "| `" + shown + "` |") !=
          std::string::npos);
  }
  for (const schema::SchemaVariant& variant : layer_schema().variants) {
    CHECK(reference.find("### `" + variant.tag + "`") != std::string::npos);
  }
  // The type column is the validator's own text.
  CHECK(reference.find("| `train.epochs` | an integer >= 1 and <= 1000000 or 'auto' | `auto` | "
                       "`60` |") != std::string::npos);
  CHECK(reference.find("| `data.test_fraction` | a number > 0 and < 1 | `0.2` |") !=
        std::string::npos);
}

TEST_CASE("every key has a description, a default and an example", "[config][reference]") {
  for (const auto& [key, field] : all_fields()) {
    INFO("key " << key);
    CHECK_FALSE(field->doc.description.empty());
    const bool section = field->schema.kind == schema::ValueKind::kMap &&
                         !field->schema.fields.empty() && field->doc.default_value.empty();
    if (section) continue;  // data, train, ...: their keys carry the defaults
    CHECK_FALSE(field->doc.default_value.empty());
    CHECK_FALSE(field->doc.example.empty());
    if (field->required) CHECK(field->doc.default_value == "required");
  }
}

TEST_CASE("every documented example is a valid value of its key", "[config][reference]") {
  for (const auto& [key, field] : all_fields()) {
    if (field->doc.example.empty()) continue;
    INFO("key " << key << ", example " << field->doc.example);
    std::vector<std::string> overrides;
    if (key.rfind("layer.", 0) == 0) {
      // A layer of the key's type (the example's, for `type`) with its required keys.
      const std::string type =
          key == "layer.type" ? field->doc.example : key.substr(6, key.find('.', 6) - 6);
      const schema::SchemaVariant* variant = schema::find_variant(layer_schema(), type);
      REQUIRE(variant != nullptr);
      std::string layer = "{type: " + type;
      for (const schema::SchemaField& other : variant->fields) {
        if (other.required || other.key == field->key) {
          layer += ", " + other.key + ": " + other.doc.example;
        }
      }
      overrides.push_back("model.layers=[" + layer + "}]");
    } else {
      if (key.rfind("train.early_stopping.", 0) == 0) {
        overrides.push_back("train.early_stopping.patience=2");
      }
      if (key.rfind("data.series.", 0) == 0) {  // the series' required keys
        overrides.push_back("data.series.column=co2");
        overrides.push_back("data.series.window=52");
      }
      overrides.push_back(key + "=" + field->doc.example);
    }
    CHECK(testing::config_status("", overrides).message() == "");
  }
}

namespace {

// Every section present but empty, so the code's own fallbacks for absent keys are what is read.
Config load_sections_without_keys() {
  return load(
      "data: {dataset: iris}\n"
      "model:\n"
      "  layers:\n"
      "    - {type: linear, out_features: 4}\n"
      "    - {type: conv2d, out_channels: 2, kernel_size: 3}\n"
      "    - {type: maxpool2d, kernel_size: 2}\n"
      "    - {type: avgpool2d, kernel_size: 2}\n"
      "    - {type: dropout}\n"
      "    - {type: layernorm}\n"
      "optimizer: {}\nschedule: {}\ntrain: {}\npredict: {checkpoint: model.ckpt}\n"
      "distributed: {}\n");
}

void check_runtime_defaults(std::set<std::string>& checked, const Config& config) {
  const RuntimeSettings& runtime = config.runtime();
  std::string backends;
  for (const std::string& name : runtime.backends)
    backends += (backends.empty() ? "" : ", ") + name;
  check_default(checked, "backends", "[" + backends + "]");
  check_default(checked, "device", runtime.device);
  check_default(checked, "device_policy",
                runtime.device_policy == DevicePolicy::kFirst ? "first" : "other");
  check_default(checked, "fallback", runtime.fallback == FallbackPolicy::kWarn ? "warn" : "other");
  check_default(checked, "plugin_paths", runtime.plugin_paths.empty() ? "[]" : "set");
  check_default(checked, "deterministic", text(runtime.deterministic));
  check_default(checked, "seed", std::to_string(runtime.seed));
  check_default(checked, "backend_options", runtime.backend_options.empty() ? "none" : "set");
  check_default(checked, "task", configured_task(config).value());
}

void check_data_defaults(std::set<std::string>& checked, const TrainConfig& c) {
  check_default(checked, "loss", loss_kind_name(c.loss.kind));
  check_default(checked, "loss_options.beta", text(c.loss.beta));
  check_default(checked, "loss_options.delta", text(c.loss.delta));
  check_default(checked, "data.target_scale", scale_mode_name(c.data.target_scale));
  check_default(checked, "data.format", c.data.format);
  check_default(checked, "data.header", c.data.header == HeaderMode::kDetect ? "detected" : "set");
  check_default(checked, "data.delimiter", c.data.delimiter == '\0' ? "detected" : "set");
  check_default(checked, "data.id", c.data.id.empty() ? "none" : c.data.id);
  check_default(checked, "data.drop", c.data.drop.empty() ? "[]" : "set");
  check_default(checked, "data.label_order", label_order_name(c.data.label_order));
  check_default(checked, "data.test_fraction", text(c.data.test_fraction));
  // train: {} is train.epochs: auto, which holds out validation rows; iris is a table.
  check_default(checked, "data.validation_fraction",
                c.data.validation_is_default && c.data.validation_fraction == 0.1
                    ? "0.1 with train.epochs: auto, else none"
                    : "other");
  check_default(checked, "data.scale",
                c.data.is_table() && c.data.scale == ScaleMode::kStandard
                    ? "standard for a table; none for images (data.image_shape, digits) and series"
                    : "other");
  check_default(checked, "data.divisor", text(c.data.divisor));
  check_default(checked, "data.split_seed", std::to_string(c.data.split_seed));
  check_default(checked, "data.non_finite", non_finite_policy_name(c.data.non_finite));
  check_default(checked, "data.image_shape", c.data.image_shape.empty() ? "none" : "set");
  check_default(checked, "model.init",
                c.model.init == InitScheme::kKaimingUniform ? "kaiming" : "xavier");
  check_default(checked, "model.weights", c.model.weights.empty() ? "none" : "set");
}

void check_training_defaults(std::set<std::string>& checked, const TrainConfig& c) {
  const std::vector<LayerSpec>& layers = c.model.layers;
  REQUIRE(layers.size() == 6);
  check_default(checked, "layer.linear.bias", text(layers[0].bias));
  // A stride of 0 stands for the layer's own default: 1 for conv2d, the window for pools.
  check_default(checked, "layer.conv2d.stride", layers[1].stride == 0 ? "1" : "set");
  check_default(checked, "layer.conv2d.padding", std::to_string(layers[1].padding));
  check_default(checked, "layer.conv2d.dilation", std::to_string(layers[1].dilation));
  check_default(checked, "layer.conv2d.groups", std::to_string(layers[1].groups));
  check_default(checked, "layer.conv2d.bias", text(layers[1].bias));
  check_default(checked, "layer.maxpool2d.stride", layers[2].stride == 0 ? "kernel_size" : "set");
  check_default(checked, "layer.maxpool2d.padding", std::to_string(layers[2].padding));
  check_default(checked, "layer.avgpool2d.stride", layers[3].stride == 0 ? "kernel_size" : "set");
  check_default(checked, "layer.avgpool2d.padding", std::to_string(layers[3].padding));
  check_default(checked, "layer.dropout.p", text(layers[4].p));
  check_default(checked, "layer.layernorm.eps", text(layers[5].eps));

  const OptimizerSettings& o = c.optimizer;
  check_default(checked, "optimizer.type", optimizer_kind_name(o.kind));
  check_default(checked, "optimizer.momentum", text(o.momentum));
  check_default(checked, "optimizer.nesterov", text(o.nesterov));
  check_default(checked, "optimizer.betas", "[" + text(o.beta1) + ", " + text(o.beta2) + "]");
  check_default(checked, "optimizer.eps", text(o.eps));
  check_default(checked, "schedule.type",
                c.schedule.kind == ScheduleKind::kNone ? "none" : "other");
  check_default(checked, "schedule.step_size", std::to_string(c.schedule.step_size));
  check_default(checked, "schedule.gamma", text(c.schedule.gamma));
  check_default(checked, "schedule.min_lr", text(c.schedule.min_lr));

  const TrainSettings& t = c.train;
  check_default(checked, "train.epochs", t.epochs_auto ? "auto" : std::to_string(t.epochs));
  check_default(checked, "train.batch_size", std::to_string(t.batch_size));
  check_default(checked, "train.gradient_accumulation_steps",
                std::to_string(t.gradient_accumulation_steps));
  check_default(checked, "train.checkpoint_every", std::to_string(t.checkpoint_every));
  check_default(checked, "train.resume", t.resume.empty() ? "none" : "set");
  check_default(checked, "train.export", t.export_weights.empty() ? "none" : "set");
  check_default(checked, "train.early_stopping",
                t.epochs_auto && t.early_stopping.enabled && t.early_stopping.patience == 10 &&
                        t.monitor.metric == "val_loss"
                    ? "{patience: 10} on val_loss with train.epochs: auto, else none"
                    : "other");
  check_default(checked, "train.precision", dtype_name(t.precision));
  check_default(checked, "train.empty_cache_interval", std::to_string(t.empty_cache_interval));
  check_default(checked, "train.progress", t.progress == ProgressMode::kAuto ? "auto" : "other");
  check_default(checked, "train.capture", capture_mode_name(t.capture));
  check_default(checked, "distributed.timeout_s", text(c.distributed.timeout_s));
  check_default(checked, "distributed.bucket_cap_mb", text(c.distributed.bucket_cap_mb));
}

// The sequence layers' defaults, each layer given only its required keys. A value the builder
// fills in from the data (0 for feedforward and max_len, "" for the modes) is documented as a
// phrase or as the builder's choice.
void check_sequence_layer_defaults(std::set<std::string>& checked) {
  const TrainConfig c =
      TrainConfig::from_config(load("data: {dataset: iris}\n"
                                    "model:\n"
                                    "  layers:\n"
                                    "    - {type: lstm, hidden_size: 4}\n"
                                    "    - {type: gru, hidden_size: 4}\n"
                                    "    - {type: transformer_encoder}\n"
                                    "    - {type: positional_encoding}\n"
                                    "    - {type: sequence_pool}\n"
                                    "    - {type: batchnorm1d}\n"
                                    "    - {type: batchnorm2d}\n"
                                    "    - {type: embedding, num_embeddings: 3, embedding_dim: 2}\n"
                                    "    - {type: vae_latent, latent: 2}\n"))
          .value();
  const std::vector<LayerSpec>& layers = c.model.layers;
  REQUIRE(layers.size() == 9);
  for (size_t i = 0; i < 2; ++i) {
    const std::string prefix = "layer." + layers[i].type + ".";
    check_default(checked, prefix + "num_layers", std::to_string(layers[i].num_layers));
    check_default(checked, prefix + "bidirectional", text(layers[i].bidirectional));
    check_default(checked, prefix + "dropout", text(layers[i].dropout));
  }
  const LayerSpec& encoder = layers[2];
  check_default(checked, "layer.transformer_encoder.heads", std::to_string(encoder.heads));
  check_default(checked, "layer.transformer_encoder.feedforward",
                encoder.feedforward == 0 ? "4 x features per step" : "set");
  check_default(checked, "layer.transformer_encoder.num_layers",
                std::to_string(encoder.num_layers));
  check_default(checked, "layer.transformer_encoder.dropout", text(encoder.dropout));
  check_default(checked, "layer.transformer_encoder.activation", encoder.activation);
  check_default(checked, "layer.transformer_encoder.norm_first", text(encoder.norm_first));
  check_default(checked, "layer.transformer_encoder.eps", text(encoder.eps));
  // An empty mode is the builder's default (sequence_builder.cpp): sinusoidal, mean.
  check_default(checked, "layer.positional_encoding.mode",
                layers[3].mode.empty() ? "sinusoidal" : layers[3].mode);
  check_default(checked, "layer.positional_encoding.max_len",
                layers[3].max_len == 0 ? "the sequence length" : "set");
  check_default(checked, "layer.sequence_pool.mode", layers[4].mode.empty() ? "mean" : "set");
  check_default(checked, "layer.batchnorm1d.eps", text(layers[5].eps));
  check_default(checked, "layer.batchnorm2d.eps", text(layers[6].eps));
  check_default(checked, "layer.embedding.padding_idx", layers[7].padding_idx < 0 ? "none" : "set");
  check_default(checked, "layer.vae_latent.beta", text(layers[8].beta));
}

void check_plain_defaults(std::set<std::string>& checked) {
  check_sequence_layer_defaults(checked);
  const Config config = load_sections_without_keys();
  check_runtime_defaults(checked, config);
  const TrainConfig c = TrainConfig::from_config(config).value();
  check_data_defaults(checked, c);
  check_training_defaults(checked, c);
  const PredictSettings p = PredictSettings::from_config(config).value();
  check_default(checked, "predict.batch_size", std::to_string(p.batch_size));
  check_default(checked, "predict.output", p.output.empty() ? "none" : "set");
  check_default(checked, "predict.capture", capture_mode_name(p.capture));
}

// Defaults that depend on another key, documented as a phrase: checked per case.
void check_dependent_defaults(std::set<std::string>& checked) {
  auto optimizer = [](const std::string& type) {
    return TrainConfig::from_config(
               load("data: {dataset: iris}\noptimizer: {type: " + type + "}\n"))
        .value()
        .optimizer;
  };
  const auto fields = all_fields();
  const std::string lr = fields.at("optimizer.lr")->doc.default_value;
  CHECK(lr == "0.01 for sgd, 0.001 for adam and adamw");
  checked.insert("optimizer.lr");
  CHECK(optimizer("sgd").lr == 0.01);
  CHECK(optimizer("adam").lr == 0.001);
  CHECK(optimizer("adamw").lr == 0.001);
  CHECK(fields.at("optimizer.weight_decay")->doc.default_value == "0 (0.01 for adamw)");
  checked.insert("optimizer.weight_decay");
  CHECK(optimizer("adam").weight_decay == 0.0);
  CHECK_FALSE(optimizer("adamw").weight_decay_given);  // AdamW's 0.01 applies (optim.h)

  // data.series' keys, in a series with only its required ones.
  const SeriesSettings series =
      TrainConfig::from_config(load("data: {dataset: co2.csv, series: {column: co2, window: 5}}\n"
                                    "loss: mse\n"))
          .value()
          .data.series;
  check_default(checked, "data.series.horizon", std::to_string(series.horizon));
  check_default(checked, "data.series.target",
                series.target == SeriesTarget::kNext ? "next" : "input");
  check_default(checked, "data.series.gaps",
                series.gaps == GapPolicy::kInterpolate ? "interpolate" : "drop");
  check_default(checked, "data.series.offset", series.relative_to_last ? "last" : "none");

  const TrainConfig early =
      TrainConfig::from_config(load("data: {dataset: iris, validation_fraction: 0.1}\n"
                                    "train: {early_stopping: {patience: 2}}\n"))
          .value();
  check_default(checked, "train.early_stopping.metric", early.train.monitor.metric);
  CHECK(fields.at("train.early_stopping.mode")->doc.default_value ==
        "min for losses, rmse and mae, max otherwise");
  CHECK(early.train.monitor.mode == MonitorMode::kMin);  // val_loss is a loss
  checked.insert("train.early_stopping.mode");
  check_default(checked, "train.early_stopping.min_delta", text(early.train.monitor.min_delta));
  check_default(checked, "train.early_stopping.restore_best_weights",
                text(early.train.early_stopping.restore_best_weights));
}

}  // namespace

TEST_CASE("the documented defaults are the ones the code uses, for every checkable key",
          "[config][reference]") {
  std::set<std::string> checked;
  check_plain_defaults(checked);
  check_dependent_defaults(checked);
  // A key whose default is a number, a boolean or one of its choices, and that no check above
  // compares, fails here: a new key must be added to check_plain_defaults.
  for (const auto& [key, field] : all_fields()) {
    if (!is_checkable_default(*field)) continue;
    INFO("key " << key << ": compare its default in check_plain_defaults");
    CHECK(checked.count(key) == 1);
  }
}

}  // namespace switchyard
