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

// A node that a --set override placed into the document, and the name of that override
// ("--set 'train.epochs=abc'"), which stands in for the file in errors about the node.
struct OverrideNode {
  YAML::Node node;
  std::string source;
};

// "--set 'train.epochs=abc'": how errors name the override `assignment`.
std::string override_source_name(const std::string& assignment);

struct ConfigDocument {
  std::string file;                 // as given by the caller, for messages
  std::filesystem::path directory;  // relative paths in the document resolve against this
  std::string text;                 // the file's text, for locating what yaml-cpp marks poorly
  YAML::Node root;
  // The values that --set placed into `root`, and the maps and keys it created on their way.
  std::vector<OverrideNode> override_nodes;
};

struct ConfigNode::Impl {
  std::shared_ptr<const ConfigDocument> document;
  YAML::Node node;              // meaningful only when `present`
  bool present = false;         // false for a key that is absent from the document
  std::string override_source;  // the --set that put the node there; empty: from the file
  std::string key_path;
  SourceLocation location;  // for an absent key: the location of the map it would be in

  // The view of `child` (or of an absent key when !present) one level below `parent`.
  static std::shared_ptr<const Impl> make_child(const Impl& parent, const YAML::Node& child,
                                                bool present, std::string key_path);
};

// The name of the --set override that created or replaced `node`; empty when it comes from the
// file. `parent_source` carries the answer down the tree: everything inside an override's value
// is from that override too.
std::string node_override_source(const ConfigDocument& document, const YAML::Node& node,
                                 const std::string& parent_source);

// The file:line:column of `node` (1-based), or the name of its --set override.
SourceLocation node_location(const ConfigDocument& document, const YAML::Node& node,
                             const std::string& override_source);

// How many bytes of a key (or key path) from a file a message shows (detail::quote_name).
constexpr std::size_t kKeyLimit = 80;

// "file:line:col: key 'a.b': message"; the key part is left out for an empty key path and the
// location part for an unknown location. The key path is made printable and cut at kKeyLimit.
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
