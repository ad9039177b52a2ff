// The shape of a valid configuration document, as data.
//
// config_schema.cpp builds one tree of SchemaNode values describing every key the YAML file may
// hold; config_validate.cpp walks a document against it. Keeping the schema declarative (rather
// than as checks scattered through the code that reads the file) means one place lists every key,
// its type and its allowed values, and every error message is generated from the same data.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace switchyard::config_schema {

enum class ValueKind {
  kMap,           // fixed keys (`fields`), optionally a tagged union (`tag_key` + `variants`)
  kSequence,      // elements follow `element`
  kString,        // any non-empty scalar
  kText,          // any scalar, the empty string too (data.na_values: '' marks an empty cell)
  kPath,          // a file or folder, relative to the YAML file's folder
  kInt,           // decimal integer within `range`
  kDouble,        // number within `range`
  kBool,          // true/false (also yes/no, on/off)
  kEnum,          // one of `choices`
  kIntOrAuto,     // an integer within `range`, or the string "auto"
  kAnyScalarMap,  // any keys, each with a scalar value (backend options)
  kBackendName,   // one of known_backend_names()
  kDeviceSpec,    // auto | cpu | <backend> | <backend>:<index>
  kBackendMap,    // keys are backend names, each value follows `element`
};

// Bounds for kInt, kDouble and kIntOrAuto; an absent bound is unbounded.
struct NumberRange {
  std::optional<double> min;
  std::optional<double> max;
  bool min_inclusive = true;
  bool max_inclusive = true;
};

struct SchemaField;
struct SchemaVariant;

struct SchemaNode {
  ValueKind kind = ValueKind::kString;
  NumberRange range;
  std::vector<std::string> choices;           // kEnum
  std::vector<SchemaField> fields;            // kMap: the keys every map of this kind may hold
  std::shared_ptr<const SchemaNode> element;  // kSequence elements, kBackendMap values
  std::size_t min_items = 0;                  // kSequence
  std::optional<std::size_t> max_items;       // kSequence
  std::string tag_key;                  // kMap as a tagged union: the key that picks a variant
  std::vector<SchemaVariant> variants;  // kMap as a tagged union: keys allowed per tag value
  std::string expected;                 // overrides the generated "expected ..." text when set
};

// What docs/config.md and `switchyard config` say about a key. `default_value` is the value the
// code uses when the key is absent, written as YAML ("10", "false", "[cuda, reference]"), or a
// word in the Default column: "required", "none" (the feature is off), "detected" (read from the
// data) or a short phrase when it depends on another key. tests/config checks the numbers, booleans
// and enum words against the settings the code really fills.
struct FieldDoc {
  std::string description;  // one line, a full sentence
  std::string default_value;
  std::string example;  // a value as it would appear in the YAML file
};

struct SchemaField {
  std::string key;
  SchemaNode schema;
  bool required = false;
  FieldDoc doc;
};

// One alternative of a tagged union, e.g. the keys a `linear` layer takes besides `type`.
struct SchemaVariant {
  std::string tag;
  std::vector<SchemaField> fields;
};

// The schema of a whole configuration file. Built once, on first use.
const SchemaNode& root_schema();

// A top-level key whose schema the layer that owns it builds, so that runtime/ knows no layer
// types, optimizers or losses: the model section is nn's (nn/config_schema_model.cpp), data is
// data's, loss, optimizer, schedule, train, predict and distributed are train's. Each owner
// defines one ConfigSection object per key at namespace scope; its constructor registers the key
// while the library loads, before root_schema() first runs. `order` places the key among the
// top-level keys, after the runtime's own (and so in docs/config.md).
struct ConfigSection {
  ConfigSection(int order, SchemaField (*make)());
};

// The text after "expected": "an integer >= 1", "one of: first, most_free_memory".
std::string describe_expected(const SchemaNode& schema);

// docs/config.md: one section per top-level key, a table per map (key, type and range, default,
// example, description) and one table per layer type. Generated from root_schema() alone, so
// the document cannot drift from the schema (tests/config compares it with the committed file).
std::string reference_markdown();

// The field of a map schema (or of the tagged variant `tag`, when given) named `key`, or null.
const SchemaField* find_field(const SchemaNode& map_schema, const std::string& key);
const SchemaVariant* find_variant(const SchemaNode& map_schema, const std::string& tag);

}  // namespace switchyard::config_schema
