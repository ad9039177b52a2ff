// switchyard doctor: probes every plugin in a child process, explains each failure with a concrete
// hint, and says which device the configuration would select.
//
// Exit codes: 0 the first backend of the priority list is usable; 1 only a lower one is;
// 2 nothing is usable, or the config is invalid.
#include <algorithm>
#include <iostream>

#include "cli_common.h"

namespace switchyard::cli {
namespace {

void print_text(const RuntimeSettings& settings, const Inventory& report) {
  const Registry& registry = report.registry;
  std::cout << "switchyard " << SWITCHYARD_VERSION << " doctor\n\npriority list:";
  for (const auto& b : settings.backends) std::cout << " " << b;
  std::cout << "  (device: " << settings.device << ")\n";
  print_search_path(std::cout, registry, doctor_hint);
  std::cout << "\n";
  for (const auto& p : registry.plugins()) {
    std::cout << "[" << plugin_state_name(p.state) << "] " << p.name;
    if (!p.version.empty()) std::cout << " " << p.version;
    std::cout << "  (" << p.path.string() << ")\n";
    for (const auto& d : report.devices) {
      if (d.info.backend != p.name) continue;
      std::cout << "    " << d.info.id() << "  " << d.info.name << "  ["
                << device_type_name(d.info.type)
                << "]  smoke test: " << (d.usable ? "passed" : "FAILED") << "\n";
      if (!d.info.driver_version.empty() || !d.info.runtime_version.empty()) {
        std::cout << "      driver " << d.info.driver_version << ", runtime "
                  << d.info.runtime_version << "\n";
      }
      if (!d.info.details.empty()) std::cout << "      " << d.info.details << "\n";
      if (!d.usable) {
        std::cout << "      reason: " << d.reason << "\n      hint: " << doctor_hint(d.reason)
                  << "\n";
      }
    }
    if (!p.reason.empty()) {
      std::cout << "    reason: " << p.reason << "\n    hint: " << doctor_hint(p.reason) << "\n";
    }
  }
  std::cout << "\n";
  if (!report.choice.ok()) {
    std::cout << "selection: nothing usable: " << report.choice.status().message() << "\n";
  } else {
    const auto& d = report.devices[report.choice->index];
    std::cout << "selection: " << d.info.id() << " (" << d.info.name << ")\n";
    if (!report.choice->note.empty()) std::cout << "  " << report.choice->note << "\n";
    if (!report.choice->fallback_note.empty())
      std::cout << "  " << report.choice->fallback_note << "\n";
    for (const auto& w : report.choice->warnings) std::cout << "warning: " << w << "\n";
  }
}

}  // namespace

int doctor_command(const Args& args) {
  po::options_description options("options");
  options.add_options()("config", po::value<std::string>(), "YAML file")("json", "print JSON");
  po::variables_map values;
  if (auto exit =
          parse_args(args, "usage: switchyard doctor [--config FILE] [--json]", options, values)) {
    return *exit;
  }
  std::optional<Config> config = load_config_or_report(values);
  if (!config) return kExitUsage;
  const RuntimeSettings& settings = config->runtime();
  const Inventory report = take_inventory(settings, /*isolate=*/true);
  if (values.count("json") != 0) {
    std::cout << doctor_json(report, settings) << "\n";
  } else {
    print_text(settings, report);
  }
  return doctor_exit_code(report, settings);
}

}  // namespace switchyard::cli
