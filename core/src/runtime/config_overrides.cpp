#include "runtime/config_overrides.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "runtime/config_text.h"
#include "runtime/config_values.h"

namespace switchyard {
namespace {

// One step of a dotted key: a map key, or an index into a sequence ("layers[1]" is two steps).
struct KeyStep {
  std::string key;
  std::optional<std::size_t> index;
  std::string path;  // the dotted key up to and including this step, for messages
};

std::string trim(const std::string& text) {
  const std::size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

Status override_error(const std::string& source, const std::string& key_path,
                      const std::string& message) {
  return invalid_argument(format_config_error({source, 0, 0}, key_path, message));
}

Status bad_key_error(const std::string& assignment) {
  return override_error(override_source_name(assignment), "",
                        "not a valid override, expected <dotted.key>=<value>, such as "
                        "train.epochs=3 or model.layers[0].out_features=32");
}

// Records the maps and keys that applying the override `source` created: the nodes without a mark
// that no earlier override recorded. The document's root is the file's, whatever made it a map.
void record_created_nodes(ConfigDocument& document, const YAML::Node& node,
                          const std::string& source, bool is_root) {
  if (!is_root && node.Mark().is_null()) {
    const bool known = std::any_of(document.override_nodes.begin(), document.override_nodes.end(),
                                   [&](const OverrideNode& entry) { return entry.node.is(node); });
    if (!known) document.override_nodes.push_back({node, source});
  }
  if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      record_created_nodes(document, it->first, source, false);
      record_created_nodes(document, it->second, source, false);
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      record_created_nodes(document, node[i], source, false);
    }
  }
}

// Splits "model.layers[1].p" into steps; empty when the key is malformed.
std::vector<KeyStep> parse_key_steps(const std::string& dotted) {
  std::vector<KeyStep> steps;
  std::string path;
  std::size_t pos = 0;
  while (pos <= dotted.size()) {
    std::size_t end = dotted.find('.', pos);
    if (end == std::string::npos) end = dotted.size();
    const std::string part = dotted.substr(pos, end - pos);
    const std::size_t bracket = part.find('[');
    const std::string key = part.substr(0, bracket);
    if (key.empty()) return {};
    path = child_key_path(path, key);
    steps.push_back({key, std::nullopt, path});
    std::size_t at = bracket;
    while (at != std::string::npos) {
      const std::size_t close = part.find(']', at);
      if (close == std::string::npos) return {};
      const auto index = config_values::parse_int(part.substr(at + 1, close - at - 1));
      if (!index || *index < 0 || part.substr(at + 1, 1) == "+") return {};
      path = item_key_path(path, static_cast<std::size_t>(*index));
      steps.push_back({"", static_cast<std::size_t>(*index), path});
      at = close + 1 == part.size() ? std::string::npos : close + 1;
      if (at != std::string::npos && part[at] != '[') return {};
    }
    pos = end + 1;
  }
  return steps;
}

// Where an override is being applied: the document, the override's name and, while walking down
// its path, which --set made the current node (empty: the file).
struct OverrideWalk {
  ConfigDocument& document;
  std::string source;
  std::string parent_source;
};

// `parent` is not the map or sequence that `step` needs. When the file put it there the file is at
// fault (a truncated file whose top level is a lone word, `train: 5`): the error names the file,
// line and column, and the override that ran into it. Otherwise the override is.
Status wrong_kind_error(const OverrideWalk& walk, const YAML::Node& parent, const KeyStep& step,
                        const std::string& parent_path, const std::string& expected) {
  if (walk.parent_source.empty() && !parent.Mark().is_null()) {
    return invalid_argument(
        format_config_error(node_location(walk.document, parent, ""), parent_path,
                            "expected " + expected + ", got " + describe_found(parent) + ", so " +
                                walk.source + " cannot set '" + step.path + "' in it"));
  }
  const std::string parent_name = parent_path.empty() ? "the top level" : "'" + parent_path + "'";
  const std::string purpose = step.index ? "to index" : "to set '" + step.key + "' in";
  // An index into a list the file does not have (model.layers of a file that uses the default
  // model): only the whole list can be given.
  const std::string hint = step.index && (!parent.IsDefined() || parent.IsNull())
                               ? " (the file has no " + parent_name +
                                     " to change one item of; give the whole list, "
                                     "e.g. --set '" +
                                     parent_path + "=[...]')"
                               : "";
  return override_error(walk.source, step.path,
                        parent_name + " is " + describe_found(parent) + ", expected " + expected +
                            " " + purpose + hint);
}

// The node one step below `parent`, created as an empty map when absent (or null) and
// `create_map` is set. The parent must already be of the right kind.
Result<YAML::Node> descend(const OverrideWalk& walk, YAML::Node& parent, const KeyStep& step,
                           const std::string& parent_path, bool create_map) {
  if (step.index) {
    if (!parent.IsSequence())
      return wrong_kind_error(walk, parent, step, parent_path, "a sequence");
    if (*step.index >= parent.size()) {
      return override_error(walk.source, step.path,
                            "index " + std::to_string(*step.index) +
                                " is out of range, expected an index below " +
                                std::to_string(parent.size()));
    }
    return parent[*step.index];
  }
  if (parent.IsNull()) parent = YAML::Node(YAML::NodeType::Map);
  if (!parent.IsMap()) return wrong_kind_error(walk, parent, step, parent_path, "a map");
  YAML::Node child = parent[step.key];
  if (create_map && (!child.IsDefined() || child.IsNull())) child = YAML::Node(YAML::NodeType::Map);
  return child;
}

}  // namespace

Status apply_config_override(ConfigDocument& document, const std::string& assignment) {
  const std::size_t equals = assignment.find('=');
  if (equals == std::string::npos) return bad_key_error(assignment);
  const std::string dotted = trim(assignment.substr(0, equals));
  const std::string value_text = assignment.substr(equals + 1);
  const std::vector<KeyStep> steps = parse_key_steps(dotted);
  if (steps.empty()) return bad_key_error(assignment);
  const std::string source = override_source_name(assignment);

  if (const std::optional<std::string> problem = yaml_bounds_problem(value_text)) {
    return override_error(source, dotted, "the value is refused: " + *problem);
  }
  YAML::Node value;
  try {
    value = YAML::Load(value_text);
  } catch (const YAML::Exception& error) {
    return override_error(source, dotted,
                          "value '" + value_text + "' is not valid YAML (" + error.msg +
                              "), expected a YAML value such as 3, abc or [a, b]");
  }

  if (!document.root.IsDefined() || document.root.IsNull()) {
    document.root = YAML::Node(YAML::NodeType::Map);
  }
  // Node assignment writes through to the referenced node; reset() rebinds the handle instead.
  YAML::Node current;
  current.reset(document.root);
  OverrideWalk walk{document, source, ""};
  std::string parent_path;
  for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
    const bool next_is_key = !steps[i + 1].index.has_value();
    SY_ASSIGN_OR_RETURN(YAML::Node child,
                        descend(walk, current, steps[i], parent_path, next_is_key));
    current.reset(child);
    walk.parent_source = node_override_source(document, current, walk.parent_source);
    parent_path = steps[i].path;
  }
  SY_ASSIGN_OR_RETURN(YAML::Node target, descend(walk, current, steps.back(), parent_path, false));
  target = value;
  document.override_nodes.push_back({value, source});
  record_created_nodes(document, document.root, source, true);
  return ok_status();
}

}  // namespace switchyard
