// switchyard devices: every device of every loaded plugin, probed, with the one the config selects.
#include <iostream>

#include "cli_common.h"

namespace switchyard::cli {
namespace {

bool has_device(const std::vector<DeviceRecord>& devices, const std::string& backend) {
  for (const auto& d : devices) {
    if (d.info.backend == backend) return true;
  }
  return false;
}

void print_text(const Registry& registry, const std::vector<DeviceRecord>& devices) {
  for (const auto& d : devices) {
    std::cout << (d.selected ? "* " : "  ") << d.info.id() << "  " << d.info.name << "  ["
              << device_type_name(d.info.type) << "]  " << format_bytes(d.info.memory_total_bytes)
              << " total, " << format_bytes(d.info.memory_free_bytes) << " free  "
              << (d.usable ? "usable" : "unusable") << "\n";
    if (!d.settings.empty()) std::cout << "      settings: " << d.settings << "\n";
    if (!d.info.details.empty()) std::cout << "      details: " << d.info.details << "\n";
    if (!d.reason.empty()) std::cout << "      reason: " << d.reason << "\n";
  }
  // Plugins that have no devices to list still deserve their reason.
  for (const auto& p : registry.plugins()) {
    if (!has_device(devices, p.name) || p.state == PluginState::kShadowed) {
      std::cout << "  " << p.name << ": no devices (" << plugin_state_name(p.state) << ": "
                << p.reason << ")\n";
    }
  }
  // So do search folders that could not be searched: one may be why a backend is missing above
  // (as in --json).
  for (const auto& folder : registry.search_folders()) {
    if (!folder.searched) std::cout << "  " << folder_not_searched_text(folder) << "\n";
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
  const Inventory inventory = take_inventory(config->runtime(), /*isolate=*/true);
  const Result<Choice>& choice = inventory.choice;
  if (values.count("json") != 0) {
    std::cout << devices_json(inventory) << "\n";
  } else {
    print_text(inventory.registry, inventory.devices);
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
