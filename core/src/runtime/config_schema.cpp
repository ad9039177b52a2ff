// The configuration schema: every key a switchyard YAML file may hold, in one tree.
//
// HOW TO ADD A KEY
//   1. Find the map that should hold it in make_root_schema() below (top level, `data`, `train`,
//      ...) and add one line to its field list, e.g.
//          {"warmup_epochs", int_in(0, kMaxEpochs)},
//      or, for a key that must be present, {"name", string_value(), kRequired}.
//   2. Pick the value type from the helpers under "Building blocks": int_in, number_above_to,
//      number_from_to, number_in, number_between, boolean, string_value, path_value, one_of,
//      int_or_auto, sequence_of, map_of, tagged_map_of, any_scalar_map, backend_name,
//      device_spec, backend_map_of. A new kind of value needs a ValueKind, a case in
//      describe_expected() here and one in config_validate.cpp.
//   3. A new layer type is one more entry in layer_schema(): the tag value and the keys it takes.
//      Every integer and number has both bounds: a value is checked against them before the code
//      that reads it narrows it (to int, to float), so nothing wraps or overflows to inf/NaN.
//   4. Add the key to the example in docs and a test in tests/config if it has a new kind of rule.
// Validation, unknown-key suggestions and --set overrides all follow from the tree; nothing else
// needs to change. Code that reads the value uses ConfigNode (config.h).
#include "runtime/config_schema.h"

#include <cmath>
#include <cstdint>
#include <sstream>
#include <utility>

#include "runtime/config_values.h"
#include "switchyard/config.h"

