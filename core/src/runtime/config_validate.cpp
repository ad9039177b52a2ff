// The schema walk: compares each node of the document with its SchemaNode and records one
// ConfigError per problem, with the node's location and dotted key.
#include "runtime/config_validate.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "runtime/config_schema.h"
#include "runtime/config_values.h"
#include "runtime/input_file.h"

namespace switchyard {
namespace {

using config_schema::SchemaField;
using config_schema::SchemaNode;
using config_schema::ValueKind;

// Where a node sits: its dotted key and whether a --set override put it there.
struct NodePlace {
  std::string key_path;
  std::string override_source;  // the --set that put it there; empty: from the file
  // Where the key of a map value is. An empty value ("epochs:" and nothing) has no useful mark of
  // its own (yaml-cpp puts it at the start of the next line), so errors about it point here.
  YAML::Mark key_mark = YAML::Mark::null_mark();
};

// The document's own `plugin_paths` (relative to its folder): a plugin found there may be named in
// `backends`, `device` and `backend_options` by its file name.
std::vector<std::filesystem::path> document_plugin_paths(const ConfigDocument& document) {
  std::vector<std::filesystem::path> paths;
  const YAML::Node list = document.root.IsMap() ? document.root["plugin_paths"] : YAML::Node();
  if (!list.IsDefined() || !list.IsSequence()) return paths;  // absent: an invalid node
  for (const YAML::Node& item : list) {
    if (!item.IsScalar() || item.Scalar().empty()) continue;
    const std::filesystem::path path(item.Scalar());
    paths.push_back(path.is_absolute() ? path : (document.directory / path).lexically_normal());
  }
  return paths;
}

// An empty block sequence entry ("-" and nothing) has the mark of whatever follows it; the "-"
// before that mark is where the entry is. A null mark when there is no such dash.
YAML::Mark block_entry_mark(const std::string& text, const YAML::Mark& mark) {
  if (mark.is_null() || mark.pos <= 0 || static_cast<std::size_t>(mark.pos) > text.size()) {
    return YAML::Mark::null_mark();
  }
  std::size_t end = static_cast<std::size_t>(mark.pos);
  while (end > 0 && std::isspace(static_cast<unsigned char>(text[end - 1])) != 0) --end;
  if (end == 0 || text[end - 1] != '-') return YAML::Mark::null_mark();
  const std::size_t dash = end - 1;
  const std::size_t newline = text.rfind('\n', dash);
  const std::size_t line_start = newline == std::string::npos ? 0 : newline + 1;
  const auto dash_at = text.begin() + static_cast<std::ptrdiff_t>(dash);
  YAML::Mark result;
  result.pos = static_cast<int>(dash);
  result.line = static_cast<int>(std::count(text.begin(), dash_at, '\n'));
  result.column = static_cast<int>(dash - line_start);
  return result;
}

class Validator {
 public:
  explicit Validator(const ConfigDocument& document)
      : document_(document), plugin_paths_(document_plugin_paths(document)) {}

  void check_duplicates(const YAML::Node& node, const NodePlace& place);
  void check(const YAML::Node& node, const SchemaNode& schema, const NodePlace& place);
  std::vector<ConfigError> take_errors() { return std::move(errors_); }

 private:
  NodePlace child_place(const YAML::Node& child, const NodePlace& parent, std::string key_path);
  void report(const YAML::Node& node, const NodePlace& place, const std::string& message);
  void check_map(const YAML::Node& node, const SchemaNode& schema, const NodePlace& place);
  std::vector<std::string> check_map_keys(const YAML::Node& node,
                                          const std::vector<const SchemaField*>& fields,
                                          const std::string& variant_text, const NodePlace& place);
  void check_required(const YAML::Node& node, const std::vector<const SchemaField*>& fields,
                      const std::string& variant_text, const std::vector<std::string>& suggested,
                      const NodePlace& place);
  void check_sequence(const YAML::Node& node, const SchemaNode& schema, const NodePlace& place);
  void check_backend_map(const YAML::Node& node, const SchemaNode& schema, const NodePlace& place);
  void check_scalar_map(const YAML::Node& node, const NodePlace& place);
  void check_scalar(const YAML::Node& node, const SchemaNode& schema, const NodePlace& place);
  std::string scalar_problem(const std::string& text, const SchemaNode& schema) const;

