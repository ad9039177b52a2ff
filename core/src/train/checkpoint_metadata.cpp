// The records that let a checkpoint predict on its own (content version 2): the model's layers,
// the loss, and how the training table was read. JSON through nlohmann, validated on the way in:
// a record that passed the checksum but holds nonsense is DATA_LOSS naming the checkpoint.
#include <algorithm>

#include "model/train_state.h"
#include "support/json_io.h"
#include "train/sequence_builder.h"

namespace switchyard::detail {
namespace {

constexpr int64_t kMaxExtent = int64_t{1} << 24;   // a layer size or column index beyond this
constexpr int64_t kMaxColumns = int64_t{1} << 31;  // is a damaged record, not a model
const char* const kLayerTypes[] = {"linear",
                                   "conv2d",
                                   "maxpool2d",
                                   "avgpool2d",
                                   "dropout",
                                   "layernorm",
                                   "relu",
                                   "gelu",
                                   "tanh",
                                   "sigmoid",
                                   "flatten",
                                   "embedding",
                                   "lstm",
                                   "gru",
                                   "positional_encoding",
                                   "cls_token",
                                   "transformer_encoder",
                                   "sequence_pool",
                                   "batchnorm1d",
                                   "batchnorm2d",
                                   "vae_latent"};

Json layer_json(const LayerSpec& layer) {
  Json json{{"type", layer.type},
            {"out_features", layer.out_features},
            {"out_channels", layer.out_channels},
            {"kernel_size", layer.kernel_size},
            {"stride", layer.stride},
            {"padding", layer.padding},
            {"dilation", layer.dilation},
            {"bias", layer.bias},
            {"p", layer.p},
            {"eps", layer.eps}};
  if (layer.type == "vae_latent")
    json["vae"] = Json{{"latent", layer.latent}, {"beta", layer.beta}};
  if (!detail::is_sequence_layer(layer.type)) return json;
  json["sequence"] = Json{{"hidden_size", layer.hidden_size},
                          {"num_layers", layer.num_layers},
                          {"bidirectional", layer.bidirectional},
                          {"dropout", layer.dropout},
                          {"heads", layer.heads},
                          {"feedforward", layer.feedforward},
                          {"activation", layer.activation},
                          {"norm_first", layer.norm_first},
                          {"mode", layer.mode},
                          {"max_len", layer.max_len},
                          {"num_embeddings", layer.num_embeddings},
                          {"embedding_dim", layer.embedding_dim},
                          {"padding_idx", layer.padding_idx}};
  return json;
}

// An integer, never a float converted to one (1e300 as int64_t would be undefined behaviour).
int64_t integer(const Json& value) {
  if (!value.is_number_integer()) throw std::out_of_range("a count is not an integer");
  return value.get<int64_t>();
}

// Reads an integer member within [min, max]; throws std::out_of_range (caught by the caller).
int64_t bounded(const Json& object, const char* key, int64_t min, int64_t max) {
  const int64_t value = integer(object.at(key));
  if (value < min || value > max) {
    throw std::out_of_range(std::string("'") + key + "' is " + std::to_string(value));
  }
  return value;
}

// The sequence layers' keys (written by content version 2 checkpoints that have such layers).
// The model builder checks how they fit together; these are the bounds a sane record keeps.
void read_sequence_json(const Json& json, LayerSpec& layer) {
  layer.hidden_size = bounded(json, "hidden_size", 0, kMaxExtent);
  layer.num_layers = static_cast<int>(bounded(json, "num_layers", 1, 1024));
  layer.bidirectional = json.at("bidirectional").get<bool>();
  layer.dropout = json.at("dropout").get<double>();
  layer.heads = bounded(json, "heads", 1, 1024);
  layer.feedforward = bounded(json, "feedforward", 0, kMaxExtent);
  layer.activation = json.at("activation").get<std::string>();
  layer.norm_first = json.at("norm_first").get<bool>();
  layer.mode = json.at("mode").get<std::string>();
  layer.max_len = bounded(json, "max_len", 0, kMaxExtent);
  layer.num_embeddings = bounded(json, "num_embeddings", 0, kMaxExtent);
  layer.embedding_dim = bounded(json, "embedding_dim", 0, kMaxExtent);
  layer.padding_idx = bounded(json, "padding_idx", -1, kMaxExtent);
  if (!(layer.dropout >= 0 && layer.dropout < 1))
    throw std::out_of_range("'dropout' is out of range");
}

LayerSpec layer_from_json(const Json& item) {
  LayerSpec layer;
  layer.type = item.at("type").get<std::string>();
  if (std::find(std::begin(kLayerTypes), std::end(kLayerTypes), layer.type) ==
      std::end(kLayerTypes)) {
    throw std::out_of_range("unknown layer type '" + layer.type + "'");
  }
  layer.out_features = bounded(item, "out_features", 0, kMaxExtent);
  layer.out_channels = bounded(item, "out_channels", 0, kMaxExtent);
  layer.kernel_size = static_cast<int>(bounded(item, "kernel_size", 0, 1024));
  layer.stride = static_cast<int>(bounded(item, "stride", 0, 1024));
  layer.padding = static_cast<int>(bounded(item, "padding", 0, 1024));
  layer.dilation = static_cast<int>(bounded(item, "dilation", 1, 1024));
  layer.bias = item.at("bias").get<bool>();
  layer.p = item.at("p").get<double>();
  layer.eps = item.at("eps").get<double>();
  if (!(layer.p >= 0 && layer.p < 1) || !(layer.eps > 0)) {
    throw std::out_of_range("'p' or 'eps' is out of range");
  }
  if (item.contains("sequence")) read_sequence_json(item.at("sequence"), layer);
  if (item.contains("vae")) {
    const Json& vae = item.at("vae");
    layer.latent = bounded(vae, "latent", 1, kMaxExtent);
    layer.beta = vae.at("beta").get<double>();
    if (!(layer.beta >= 0 && layer.beta <= 1e6)) throw std::out_of_range("'beta' is out of range");
  }
  return layer;
}

std::vector<int64_t> columns_from_json(const Json& list, int64_t column_count) {
  std::vector<int64_t> columns;
  for (const Json& item : list) {
    const int64_t column = integer(item);
    if (column < 0 || column >= column_count) throw std::out_of_range("a column is out of range");
    columns.push_back(column);
  }
  return columns;
}

Json settings_json(const DataSettings& s) {
  return Json{{"header", s.header == HeaderMode::kDetect  ? ""
                         : s.header == HeaderMode::kNames ? "true"
                                                          : "false"},
              {"delimiter", s.delimiter == '\0' ? std::string() : std::string(1, s.delimiter)},
              {"target", s.target},
              {"id", s.id},
              {"drop", s.drop},
              {"label_order", label_order_name(s.label_order)},
              {"image_shape", s.image_shape},
              {"targets", s.targets},
              {"na_values", s.na_values},
              {"missing", missing_policy_name(s.missing)}};
}

DataSettings settings_from_json(const Json& json) {
  DataSettings s;
  const std::string header = json.at("header").get<std::string>();
  s.header = header == "true"    ? HeaderMode::kNames
             : header == "false" ? HeaderMode::kNone
                                 : HeaderMode::kDetect;
  const std::string delimiter = json.at("delimiter").get<std::string>();
  if (delimiter.size() > 1) throw std::out_of_range("'delimiter' is not one character");
  s.delimiter = delimiter.empty() ? '\0' : delimiter[0];
  s.target = json.at("target").get<std::string>();
  s.id = json.at("id").get<std::string>();
  s.drop = json.at("drop").get<std::vector<std::string>>();
  auto order = parse_label_order(json.at("label_order").get<std::string>());
  if (!order.ok()) throw std::out_of_range(order.status().message());
  s.label_order = *order;
  // Regression checkpoints only; older ones have no such member.
  if (json.contains("targets")) s.targets = json.at("targets").get<std::vector<std::string>>();
  // Checkpoints written before data.na_values and data.missing existed have neither: the defaults.
  if (json.contains("na_values")) {
    s.na_values = json.at("na_values").get<std::vector<std::string>>();
  }
  if (json.contains("missing")) {
    auto missing = parse_missing_policy(json.at("missing").get<std::string>());
    if (!missing.ok()) throw std::out_of_range(missing.status().message());
    s.missing = *missing;
  }
  for (const Json& extent : json.at("image_shape")) {
    s.image_shape.push_back(integer(extent));
    if (s.image_shape.back() < 1 || s.image_shape.back() > kMaxExtent) {
      throw std::out_of_range("'image_shape' holds " + std::to_string(s.image_shape.back()));
    }
  }
  return s;
}

TableLayout table_from_json(const Json& json) {
  TableLayout t;
  const std::string delimiter = json.at("delimiter").get<std::string>();
  if (delimiter.size() != 1) throw std::out_of_range("'delimiter' is not one character");
  t.delimiter = delimiter[0];
  t.header = json.at("header").get<std::string>();
  if (t.header != "names" && t.header != "counts" && t.header != "none") {
    throw std::out_of_range("unknown header kind '" + t.header + "'");
  }
  t.column_count = bounded(json, "column_count", 1, kMaxColumns);
  t.column_names = json.at("column_names").get<std::vector<std::string>>();
  if (!t.column_names.empty() && static_cast<int64_t>(t.column_names.size()) != t.column_count) {
    throw std::out_of_range("'column_names' does not match 'column_count'");
  }
  t.target_column = bounded(json, "target_column", 0, t.column_count - 1);
  if (json.contains("value_columns")) {
    t.value_columns = columns_from_json(json.at("value_columns"), t.column_count);
  }
  t.id_column = bounded(json, "id_column", -1, t.column_count - 1);
  t.feature_columns = columns_from_json(json.at("feature_columns"), t.column_count);
  t.dropped_columns = columns_from_json(json.at("dropped_columns"), t.column_count);
  if (t.feature_columns.empty()) throw std::out_of_range("no feature column");
  return t;
}

}  // namespace

std::string model_spec_text(const ModelSpec& spec) {
  Json layers = Json::array();
  for (const LayerSpec& layer : spec.layers) layers.push_back(layer_json(layer));
  return json_text(layers);
}

std::string model_spec_summary(const ModelSpec& spec) {
  const Json defaults = layer_json(LayerSpec{});
  std::string text;
  for (const LayerSpec& layer : spec.layers) {
    const Json full = layer_json(layer);
    Json brief = Json::object();
    for (auto member = full.begin(); member != full.end(); ++member) {
      if (member.key() == "type" || *member != defaults.at(member.key())) {
        brief[member.key()] = *member;
      }
    }
    text += (text.empty() ? "" : ", ") + json_text(brief);
  }
  return "[" + text + "]";
}

void put_model_spec(Checkpoint& checkpoint, const ModelSpec& spec, const LossSettings& loss) {
  checkpoint.put_u64("meta/content_version", kCheckpointContentVersion);
  checkpoint.put_string("model/layers", model_spec_text(spec));
  checkpoint.put_string("model/init",
                        spec.init == InitScheme::kXavierUniform ? "xavier" : "kaiming");
  checkpoint.put_string("model/loss", loss_kind_name(loss.kind));
  if (loss.kind == LossKind::kSmoothL1 || loss.kind == LossKind::kHuber) {
    checkpoint.put_string("model/loss_options",
                          json_text(Json{{"beta", loss.beta}, {"delta", loss.delta}}));
  }
}

Result<ModelSpec> get_model_spec(const Checkpoint& checkpoint) {
  if (!checkpoint.contains("model/layers")) {
    return failed_precondition("checkpoint " + checkpoint.source() +
                               " holds no model description (it was written before checkpoints "
                               "kept model.layers); give model.layers in a YAML file as when it "
                               "was trained");
  }
  SY_ASSIGN_OR_RETURN(const std::string text, checkpoint.get_string("model/layers"));
  SY_ASSIGN_OR_RETURN(const std::string init, checkpoint.get_string("model/init"));
  ModelSpec spec;
  try {
    for (const Json& item : parse_strict_json(text)) spec.layers.push_back(layer_from_json(item));
  } catch (const std::exception& error) {
    return checkpoint.corrupt("record 'model/layers' is malformed: " + std::string(error.what()));
  }
  if (spec.layers.empty()) return checkpoint.corrupt("record 'model/layers' lists no layer");
  if (init != "kaiming" && init != "xavier") {
    return checkpoint.corrupt("record 'model/init' is '" + init + "'");
  }
  spec.init = init == "xavier" ? InitScheme::kXavierUniform : InitScheme::kKaimingUniform;
  return spec;
}

Result<LossSettings> get_loss(const Checkpoint& checkpoint) {
  if (!checkpoint.contains("model/loss")) return LossSettings();  // before version 2
  SY_ASSIGN_OR_RETURN(const std::string name, checkpoint.get_string("model/loss"));
  auto kind = parse_loss_kind(name);
  if (!kind.ok()) return checkpoint.corrupt("record 'model/loss' is '" + name + "'");
  LossSettings loss(*kind);
  if (!checkpoint.contains("model/loss_options")) return loss;
  SY_ASSIGN_OR_RETURN(const std::string text, checkpoint.get_string("model/loss_options"));
  try {
    const Json json = parse_strict_json(text);
    loss.beta = json.at("beta").get<double>();
    loss.delta = json.at("delta").get<double>();
  } catch (const std::exception& error) {
    return checkpoint.corrupt("record 'model/loss_options' is malformed: " +
                              std::string(error.what()));
  }
  if (!(loss.beta >= 0 && loss.beta < 1e9) || !(loss.delta > 0 && loss.delta < 1e9)) {
    return checkpoint.corrupt("record 'model/loss_options' is out of range");
  }
  return loss;
}

std::string table_record_text(const TableLayout& t, const DataSettings& settings) {
  Json json{{"delimiter", std::string(1, t.delimiter)}, {"header", t.header},
            {"column_count", t.column_count},           {"column_names", t.column_names},
            {"target_column", t.target_column},         {"id_column", t.id_column},
            {"feature_columns", t.feature_columns},     {"dropped_columns", t.dropped_columns},
            {"settings", settings_json(settings)}};
  if (!t.value_columns.empty()) json["value_columns"] = t.value_columns;
  return json_text(json);
}

Status parse_table_record(const std::string& text, TableLayout& table, DataSettings& settings) {
  try {
    const Json json = parse_strict_json(text);
    table = table_from_json(json);
    settings = settings_from_json(json.at("settings"));
  } catch (const std::exception& error) {
    return data_loss(error.what());
  }
  return ok_status();
}

void put_table(Checkpoint& checkpoint, const TableLayout& t, const DataSettings& settings) {
  checkpoint.put_string("data/table", table_record_text(t, settings));
}

Status get_table(const Checkpoint& checkpoint, DataLayout& layout) {
  if (!checkpoint.contains("data/table")) return ok_status();  // before version 2
  SY_ASSIGN_OR_RETURN(const std::string text, checkpoint.get_string("data/table"));
  if (Status parsed = parse_table_record(text, layout.table, layout.settings); !parsed.ok()) {
    return checkpoint.corrupt("record 'data/table' is malformed: " + parsed.message());
  }
  int64_t features = 1;
  for (const int64_t extent : layout.sample_shape) {
    if (__builtin_mul_overflow(features, extent, &features)) features = -1;
  }
  if (static_cast<int64_t>(layout.table.feature_columns.size()) != features) {
    return checkpoint.corrupt("record 'data/table' lists " +
                              std::to_string(layout.table.feature_columns.size()) +
                              " feature columns for samples of " + std::to_string(features));
  }
  layout.has_table = true;
  return ok_status();
}

}  // namespace switchyard::detail
