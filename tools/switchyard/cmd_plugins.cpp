// switchyard plugins: every plugin file found along the search path, with its state and reason.
#include <iostream>

#include "cli_common.h"
#include "support/json_io.h"
#include "switchyard/plugin.h"

namespace switchyard::cli {

int plugins_command(const Args& args) {
  po::options_description options("options");
  options.add_options()("config", po::value<std::string>(), "YAML file (for plugin_paths)")(
      "json", "print JSON");
  po::variables_map values;
  if (auto exit =
          parse_args(args, "usage: switchyard plugins [--config FILE] [--json]", options, values)) {
    return *exit;
  }
  std::optional<Config> config = load_config_or_report(values);
  if (!config) return kExitUsage;
  Registry registry = discover_isolated(config->runtime());
  if (values.count("json") != 0) {
    detail::Json list = detail::Json::array();
    for (const auto& p : registry.plugins()) {
      list.push_back(detail::Json{{"name", p.name},
                                  {"path", p.path.string()},
                                  {"status", plugin_state_name(p.state)},
                                  {"version", p.version},
                                  {"description", p.description},
                                  {"reason", p.reason}});
    }
    // A folder that could not be searched gets an entry of its own, so its reason is not lost.
    for (const auto& folder : registry.search_folders()) {
      if (folder.searched) continue;
      list.push_back(detail::Json{{"name", ""},
                                  {"path", folder.path.string()},
                                  {"status", "not searched"},
                                  {"version", ""},
                                  {"description", ""},
                                  {"reason", folder_not_searched_text(folder)}});
    }
    std::cout << detail::json_text(list, 2) << "\n";
    return kExitOk;
  }
  print_search_path(std::cout, registry);
  if (registry.plugins().empty()) std::cout << "no plugins found\n";
  for (const auto& p : registry.plugins()) {
    std::cout << p.name << "  " << plugin_state_name(p.state);
    if (!p.version.empty()) std::cout << "  v" << p.version;
    std::cout << "\n  path: " << p.path.string() << "\n";
    if (!p.description.empty()) std::cout << "  " << p.description << "\n";
    if (!p.reason.empty()) std::cout << "  reason: " << p.reason << "\n";
  }
  return kExitOk;
}

}  // namespace switchyard::cli
