// The parsed YAML document behind a Config and its ConfigNode views (internal).
//
// yaml-cpp stays out of the public headers: ConfigNode::Impl, defined here, is the only place a
// YAML::Node is held. Locations are computed here too, because a node can come from the file or
// from a --set override, and an override's marks refer to the override's own text, not the file.
#pragma once

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "switchyard/config.h"

namespace switchyard {

// The name that stands in for a file in errors about --set overrides.
inline constexpr const char* kOverrideSourceName = "<--set>";

struct ConfigDocument {
  std::string file;                 // as given by the caller, for messages
  std::filesystem::path directory;  // relative paths in the document resolve against this
  YAML::Node root;
  std::vector<YAML::Node> override_values;  // the values that --set placed into `root`
};

struct ConfigNode::Impl {
  std::shared_ptr<const ConfigDocument> document;
  YAML::Node node;       // meaningful only when `present`
  bool present = false;  // false for a key that is absent from the document
  bool from_override = false;
  std::string key_path;
  SourceLocation location;  // for an absent key: the location of the map it would be in

  // The view of `child` (or of an absent key when !present) one level below `parent`.
  static std::shared_ptr<const Impl> make_child(const Impl& parent, const YAML::Node& child,
                                                bool present, std::string key_path);
};

// True when `node` was created or replaced by a --set override. `parent_from_override` carries the
// answer down the tree: everything inside an override's value is from the override too.
bool node_from_override(const ConfigDocument& document, const YAML::Node& node,
                        bool parent_from_override);

// The file:line:column of `node` (1-based), or just "<--set>" for override nodes.
SourceLocation node_location(const ConfigDocument& document, const YAML::Node& node,
                             bool from_override);

// "file:line:col: key 'a.b': message"; the key part is left out for an empty key path and the
// location part for an unknown location.
std::string format_config_error(const SourceLocation& location, const std::string& key_path,
                                const std::string& message);

// "train" + "epochs" -> "train.epochs"; "model.layers" + 2 -> "model.layers[2]".
std::string child_key_path(const std::string& parent, const std::string& key);
std::string item_key_path(const std::string& parent, std::size_t index);

// "'abc'", cut to a readable length with "..." when long (an open quote can swallow a file).
std::string quote_value(const std::string& text);

// "'abc'" for a scalar, "a map", "a sequence" or "an empty value" otherwise: what an error says
// it found instead of the expected value.
std::string describe_found(const YAML::Node& node);

}  // namespace switchyard
