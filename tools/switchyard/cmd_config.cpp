// switchyard config [CONFIG]: the value every key of the schema takes, after --set and the
// SWITCHYARD_* variables, each with where it came from (file:line:column, the --set, the variable,
// or the default the schema documents). `--reference` prints docs/config.md instead.
#include <charconv>
#include <iostream>

#include "cli_common.h"
#include "runtime/config_schema.h"
#include "runtime/config_values.h"
#include "support/json_io.h"
#include "switchyard/train.h"

namespace switchyard::cli {
namespace {

namespace schema = config_schema;
using detail::Json;

constexpr const char* kUsage =
    "usage: switchyard config [CONFIG] [--set KEY=VALUE ...] [--json]\n"
    "       switchyard config --reference\n\n"
    "Prints the configuration a run of CONFIG would use: every key, including the defaults the\n"
    "file leaves out, after --set and the SWITCHYARD_* variables, each with where its value came\n"
    "from. --reference prints every key with its type, default and an example (docs/config.md).";

constexpr const char* kDefaultSource = "default";

// A validated scalar's text (the schema has checked it is one), or `fallback`.
std::string text_or(const Result<std::string>& text, const std::string& fallback = "") {
  return text.ok() ? *text : fallback;
}

// One line of the listing: a key with its value and source, or a section (a map) that holds keys.
struct Entry {
  std::string key_path;  // "model.layers[0].out_features"
  int indent = 0;        // spaces before the label
  std::string label;     // "epochs", "- type" for an item's first key
  bool section = false;  // a map's header: no value of its own
  std::string value;     // as YAML text
  Json json_value;
  std::string source;  // "cfg.yaml:3:7", "--set 'k=v'", "env SWITCHYARD_DEVICE", "default"
};

std::optional<Json> parse_number(const std::string& text, bool integer) {
  if (text.empty()) return std::nullopt;
  if (integer) {
    int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error == std::errc() && end == text.data() + text.size()) return Json(value);
    return std::nullopt;
  }
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() + text.size()) return Json(value);
  return std::nullopt;
}

// A scalar's text as JSON of the schema's type: numbers and booleans typed, anything else
// (names, paths, "auto", a default's phrase) as a string.
Json scalar_json(const schema::SchemaNode& node, const std::string& text) {
  using schema::ValueKind;
  std::optional<Json> number;
  if (node.kind == ValueKind::kInt || node.kind == ValueKind::kIntOrAuto) {
    number = parse_number(text, true);
  } else if (node.kind == ValueKind::kDouble) {
    number = parse_number(text, false);
  } else if (node.kind == ValueKind::kBool && (text == "true" || text == "false")) {
    return Json(text == "true");
  }
  return number ? *number : Json(text);
}

// A default written as a flow sequence ("[cuda, reference]", "[]") as a JSON array.
Json default_json(const schema::SchemaNode& node, const std::string& text) {
  if (node.kind != schema::ValueKind::kSequence || text.size() < 2 || text.front() != '[' ||
      !node.element || !node.element->variants.empty()) {
    return scalar_json(node, text);
  }
  Json list = Json::array();
  std::string inner = text.substr(1, text.size() - 2);
  std::size_t pos = 0;
  while (pos < inner.size()) {
    std::size_t comma = inner.find(',', pos);
    if (comma == std::string::npos) comma = inner.size();
    std::string item = inner.substr(pos, comma - pos);
    item.erase(0, item.find_first_not_of(' '));
    list.push_back(scalar_json(*node.element, item));
    pos = comma + 1;
  }
  return list;
}

class EffectiveConfig {
 public:
  explicit EffectiveConfig(const Config& config) : config_(config) {}

  std::vector<Entry> collect() {
    walk_map(config_.root(), schema::root_schema().fields, "", 0, false);
    return std::move(entries_);
  }

 private:
  // `column`: where the keys start; an item's first key is written "- key" two columns before.
  void walk_map(const ConfigNode& node, const std::vector<schema::SchemaField>& fields,
                const std::string& prefix, int column, bool item_start) {
    for (const schema::SchemaField& field : fields) {
      const ConfigNode child = node.valid() ? node[field.key] : ConfigNode();
      Entry entry;
      entry.key_path = prefix + field.key;
      entry.indent = item_start ? column - 2 : column;
      entry.label = (item_start ? "- " : "") + field.key;
      item_start = false;
      add_field(field, child, std::move(entry), column + 2);
    }
  }