namespace switchyard::config_schema {
namespace {

// ---- Building blocks -----------------------------------------------------------------------

constexpr bool kRequired = true;

SchemaNode simple(ValueKind kind) {
  SchemaNode node;
  node.kind = kind;
  return node;
}

SchemaNode int_in(double min, double max) {
  SchemaNode node = simple(ValueKind::kInt);
  node.range.min = min;
  node.range.max = max;
  return node;
}

SchemaNode number(double min, bool min_inclusive, double max, bool max_inclusive) {
  SchemaNode node = simple(ValueKind::kDouble);
  node.range = {min, max, min_inclusive, max_inclusive};
  return node;
}
// The interval (min, max].
SchemaNode number_above_to(double min, double max) {
  return number(min, false, max, true);
}
// The closed interval [min, max].
SchemaNode number_from_to(double min, double max) {
  return number(min, true, max, true);
}
// The half-open interval [min, max).
SchemaNode number_in(double min, double max) {
  return number(min, true, max, false);
}
// The open interval (min, max).
SchemaNode number_between(double min, double max) {
  return number(min, false, max, false);
}

SchemaNode boolean() {
  return simple(ValueKind::kBool);
}
SchemaNode string_value(std::string expected = "") {
  SchemaNode node = simple(ValueKind::kString);
  node.expected = std::move(expected);
  return node;
}
SchemaNode path_value() {
  return simple(ValueKind::kPath);
}
SchemaNode backend_name() {
  return simple(ValueKind::kBackendName);
}
SchemaNode device_spec() {
  return simple(ValueKind::kDeviceSpec);
}
SchemaNode any_scalar_map() {
  return simple(ValueKind::kAnyScalarMap);
}

SchemaNode one_of(std::vector<std::string> choices) {
  SchemaNode node = simple(ValueKind::kEnum);
  node.choices = std::move(choices);
  return node;
}

SchemaNode int_or_auto(double min, double max) {
  SchemaNode node = simple(ValueKind::kIntOrAuto);
  node.range.min = min;
  node.range.max = max;
  return node;
}

SchemaNode sequence_of(SchemaNode element, std::string expected, std::size_t min_items = 0,
                       std::optional<std::size_t> max_items = std::nullopt) {
  SchemaNode node = simple(ValueKind::kSequence);
  node.element = std::make_shared<const SchemaNode>(std::move(element));
  node.expected = std::move(expected);
  node.min_items = min_items;
  node.max_items = max_items;
  return node;
}

SchemaNode map_of(std::vector<SchemaField> fields) {
  SchemaNode node = simple(ValueKind::kMap);
  node.fields = std::move(fields);
  return node;
}

// A map whose `tag_key` value (always required) selects which other keys are allowed.
SchemaNode tagged_map_of(std::string tag_key, std::vector<SchemaVariant> variants) {
  SchemaNode node = simple(ValueKind::kMap);
  node.tag_key = tag_key;
  std::vector<std::string> tags;
  for (const SchemaVariant& variant : variants) tags.push_back(variant.tag);
  node.fields.push_back({tag_key, one_of(tags), kRequired});
  node.variants = std::move(variants);
  return node;
}

SchemaNode backend_map_of(SchemaNode value) {
  SchemaNode node = simple(ValueKind::kBackendMap);
  node.element = std::make_shared<const SchemaNode>(std::move(value));
  return node;
}

// ---- The schema ----------------------------------------------------------------------------

// Upper bounds: generous for any real run, small enough that the int (layer geometry) and int64
// (counts) the values become never overflow, and documented in README.md ("Numbers in the YAML
// file"). Seeds stop at 2^53 - 1, the largest integer a double (and so JSON) holds exactly.
constexpr double kMaxWidth = 1048576;      // out_features, out_channels, batch sizes
constexpr double kMaxWindow = 1024;        // kernel_size, stride, padding, dilation
constexpr double kMaxImageExtent = 65536;  // each of data.image_shape
constexpr double kMaxEpochs = 1000000;     // epochs and every count of epochs or steps
constexpr double kMaxSeed = 9007199254740991.0;
constexpr double kMaxLearningRate = 10000;  // lr, min_lr (linear probes use 30)

SchemaNode layer_schema() {
  auto pool = [] {
    return std::vector<SchemaField>{
        {"kernel_size", int_in(1, kMaxWindow), kRequired},
        {"stride", int_in(1, kMaxWindow)},
        {"padding", int_in(0, kMaxWindow)},
    };
  };
  return tagged_map_of(
      "type",
      {
          {"linear", {{"out_features", int_in(1, kMaxWidth), kRequired}, {"bias", boolean()}}},
          {"conv2d",
           {{"out_channels", int_in(1, kMaxWidth), kRequired},
            {"kernel_size", int_in(1, kMaxWindow), kRequired},
            {"stride", int_in(1, kMaxWindow)},
            {"padding", int_in(0, kMaxWindow)},
            {"dilation", int_in(1, kMaxWindow)},
            {"bias", boolean()}}},
          {"maxpool2d", pool()},
          {"avgpool2d", pool()},
          {"dropout", {{"p", number_in(0.0, 1.0)}}},
          {"layernorm", {{"eps", number_above_to(0.0, 1.0)}}},
          {"relu", {}},
          {"gelu", {}},
          {"tanh", {}},
          {"sigmoid", {}},
          {"flatten", {}},
      });
}

SchemaNode data_schema() {
  return map_of({
      {"dataset", string_value("digits, iris, breast_cancer or a path to a CSV file")},
      {"format", one_of({"labeled"})},
      {"header", boolean()},
      {"delimiter", string_value("comma, tab, semicolon or one character such as '|'")},
      {"target", string_value("a column name, or a column number (1 = the first, -1 = the last)")},
      {"id", string_value("a column name or number")},
      {"drop", sequence_of(string_value("a column name or number"),
                           "a sequence of column names or numbers, such as [id, notes]")},
      {"label_order", one_of({"sorted", "first_seen"})},
      {"test_fraction", number_between(0.0, 1.0)},
      {"validation_fraction", number_between(0.0, 1.0)},
      {"scale", one_of({"none", "standard", "minmax", "divide"})},
      {"divisor", number_above_to(0.0, 1e9)},
      {"split_seed", int_in(0, kMaxSeed)},
      {"non_finite", one_of({"error", "drop_rows"})},
      {"image_shape", sequence_of(int_in(1, kMaxImageExtent),
                                  "a sequence of 1 to 3 integers >= 1 and <= 65536, such as "
                                  "[1, 8, 8]",
                                  1, 3)},
  });
}

SchemaNode optimizer_schema() {
  return map_of({
      {"type", one_of({"sgd", "adam", "adamw"})},
      {"lr", number_above_to(0.0, kMaxLearningRate)},
      {"momentum", number_in(0.0, 1.0)},
      {"nesterov", boolean()},
      {"weight_decay", number_from_to(0.0, 1.0)},
      {"betas", sequence_of(number_in(0.0, 1.0),
                            "a sequence of two numbers >= 0 and < 1, such as [0.9, 0.999]", 2, 2)},
      {"eps", number_above_to(0.0, 1.0)},
  });
}

SchemaNode train_schema() {
  return map_of({
      {"epochs", int_in(1, kMaxEpochs)},
      {"batch_size", int_or_auto(1, kMaxWidth)},
      {"gradient_accumulation_steps", int_in(1, kMaxEpochs)},
      {"checkpoint", path_value()},
      {"checkpoint_every", int_in(1, kMaxEpochs)},
      {"resume", path_value()},
      {"best_checkpoint", path_value()},
      {"early_stopping", map_of({
                             {"metric", one_of({"val_loss", "val_accuracy", "val_f1_macro",
                                                "train_loss", "train_accuracy"})},
                             {"mode", one_of({"min", "max"})},
                             {"patience", int_in(1, kMaxEpochs), kRequired},
                             {"min_delta", number_from_to(0.0, 1e9)},
                             {"restore_best_weights", boolean()},
                         })},
      {"export", path_value()},
      {"precision", one_of({"f32", "bf16", "f16"})},
      {"empty_cache_interval", int_in(0, kMaxEpochs)},
      {"progress", one_of({"auto", "bar", "log", "none"})},
  });
}

SchemaNode make_root_schema() {
  return map_of({
      {"backends", sequence_of(backend_name(),
                               "a sequence of backend names, such as "
                               "[cuda, vulkan, onednn, reference]",
                               1)},
      {"device", device_spec()},
      {"device_policy", one_of({"first", "most_free_memory", "local_rank"})},
      {"fallback", one_of({"warn", "error", "silent"})},
      {"plugin_paths", sequence_of(path_value(), "a sequence of folders")},
      {"deterministic", boolean()},
      {"seed", int_in(0, kMaxSeed)},
      {"backend_options", backend_map_of(any_scalar_map())},
      {"task", one_of({"train", "predict", "evaluate"})},
      {"data", data_schema()},
      {"model", map_of({
                    {"layers", sequence_of(layer_schema(),
                                           "a sequence of layers, such as "
                                           "[{type: linear, out_features: 10}]")},
                    {"init", one_of({"kaiming", "xavier"})},
                    {"weights", path_value()},
                })},
      {"loss", one_of({"cross_entropy", "mse"})},
      {"optimizer", optimizer_schema()},
      {"schedule", map_of({
                       {"type", one_of({"none", "step", "cosine"})},
                       {"step_size", int_in(1, kMaxEpochs)},
                       {"gamma", number_above_to(0.0, 10.0)},
                       {"min_lr", number_from_to(0.0, kMaxLearningRate)},
                   })},
      {"train", train_schema()},
      {"predict", map_of({
                      {"checkpoint", path_value()},
                      {"input", string_value("a dataset name or a path to a CSV file")},
                      {"output", path_value()},
                      {"batch_size", int_or_auto(1, kMaxWidth)},
                  })},
  });
}

// ---- Descriptions --------------------------------------------------------------------------

// Whole bounds in full ("1048576", not "1.04858e+06").
std::string format_bound(double value) {
  constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
  if (value == std::floor(value) && std::fabs(value) < kExactIntegers) {
    return std::to_string(static_cast<int64_t>(value));
  }
  std::ostringstream out;
  out << value;
  return out.str();
}

std::string describe_range(const NumberRange& range) {
  std::string text;
  if (range.min) text += (range.min_inclusive ? " >= " : " > ") + format_bound(*range.min);
  if (range.min && range.max) text += " and";
  if (range.max) text += (range.max_inclusive ? " <= " : " < ") + format_bound(*range.max);
  return text;
}

std::string describe_kind(const SchemaNode& schema) {
  switch (schema.kind) {
    case ValueKind::kMap:
      return schema.tag_key.empty() ? "a map" : "a map with a '" + schema.tag_key + "' key";
    case ValueKind::kSequence:
      return "a sequence";
    case ValueKind::kString:
      return "a string";
    case ValueKind::kPath:
      return "a path";
    case ValueKind::kInt:
      return "an integer" + describe_range(schema.range);
    case ValueKind::kDouble:
      return "a number" + describe_range(schema.range);
    case ValueKind::kBool:
      return "true or false";
    case ValueKind::kEnum:
      return "one of: " + config_values::join(schema.choices, ", ");
    case ValueKind::kIntOrAuto:
      return "an integer" + describe_range(schema.range) + " or 'auto'";
    case ValueKind::kAnyScalarMap:
      return "a map of option names to scalar values";
    case ValueKind::kBackendName:
      return "a backend name, one of: " + config_values::join(known_backend_names(), ", ");
    case ValueKind::kDeviceSpec:
      return config_values::device_spec_expected();
    case ValueKind::kBackendMap:
      return "a map from backend names to maps of options";
  }
  return "a value";
}

}  // namespace

const SchemaNode& root_schema() {
  static const SchemaNode schema = make_root_schema();
  return schema;
}

std::string describe_expected(const SchemaNode& schema) {
  return schema.expected.empty() ? describe_kind(schema) : schema.expected;
}

const SchemaField* find_field(const SchemaNode& map_schema, const std::string& key) {
  for (const SchemaField& field : map_schema.fields) {
    if (field.key == key) return &field;
  }
  return nullptr;
}

const SchemaVariant* find_variant(const SchemaNode& map_schema, const std::string& tag) {
  for (const SchemaVariant& variant : map_schema.variants) {
    if (variant.tag == tag) return &variant;
  }
  return nullptr;
}

}  // namespace switchyard::config_schema
