// The configuration schema: every key a switchyard YAML file may hold, in one tree. This file
// holds the runtime's keys and assembles the root; each other top-level section is built by the
// layer that owns it and registered (ConfigSection, config_schema.h): nn/config_schema_model.cpp,
// data/config_schema_data.cpp, train/config_schema_train.cpp.
//
// HOW TO ADD A KEY
//   1. Find the map that should hold it: make_root_schema() below for the top level, the section's
//      function otherwise (model_schema, data_schema, train_schema, ...), and add one line to its
//      field list, e.g.
//          {"warmup_epochs", int_in(0, kMaxEpochs), kOptional,
//           {"Epochs of linear learning-rate warm-up.", "0", "5"}},
//      or, for a key that must be present, {"name", string_value(), kRequired, {...}}.
//   2. Pick the value type from the building blocks (config_schema_parts.h): int_in,
//   number_above_to,
//      number_from_to, number_in, number_between, boolean, string_value, path_value, one_of,
//      int_or_auto, sequence_of, map_of, tagged_map_of, any_scalar_map, backend_name,
//      device_spec, backend_map_of. A new kind of value needs a ValueKind, a case in
//      describe_expected() here and one in config_validate.cpp.
//   3. A new layer type is one more entry in layer_schema() (nn/config_schema_model.cpp): the tag
//      value and the keys it takes. A new top-level section is a ConfigSection in its owner's
//      file.
//      Every integer and number has both bounds: a value is checked against them before the code
//      that reads it narrows it (to int, to float), so nothing wraps or overflows to inf/NaN.
//   4. Give it a FieldDoc: a one-line description, the default the code uses when the key is
//      absent, and an example value. Then regenerate the reference,
//          build/bin/switchyard config --reference > docs/config.md
//      (tests/config fails until docs/config.md matches), add a numeric, boolean or enum default
//      to the defaults test in tests/config/config_reference_test.cpp, and a test in tests/config
//      if the key has a new kind of rule.
// Validation, unknown-key suggestions and --set overrides all follow from the tree; nothing else
// needs to change. Code that reads the value uses ConfigNode (config.h).
#include "runtime/config_schema.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <utility>

#include "runtime/config_schema_parts.h"
#include "runtime/config_values.h"
#include "switchyard/config.h"

namespace switchyard::config_schema {
namespace {

std::vector<SchemaField> runtime_fields() {
  return {
      {"backends",
       sequence_of(backend_name(),
                   "a sequence of backend names, such as [cuda, vulkan, onednn, reference]", 1),
       kOptional,
       {"The backends to try, in order of preference (env SWITCHYARD_BACKENDS).",
        "[cuda, vulkan, onednn, reference]", "[onednn, reference]"}},
      {"device",
       device_spec(),
       kOptional,
       {"The device to run on (env SWITCHYARD_DEVICE).", "auto", "cuda:1"}},
      {"device_policy",
       one_of({"first", "most_free_memory", "local_rank"}),
       kOptional,
       {"How a device is chosen among the chosen backend's devices.", "first", "local_rank"}},
      {"fallback",
       one_of({"warn", "error", "silent"}),
       kOptional,
       {"What happens when a preferred backend is unusable (env SWITCHYARD_FALLBACK).", "warn",
        "error"}},
      {"plugin_paths",
       sequence_of(path_value(), "a sequence of folders"),
       kOptional,
       {"Folders searched for plugins, after SWITCHYARD_PLUGIN_PATH and before the default ones.",
        "[]", "[plugins]"}},
      {"deterministic",
       boolean(),
       kOptional,
       {"Whether every backend must give bit-identical results from run to run.", "false", "true"}},
      {"seed",
       int_in(0, kMaxSeed),
       kOptional,
       {"The seed of weight initialisation, dropout and shuffling.", "0", "42"}},
      {"backend_options",
       backend_map_of(any_scalar_map()),
       kOptional,
       {"Options passed to each backend's devices, per backend.", "none",
        "{onednn: {memory_limit_bytes: 3000000}}"}},
  };
}

// The keys the owners registered (ConfigSection), by order. A function's static, so that it exists
// before the first registration whatever the order of static initialisation.
std::vector<std::pair<int, SchemaField (*)()>>& registered_sections() {
  static std::vector<std::pair<int, SchemaField (*)()>> sections;
  return sections;
}

SchemaNode make_root_schema() {
  std::vector<SchemaField> fields = runtime_fields();
  fields.push_back(
      {"task",
       one_of({"train", "predict", "evaluate"}),
       kOptional,
       {"What `switchyard run` does (predict when the file has only a predict section).", "train",
        "predict"}});
  std::vector<std::pair<int, SchemaField (*)()>> sections = registered_sections();
  std::stable_sort(sections.begin(), sections.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& section : sections) fields.push_back(section.second());
  return map_of(std::move(fields));
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
    case ValueKind::kText:
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

ConfigSection::ConfigSection(int order, SchemaField (*make)()) {
  registered_sections().emplace_back(order, make);
}

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