  void add_field(const schema::SchemaField& field, const ConfigNode& child, Entry entry,
                 int inner) {
    using schema::ValueKind;
    const schema::SchemaNode& node = field.schema;
    if (environment_value(entry)) return;
    if (!child.valid() && (node.kind != ValueKind::kMap || !field.doc.default_value.empty())) {
      add_default(field, std::move(entry));
      return;
    }
    if (node.kind == ValueKind::kMap) {
      add_section(entry, child);
      walk_map(child, node.fields, entry.key_path + ".", inner, false);
    } else if (node.kind == ValueKind::kSequence && node.element &&
               !node.element->variants.empty()) {
      add_section(entry, child);
      add_items(*node.element, child, entry.key_path, inner);
    } else if (node.kind == ValueKind::kBackendMap) {
      add_section(entry, child);
      add_backend_options(child, entry.key_path, inner);
    } else {
      add_value(node, child, std::move(entry));
    }
  }

  void add_section(Entry entry, const ConfigNode& node) {
    entry.section = true;
    if (node.valid()) entry.source = node.location().to_string();
    entries_.push_back(std::move(entry));
  }

  // model.layers: each item's keys are the tag's and those of its variant, defaults included.
  void add_items(const schema::SchemaNode& element, const ConfigNode& sequence,
                 const std::string& key_path, int indent) {
    const std::vector<ConfigNode> items = sequence.items();
    for (std::size_t i = 0; i < items.size(); ++i) {
      std::vector<schema::SchemaField> fields = element.fields;
      const Result<std::string> tag = items[i][element.tag_key].as_string();
      if (const schema::SchemaVariant* variant =
              tag.ok() ? schema::find_variant(element, *tag) : nullptr) {
        fields.insert(fields.end(), variant->fields.begin(), variant->fields.end());
      }
      walk_map(items[i], fields, key_path + "[" + std::to_string(i) + "].", indent + 2, true);
    }
  }

  void add_backend_options(const ConfigNode& node, const std::string& key_path, int indent) {
    for (const std::string& backend : node.keys()) {
      const ConfigNode options = node[backend];
      add_section({key_path + "." + backend, indent, backend, true, "", Json(), ""}, options);
      for (const std::string& key : options.keys()) {
        const std::string text = text_or(options[key].as_string());
        entries_.push_back({key_path + "." + backend + "." + key, indent + 2, key, false, text,
                            Json(text), options[key].location().to_string()});
      }
    }
  }

  void add_value(const schema::SchemaNode& node, const ConfigNode& child, Entry entry) {
    entry.source = child.location().to_string();
    if (child.is_sequence()) {
      entry.json_value = Json::array();
      std::string text;
      bool first = true;
      for (const ConfigNode& item : child.items()) {
        const std::string item_text = text_or(item.as_string());
        // An empty string (data.na_values: '') is written as YAML writes it.
        text += (first ? "" : ", ") + (item_text.empty() ? std::string("''") : item_text);
        first = false;
        entry.json_value.push_back(node.element ? scalar_json(*node.element, item_text)
                                                : Json(item_text));
      }
      entry.value = "[" + text + "]";
    } else {
      entry.value = text_or(child.as_string());
      entry.json_value = scalar_json(node, entry.value);
    }
    entries_.push_back(std::move(entry));
  }

  void add_default(const schema::SchemaField& field, Entry entry) {
    entry.value = field.doc.default_value;
    entry.source = kDefaultSource;
    entry.value = contextual_default(entry.key_path, entry.value);
    entry.json_value = default_json(field.schema, entry.value);
    entries_.push_back(std::move(entry));
  }

  // The effective value of a key listed before this one ("" if none).
  std::string effective(const std::string& key_path) const {
    for (const Entry& entry : entries_) {
      if (entry.key_path == key_path) return entry.value;
    }
    return "";
  }

  // A default that depends on another key, resolved for this file as the code resolves it.
  std::string contextual_default(const std::string& key_path, const std::string& text) const {
    if (key_path == "task") {
      // A file with only a predict section predicts; configured_task says what a run does.
      return text_or(configured_task(config_), text);
    }
    if (key_path == "optimizer.lr") return effective("optimizer.type") == "sgd" ? "0.01" : "0.001";
    if (key_path == "data.missing") {
      return effective("data.non_finite") == "drop_rows" ? "drop_rows" : "error";
    }
    if (key_path == "optimizer.weight_decay") {
      return effective("optimizer.type") == "adamw" ? "0.01" : "0";
    }
    if (key_path == "train.early_stopping.mode") {
      const std::string metric = effective("train.early_stopping.metric");
      return metric.size() > 5 && metric.substr(metric.size() - 5) == "_loss" ? "min" : "max";
    }
    if (key_path == "train.checkpoint") {
      // As `switchyard run` chooses it, under the current folder.
      return default_checkpoint_path(config_).string();
    }
    if (key_path == "train.best_checkpoint") return best_checkpoint_default();
    // Defaults that depend on the data and on train.epochs: as the trainer's settings have them.
    if (const Result<TrainConfig> resolved = TrainConfig::from_config(config_); resolved.ok()) {
      if (key_path == "data.scale") return scale_mode_name(resolved->data.scale);
      if (key_path == "data.validation_fraction") {
        return resolved->data.validation_is_default ? "0.1" : "none";
      }
      if (key_path == "train.early_stopping") {
        return resolved->train.early_stopping.enabled
                   ? "{patience: " + std::to_string(resolved->train.early_stopping.patience) + "}"
                   : "none";
      }
    }
    return text;
  }

