// switchyard devices: every device of every loaded plugin, probed, with the one the config selects.
#include <iostream>

#include "cli_common.h"
#include "json/json_io.h"

namespace switchyard::cli {
namespace {

bool has_device(const std::vector<DeviceRecord>& devices, const std::string& backend) {
  for (const auto& d : devices) {
    if (d.info.backend == backend) return true;
  }
  return false;
}

// One object per device, with its settings line (Device::settings); a plugin that has no device
// to show (it failed to load, has no driver, or is shadowed) gets one object with its plugin name
// as id, so its reason is never lost.
void print_json(const Registry& registry, const std::vector<DeviceRecord>& devices) {
  detail::Json list = detail::Json::array();
  for (const auto& d : devices) {
    list.push_back(detail::Json{{"backend", d.info.backend},
                                {"id", d.info.id()},
                                {"name", d.info.name},
                                {"type", device_type_name(d.info.type)},
                                {"memory_total_bytes", d.info.memory_total_bytes},
                                {"memory_free_bytes", d.info.memory_free_bytes},
                                {"usable", d.usable},
                                {"reason", d.reason},
                                {"settings", d.settings},
                                {"selected", d.selected}});
  }
  for (const auto& p : registry.plugins()) {
    if (has_device(devices, p.name) && p.state != PluginState::kShadowed) continue;
    list.push_back(
        detail::Json{{"backend", p.name},
                     {"id", p.name},
                     {"name", ""},
                     {"type", "none"},
                     {"memory_total_bytes", 0},
                     {"memory_free_bytes", 0},
                     {"usable", false},
                     {"reason", std::string(plugin_state_name(p.state)) + ": " + p.reason},
                     {"settings", ""},
                     {"selected", false}});
  }
  // A search folder that could not be searched gets an entry too: it may be why a backend is
  // missing above.
  for (const auto& folder : registry.search_folders()) {
    if (folder.searched) continue;
    list.push_back(detail::Json{{"backend", ""},
                                {"id", folder.path.string()},
                                {"name", ""},
                                {"type", "plugin folder"},
                                {"memory_total_bytes", 0},
                                {"memory_free_bytes", 0},
                                {"usable", false},
                                {"reason", folder_not_searched_text(folder)},
                                {"settings", ""},
                                {"selected", false}});
  }
  std::cout << detail::json_text(list, 2) << "\n";
}

void print_text(const Registry& registry, const std::vector<DeviceRecord>& devices) {
  for (const auto& d : devices) {
    std::cout << (d.selected ? "* " : "  ") << d.info.id() << "  " << d.info.name << "  ["
              << device_type_name(d.info.type) << "]  " << format_bytes(d.info.memory_total_bytes)
              << " total, " << format_bytes(d.info.memory_free_bytes) << " free  "
              << (d.usable ? "usable" : "unusable") << "\n";
    if (!d.settings.empty()) std::cout << "      settings: " << d.settings << "\n";
    if (!d.reason.empty()) std::cout << "      reason: " << d.reason << "\n";
  }
  // Plugins that have no devices to list still deserve their reason.
  for (const auto& p : registry.plugins()) {
    if (!has_device(devices, p.name) || p.state == PluginState::kShadowed) {
      std::cout << "  " << p.name << ": no devices (" << plugin_state_name(p.state) << ": "
                << p.reason << ")\n";
    }
  }
}

}  // namespace

int devices_command(const Args& args) {
  po::options_description options("options");
  options.add_options()("config", po::value<std::string>(), "YAML file")("json", "print JSON");
  po::variables_map values;
  if (auto exit =
          parse_args(args, "usage: switchyard devices [--config FILE] [--json]", options, values)) {
    return *exit;
  }
  std::optional<Config> config = load_config_or_report(values);
  if (!config) return kExitUsage;
  Registry registry = discover_isolated(config->runtime());
  Result<Choice> choice = Choice{};
  auto devices = probe_all_isolated(registry, config->runtime(), &choice);
  if (values.count("json") != 0) {
    print_json(registry, devices);
  } else {
    print_text(registry, devices);
    if (!choice.ok()) std::cout << "selection: " << choice.status().message() << "\n";
    if (choice.ok()) {
      if (!choice->note.empty()) std::cout << "selection: " << choice->note << "\n";
      if (!choice->fallback_note.empty())
        std::cout << "selection: " << choice->fallback_note << "\n";
      for (const auto& w : choice->warnings) std::cout << "warning: " << w << "\n";
    }
    print_communicator(std::cout, communicator_report(config->runtime()));
  }
  return kExitOk;
}

}  // namespace switchyard::cli