  const ConfigDocument& document_;
  const std::vector<std::filesystem::path> plugin_paths_;
  std::vector<ConfigError> errors_;
};

NodePlace Validator::child_place(const YAML::Node& child, const NodePlace& parent,
                                 std::string key_path) {
  return {std::move(key_path), node_override_source(document_, child, parent.override_source)};
}

void Validator::report(const YAML::Node& node, const NodePlace& place, const std::string& message) {
  SourceLocation location = node_location(document_, node, place.override_source);
  if (node.IsNull() && place.override_source.empty() && !place.key_mark.is_null()) {
    location = {document_.file, place.key_mark.line + 1, place.key_mark.column + 1};
  }
  errors_.push_back({location, format_config_error(location, place.key_path, message)});
}

void Validator::check_duplicates(const YAML::Node& node, const NodePlace& place) {
  if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      check_duplicates(node[i], child_place(node[i], place, item_key_path(place.key_path, i)));
    }
    return;
  }
  if (!node.IsMap()) return;
  // A hash of the keys seen: a map of many keys (a hostile file's millions) stays linear.
  std::unordered_map<std::string, YAML::Node> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar()) continue;  // reported by the schema walk
    const std::string key = it->first.Scalar();
    const std::string path = child_key_path(place.key_path, key);
    const auto first = seen.find(key);
    if (first != seen.end()) {
      const NodePlace key_place = child_place(it->first, place, path);
      const SourceLocation first_location =
          node_location(document_, first->second,
                        node_override_source(document_, first->second, place.override_source));
      const std::string where = first_location.line > 0
                                    ? "line " + std::to_string(first_location.line) + ", column " +
                                          std::to_string(first_location.column)
                                    : first_location.to_string();
      report(it->first, key_place,
             "duplicate key " + detail::quote_name(key, kKeyLimit) + " (first defined at " + where +
                 "), expected each key at most once in a map");
    } else {
      seen.emplace(key, it->first);
    }
    check_duplicates(it->second, child_place(it->second, place, path));
  }
}

void Validator::check(const YAML::Node& node, const SchemaNode& schema, const NodePlace& place) {
  switch (schema.kind) {
    case ValueKind::kMap:
      return check_map(node, schema, place);
    case ValueKind::kSequence:
      return check_sequence(node, schema, place);
    case ValueKind::kBackendMap:
      return check_backend_map(node, schema, place);
    case ValueKind::kAnyScalarMap:
      return check_scalar_map(node, place);
    default:
      return check_scalar(node, schema, place);
  }
}

void Validator::check_map(const YAML::Node& node, const SchemaNode& schema,
                          const NodePlace& place) {
  // "train:" with nothing under it is an empty map; a layer needs at least its type.
  if (node.IsNull() && schema.tag_key.empty()) return;
  if (!node.IsMap()) {
    report(
        node, place,
        "expected " + config_schema::describe_expected(schema) + ", got " + describe_found(node));
    return;
  }
  std::vector<const SchemaField*> fields;
  for (const SchemaField& field : schema.fields) fields.push_back(&field);
  std::string variant_text;
  if (!schema.tag_key.empty()) {
    const YAML::Node tag = node[schema.tag_key];
    const config_schema::SchemaVariant* variant =
        tag.IsDefined() && tag.IsScalar() ? config_schema::find_variant(schema, tag.Scalar())
                                          : nullptr;
    if (variant == nullptr) {
      // Without a valid tag the other keys cannot be judged: report the tag alone.
      check_required(node, fields, "", {}, place);
      if (tag.IsDefined()) {
        check(tag, config_schema::find_field(schema, schema.tag_key)->schema,
              child_place(tag, place, child_key_path(place.key_path, schema.tag_key)));
      }
      return;
    }
    for (const SchemaField& field : variant->fields) fields.push_back(&field);
    variant_text = schema.tag_key + " '" + variant->tag + "'";
  }
  // A misspelt required key is reported once, as the unknown key with its suggestion.
  const std::vector<std::string> suggested = check_map_keys(node, fields, variant_text, place);
  check_required(node, fields, variant_text, suggested, place);
}