  // With early stopping the best epoch is kept beside the checkpoint (model.best.ckpt beside
  // model.ckpt); without it, or without a checkpoint, nowhere.
  std::string best_checkpoint_default() const {
    const std::filesystem::path checkpoint = effective("train.checkpoint");
    if (effective("train.early_stopping.patience").empty() || checkpoint.empty() ||
        checkpoint == "none") {
      return "none";
    }
    return (checkpoint.parent_path() /
            (checkpoint.stem().string() + ".best" + checkpoint.extension().string()))
        .string();
  }

  // SWITCHYARD_BACKENDS, SWITCHYARD_DEVICE and SWITCHYARD_FALLBACK replace the file's value.
  bool environment_value(Entry& entry) {
    const RuntimeSettings& runtime = config_.runtime();
    const std::string variable = entry.key_path == "backends"   ? "SWITCHYARD_BACKENDS"
                                 : entry.key_path == "device"   ? "SWITCHYARD_DEVICE"
                                 : entry.key_path == "fallback" ? "SWITCHYARD_FALLBACK"
                                                                : "";
    if (variable.empty()) return false;
    for (const std::string& applied : runtime.environment_applied) {
      if (applied.rfind(variable + "=", 0) != 0) continue;
      const std::string text = applied.substr(variable.size() + 1);
      entry.source = "env " + variable;
      if (variable == "SWITCHYARD_BACKENDS") {
        entry.json_value = Json(runtime.backends);
        entry.value = "[" + config_values::join(runtime.backends, ", ") + "]";
      } else {
        entry.value = variable == "SWITCHYARD_DEVICE" ? runtime.device : text;
        entry.json_value = Json(entry.value);
      }
      entries_.push_back(std::move(entry));
      return true;
    }
    return false;
  }

  const Config& config_;
  std::vector<Entry> entries_;
};

void print_text(const Config& config, const std::vector<Entry>& entries) {
  constexpr std::size_t kCommentColumn = 44;
  std::cout << "# " << (config.file().empty() ? "no file" : config.file())
            << ": the effective configuration, after --set and SWITCHYARD_* variables\n";
  for (const Entry& entry : entries) {
    std::string line = std::string(static_cast<std::size_t>(entry.indent), ' ') + entry.label +
                       ":" + (entry.section ? "" : " " + entry.value);
    if (!entry.source.empty()) {
      line.resize(std::max(line.size() + 2, kCommentColumn), ' ');
      line += entry.source == kDefaultSource ? "# default" : "# from " + entry.source;
    }
    std::cout << line << "\n";
  }
}

void print_json(const Config& config, const std::vector<Entry>& entries) {
  Json values = Json::array();
  for (const Entry& entry : entries) {
    if (entry.section) continue;
    values.push_back(
        Json{{"key", entry.key_path}, {"value", entry.json_value}, {"source", entry.source}});
  }
  std::cout << detail::json_text(Json{{"file", config.file()}, {"values", values}}, 2) << "\n";
}

}  // namespace

int config_command(const Args& args) {
  po::options_description options("options");
  options.add_options()("config", po::value<std::string>(), "YAML file")(
      "set", po::value<std::vector<std::string>>()->composing(), "override: key=value")(
      "json", "print JSON")("reference", "print the reference of every key (docs/config.md)");
  po::positional_options_description positional;
  positional.add("config", 1);
  po::variables_map values;
  if (auto exit = parse_args(args, kUsage, options, values, &positional)) return *exit;
  if (values.count("reference") != 0) {
    std::cout << schema::reference_markdown();
    return kExitOk;
  }
  std::optional<Config> config = load_config_or_report(values, set_overrides(values));
  if (!config) return kExitUsage;
  const std::vector<Entry> entries = EffectiveConfig(*config).collect();
  if (values.count("json") != 0) {
    print_json(*config, entries);
  } else {
    print_text(*config, entries);
  }
  return kExitOk;
}

}  // namespace switchyard::cli
