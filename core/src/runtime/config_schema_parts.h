// The building blocks of the configuration schema and the bounds every number is checked against,
// for runtime/config_schema.cpp and for the layers that own a top-level section and register it
// (ConfigSection, runtime/config_schema.h):
//   nn/config_schema_model.cpp     model: layers (every layer type and its keys), init, weights
//   data/config_schema_data.cpp    data: tables, images, series, splits, scaling, missing values
//   train/config_schema_train.cpp  loss, optimizer, schedule, train, predict, distributed
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/config_schema.h"

namespace switchyard::config_schema {

// ---- Building blocks -----------------------------------------------------------------------

constexpr bool kRequired = true;
constexpr bool kOptional = false;

inline SchemaNode simple(ValueKind kind) {
  SchemaNode node;
  node.kind = kind;
  return node;
}

inline SchemaNode int_in(double min, double max) {
  SchemaNode node = simple(ValueKind::kInt);
  node.range.min = min;
  node.range.max = max;
  return node;
}

inline SchemaNode number(double min, bool min_inclusive, double max, bool max_inclusive) {
  SchemaNode node = simple(ValueKind::kDouble);
  node.range = {min, max, min_inclusive, max_inclusive};
  return node;
}
// The interval (min, max].
inline SchemaNode number_above_to(double min, double max) {
  return number(min, false, max, true);
}
// The closed interval [min, max].
inline SchemaNode number_from_to(double min, double max) {
  return number(min, true, max, true);
}
// The half-open interval [min, max).
inline SchemaNode number_in(double min, double max) {
  return number(min, true, max, false);
}
// The open interval (min, max).
inline SchemaNode number_between(double min, double max) {
  return number(min, false, max, false);
}

inline SchemaNode boolean() {
  return simple(ValueKind::kBool);
}
inline SchemaNode string_value(std::string expected = "") {
  SchemaNode node = simple(ValueKind::kString);
  node.expected = std::move(expected);
  return node;
}
inline SchemaNode text_value(std::string expected = "") {
  SchemaNode node = simple(ValueKind::kText);
  node.expected = std::move(expected);
  return node;
}
inline SchemaNode path_value() {
  return simple(ValueKind::kPath);
}
inline SchemaNode backend_name() {
  return simple(ValueKind::kBackendName);
}
inline SchemaNode device_spec() {
  return simple(ValueKind::kDeviceSpec);
}
inline SchemaNode any_scalar_map() {
  return simple(ValueKind::kAnyScalarMap);
}

inline SchemaNode one_of(std::vector<std::string> choices) {
  SchemaNode node = simple(ValueKind::kEnum);
  node.choices = std::move(choices);
  return node;
}

inline SchemaNode int_or_auto(double min, double max) {
  SchemaNode node = simple(ValueKind::kIntOrAuto);
  node.range.min = min;
  node.range.max = max;
  return node;
}

inline SchemaNode sequence_of(SchemaNode element, std::string expected, std::size_t min_items = 0,
                              std::optional<std::size_t> max_items = std::nullopt) {
  SchemaNode node = simple(ValueKind::kSequence);
  node.element = std::make_shared<const SchemaNode>(std::move(element));
  node.expected = std::move(expected);
  node.min_items = min_items;
  node.max_items = max_items;
  return node;
}

inline SchemaNode map_of(std::vector<SchemaField> fields) {
  SchemaNode node = simple(ValueKind::kMap);
  node.fields = std::move(fields);
  return node;
}

// A map whose `tag_key` value (always required) selects which other keys are allowed.
inline SchemaNode tagged_map_of(std::string tag_key, FieldDoc tag_doc,
                                std::vector<SchemaVariant> variants) {
  SchemaNode node = simple(ValueKind::kMap);
  node.tag_key = tag_key;
  std::vector<std::string> tags;
  for (const SchemaVariant& variant : variants) tags.push_back(variant.tag);
  node.fields.push_back({tag_key, one_of(tags), kRequired, std::move(tag_doc)});
  node.variants = std::move(variants);
  return node;
}

inline SchemaNode backend_map_of(SchemaNode value) {
  SchemaNode node = simple(ValueKind::kBackendMap);
  node.element = std::make_shared<const SchemaNode>(std::move(value));
  return node;
}

// ---- Bounds --------------------------------------------------------------------------------

// Upper bounds: generous for any real run, small enough that the int (layer geometry) and int64
// (counts) the values become never overflow, and documented in README.md ("Numbers in the YAML
// file"). Seeds stop at 2^53 - 1, the largest integer a double (and so JSON) holds exactly.
constexpr double kMaxWidth = 1048576;      // out_features, out_channels, batch sizes
constexpr double kMaxWindow = 1024;        // kernel_size, stride, padding, dilation
constexpr double kMaxImageExtent = 65536;  // each of data.image_shape
constexpr double kMaxEpochs = 1000000;     // epochs and every count of epochs or steps
constexpr double kMaxSeed = 9007199254740991.0;
constexpr double kMaxLearningRate = 10000;  // lr, min_lr (linear probes use 30)

}  // namespace switchyard::config_schema
