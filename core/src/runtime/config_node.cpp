// ConfigNode: read access to a validated document, and the location helpers it shares with the
// validator.
#include <utility>

#include "runtime/config_document.h"
#include "runtime/config_values.h"
#include "runtime/input_file.h"
#include "switchyard/config.h"

namespace switchyard {

std::string SourceLocation::to_string() const {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string override_source_name(const std::string& assignment) {
  return "--set " + quote_value(assignment);
}

std::string node_override_source(const ConfigDocument& document, const YAML::Node& node,
                                 const std::string& parent_source) {
  if (document.override_nodes.empty()) return parent_source;
  // A node's own entry wins over its parent's: a map that one --set created may hold a value that
  // a later --set placed.
  for (const OverrideNode& entry : document.override_nodes) {
    if (entry.node.is(node)) return entry.source;
  }
  if (!parent_source.empty()) return parent_source;
  // Every node of the file has a mark; the overrides' unmarked nodes are all recorded above.
  return node.Mark().is_null() ? "--set" : "";
}

SourceLocation node_location(const ConfigDocument& document, const YAML::Node& node,
                             const std::string& override_source) {
  if (!override_source.empty()) return {override_source, 0, 0};
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return {document.file, 0, 0};
  return {document.file, mark.line + 1, mark.column + 1};
}

std::string format_config_error(const SourceLocation& location, const std::string& key_path,
                                const std::string& message) {
  std::string text = location.to_string();
  if (!text.empty()) text += ": ";
  // A file's keys may be any bytes and any length: printable, and cut (a fuzzed key of 1,800
  // bytes made a message of 8,330 characters).
  if (!key_path.empty()) text += "key " + detail::quote_name(key_path, kKeyLimit) + ": ";
  return text + message;
}

std::string child_key_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string item_key_path(const std::string& parent, std::size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

std::string quote_value(const std::string& text) {
  constexpr std::size_t kMaxShownChars = 60;
  if (text.size() <= kMaxShownChars) return "'" + text + "'";
  return "'" + text.substr(0, kMaxShownChars) + "...'";
}

std::string describe_found(const YAML::Node& node) {
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a sequence";
  if (node.IsScalar()) return quote_value(node.Scalar());
  return "an empty value";
}

std::shared_ptr<const ConfigNode::Impl> ConfigNode::Impl::make_child(const Impl& parent,
                                                                     const YAML::Node& child,
                                                                     bool present,
                                                                     std::string key_path) {
  auto impl = std::make_shared<ConfigNode::Impl>();
  impl->document = parent.document;
  impl->key_path = std::move(key_path);
  impl->present = present;
  if (!present) {
    impl->override_source = parent.override_source;
    impl->location = parent.location;
    return impl;
  }
  impl->node = child;
  impl->override_source = node_override_source(*parent.document, child, parent.override_source);
  impl->location = node_location(*parent.document, child, impl->override_source);
  return impl;
}

namespace {

const std::string& empty_string() {
  static const std::string empty;
  return empty;
}

}  // namespace

ConfigNode::ConfigNode() = default;
ConfigNode::~ConfigNode() = default;
ConfigNode::ConfigNode(const ConfigNode&) = default;
ConfigNode& ConfigNode::operator=(const ConfigNode&) = default;

bool ConfigNode::valid() const {
  return impl_ && impl_->present;
}
bool ConfigNode::is_map() const {
  return valid() && impl_->node.IsMap();
}
bool ConfigNode::is_sequence() const {
  return valid() && impl_->node.IsSequence();
}
bool ConfigNode::is_scalar() const {
  return valid() && impl_->node.IsScalar();
}
const std::string& ConfigNode::key_path() const {
  return impl_ ? impl_->key_path : empty_string();
}
SourceLocation ConfigNode::location() const {
  return impl_ ? impl_->location : SourceLocation{};
}

ConfigNode ConfigNode::operator[](const std::string& key) const {
  ConfigNode result;
  if (!impl_) return result;
  const std::string path = child_key_path(impl_->key_path, key);
  // Lookups go through a const node: a non-const YAML::Node::operator[] would insert the key.
  const YAML::Node& node = impl_->node;
  if (is_map()) {
    const YAML::Node child = node[key];
    if (child.IsDefined()) {
      result.impl_ = Impl::make_child(*impl_, child, true, path);
      return result;
    }
  }
  result.impl_ = Impl::make_child(*impl_, YAML::Node(), false, path);
  return result;
}

std::vector<ConfigNode> ConfigNode::items() const {
  std::vector<ConfigNode> result;
  if (!is_sequence()) return result;
  const YAML::Node& node = impl_->node;
  for (std::size_t i = 0; i < node.size(); ++i) {
    ConfigNode item;
    item.impl_ = Impl::make_child(*impl_, node[i], true, item_key_path(impl_->key_path, i));
    result.push_back(std::move(item));
  }
  return result;
}

std::vector<std::string> ConfigNode::keys() const {
  std::vector<std::string> result;
  if (!is_map()) return result;
  const YAML::Node& node = impl_->node;
  for (auto it = node.begin(); it != node.end(); ++it) {
    result.push_back(it->first.IsScalar() ? it->first.Scalar() : std::string());
  }
  return result;
}

Status ConfigNode::error(const std::string& message) const {
  return invalid_argument(format_config_error(location(), key_path(), message));
}

Result<std::string> ConfigNode::as_string() const {
  if (!valid()) return error("missing, expected a string");
  if (!is_scalar()) return error("expected a string, got " + describe_found(impl_->node));
  return impl_->node.Scalar();
}

Result<int64_t> ConfigNode::as_int() const {
  if (!valid()) return error("missing, expected an integer");
  if (is_scalar()) {
    if (auto value = config_values::parse_int(impl_->node.Scalar())) return *value;
  }
  return error("expected an integer, got " + describe_found(impl_->node));
}

Result<double> ConfigNode::as_double() const {
  if (!valid()) return error("missing, expected a number");
  if (is_scalar()) {
    if (auto value = config_values::parse_double(impl_->node.Scalar())) return *value;
  }
  return error("expected a number, got " + describe_found(impl_->node));
}

Result<bool> ConfigNode::as_bool() const {
  if (!valid()) return error("missing, expected true or false");
  if (is_scalar()) {
    if (auto value = config_values::parse_bool(impl_->node.Scalar())) return *value;
  }
  return error("expected true or false, got " + describe_found(impl_->node));
}

Result<std::string> ConfigNode::string_or(const std::string& key,
                                          const std::string& fallback) const {
  const ConfigNode child = (*this)[key];
  if (!child.valid()) return fallback;
  return child.as_string();
}

Result<int64_t> ConfigNode::int_or(const std::string& key, int64_t fallback) const {
  const ConfigNode child = (*this)[key];
  if (!child.valid()) return fallback;
  return child.as_int();
}

Result<double> ConfigNode::double_or(const std::string& key, double fallback) const {
  const ConfigNode child = (*this)[key];
  if (!child.valid()) return fallback;
  return child.as_double();
}

Result<bool> ConfigNode::bool_or(const std::string& key, bool fallback) const {
  const ConfigNode child = (*this)[key];
  if (!child.valid()) return fallback;
  return child.as_bool();
}

}  // namespace switchyard