// Returns the known keys that were suggested for unknown ones.
std::vector<std::string> Validator::check_map_keys(const YAML::Node& node,
                                                   const std::vector<const SchemaField*>& fields,
                                                   const std::string& variant_text,
                                                   const NodePlace& place) {
  std::vector<std::string> suggested;
  std::vector<std::string> names;
  for (const SchemaField* field : fields) names.push_back(field->key);
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar()) {
      report(it->first, child_place(it->first, place, place.key_path),
             "expected a key name, got " + describe_found(it->first));
      continue;
    }
    const std::string key = it->first.Scalar();
    const std::string path = child_key_path(place.key_path, key);
    const auto field = std::find_if(fields.begin(), fields.end(),
                                    [&](const SchemaField* f) { return f->key == key; });
    if (field != fields.end()) {
      NodePlace value_place = child_place(it->second, place, path);
      value_place.key_mark = it->first.Mark();
      check(it->second, (*field)->schema, value_place);
      continue;
    }
    std::string message = "unknown key " + detail::quote_name(key, kKeyLimit);
    if (!variant_text.empty()) message += " for " + variant_text;
    if (auto suggestion = config_values::closest_name(key, names)) {
      message += "; did you mean '" + *suggestion + "'?";
      suggested.push_back(*suggestion);
    } else if (names.size() == 1) {
      message += ", expected only '" + names[0] + "'";
    } else {
      message += ", expected one of: " + config_values::join(names, ", ");
    }
    report(it->first, child_place(it->first, place, path), message);
  }
  return suggested;
}

void Validator::check_required(const YAML::Node& node,
                               const std::vector<const SchemaField*>& fields,
                               const std::string& variant_text,
                               const std::vector<std::string>& suggested, const NodePlace& place) {
  for (const SchemaField* field : fields) {
    if (!field->required || node[field->key].IsDefined()) continue;
    if (std::find(suggested.begin(), suggested.end(), field->key) != suggested.end()) continue;
    const std::string suffix = variant_text.empty() ? "" : " for " + variant_text;
    report(node, {child_key_path(place.key_path, field->key), place.override_source},
           "missing required key '" + field->key + "'" + suffix + ", expected " +
               config_schema::describe_expected(field->schema));
  }
}

void Validator::check_sequence(const YAML::Node& node, const SchemaNode& schema,
                               const NodePlace& place) {
  const std::string expected = "expected " + config_schema::describe_expected(schema);
  if (!node.IsSequence()) {
    report(node, place, expected + ", got " + describe_found(node));
    return;
  }
  const std::size_t count = node.size();
  if (count < schema.min_items || (schema.max_items && count > *schema.max_items)) {
    report(node, place,
           expected + ", got " + std::to_string(count) + (count == 1 ? " item" : " items"));
  }
  for (std::size_t i = 0; i < count; ++i) {
    NodePlace item_place = child_place(node[i], place, item_key_path(place.key_path, i));
    if (node[i].IsNull()) item_place.key_mark = block_entry_mark(document_.text, node[i].Mark());
    check(node[i], *schema.element, item_place);
  }
}

void Validator::check_backend_map(const YAML::Node& node, const SchemaNode& schema,
                                  const NodePlace& place) {
  if (node.IsNull()) return;
  if (!node.IsMap()) {
    report(
        node, place,
        "expected " + config_schema::describe_expected(schema) + ", got " + describe_found(node));
    return;
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
    const std::string path = child_key_path(place.key_path, key);
    const std::string problem = it->first.IsScalar()
                                    ? config_values::check_backend_name(key, plugin_paths_)
                                    : "expected a backend name, got " + describe_found(it->first);
    if (!problem.empty()) {
      report(it->first, child_place(it->first, place, path), problem);
      continue;
    }
    check(it->second, *schema.element, child_place(it->second, place, path));
  }
}

void Validator::check_scalar_map(const YAML::Node& node, const NodePlace& place) {
  if (node.IsNull()) return;
  if (!node.IsMap()) {
    report(node, place,
           "expected a map of option names to scalar values, got " + describe_found(node));
    return;
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
    if (!it->first.IsScalar()) {
      report(it->first, child_place(it->first, place, place.key_path),
             "expected an option name, got " + describe_found(it->first));
      continue;
    }
    if (!it->second.IsScalar()) {
      report(it->second, child_place(it->second, place, child_key_path(place.key_path, key)),
             "expected a scalar option value (a string, number or true/false), got " +
                 describe_found(it->second));
    }
  }
}

void Validator::check_scalar(const YAML::Node& node, const SchemaNode& schema,
                             const NodePlace& place) {
  const std::string expected = "expected " + config_schema::describe_expected(schema);
  if (!node.IsScalar()) {
    report(node, place, expected + ", got " + describe_found(node));
    return;
  }
  const std::string problem = scalar_problem(node.Scalar(), schema);
  if (!problem.empty()) report(node, place, problem);
}

bool in_range(double value, const config_schema::NumberRange& range) {
  if (range.min && (range.min_inclusive ? value < *range.min : value <= *range.min)) return false;
  if (range.max && (range.max_inclusive ? value > *range.max : value >= *range.max)) return false;
  return true;
}

// Empty when `text` is a valid value of `schema`, else the whole message.
std::string Validator::scalar_problem(const std::string& text, const SchemaNode& schema) const {
  const std::string mismatch =
      "expected " + config_schema::describe_expected(schema) + ", got " + quote_value(text);
  switch (schema.kind) {
    case ValueKind::kString:
    case ValueKind::kPath:
      return text.empty() ? mismatch : "";
    case ValueKind::kText:
      return "";
    case ValueKind::kInt: {
      const auto value = config_values::parse_int(text);
      return value && in_range(static_cast<double>(*value), schema.range) ? "" : mismatch;
    }
    case ValueKind::kIntOrAuto: {
      if (text == "auto") return "";
      const auto value = config_values::parse_int(text);
      return value && in_range(static_cast<double>(*value), schema.range) ? "" : mismatch;
    }
    case ValueKind::kDouble: {
      const auto value = config_values::parse_double(text);
      return value && in_range(*value, schema.range) ? "" : mismatch;
    }
    case ValueKind::kBool:
      return config_values::parse_bool(text) ? "" : mismatch;
    case ValueKind::kEnum: {
      if (std::find(schema.choices.begin(), schema.choices.end(), text) != schema.choices.end()) {
        return "";
      }
      return config_values::unknown_name_message("value", text, schema.choices, true);
    }
    case ValueKind::kBackendName:
      return config_values::check_backend_name(text, plugin_paths_);
    case ValueKind::kDeviceSpec:
      return config_values::check_device_spec(text, plugin_paths_);
    default:
      return mismatch;
  }
}

// Override errors (no line) first, then by position in the file.
bool error_before(const ConfigError& a, const ConfigError& b) {
  if (a.location.line != b.location.line) return a.location.line < b.location.line;
  return a.location.column < b.location.column;
}

}  // namespace

std::vector<ConfigError> validate_document(const ConfigDocument& document) {
  Validator validator(document);
  const NodePlace root_place{"", ""};
  validator.check_duplicates(document.root, root_place);
  validator.check(document.root, config_schema::root_schema(), root_place);
  std::vector<ConfigError> errors = validator.take_errors();
  std::stable_sort(errors.begin(), errors.end(), error_before);
  return errors;
}

}  // namespace switchyard
