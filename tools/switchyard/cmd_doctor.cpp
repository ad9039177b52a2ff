// switchyard doctor: probes every plugin in a child process, explains each failure with a concrete
// hint, and says which device the configuration would select.
//
// Exit codes: 0 the first backend of the priority list is usable; 1 only a lower one is;
// 2 nothing is usable, or the config is invalid.
#include <algorithm>
#include <iostream>

#include "cli_common.h"
#include "support/json_io.h"

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

// doctor --json: the core's document (inventory.h) with the communicator before exit_code.
std::string doctor_json_with(const Inventory& report, const RuntimeSettings& settings,
                             const CommunicatorReport& comm) {
  detail::Json document = detail::parse_strict_json(doctor_json(report, settings));
  const detail::Json exit_code = document["exit_code"];
  document.erase("exit_code");
  document["communicator"] = detail::Json{
      {"name", comm.name},  {"description", comm.description}, {"rank", comm.rank},
      {"size", comm.size},  {"launcher", comm.launcher},       {"mpi_library", comm.mpi_library},
      {"error", comm.error}};
  document["exit_code"] = exit_code;
  return detail::json_text(document, 2);
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
  // After the forking probes: an MPI communicator starts threads.
  const CommunicatorReport communicator = communicator_report(settings);
  if (values.count("json") != 0) {
    std::cout << doctor_json_with(report, settings, communicator) << "\n";
  } else {
    print_text(settings, report);
    std::cout << "\n";
    print_communicator(std::cout, communicator);
  }
  return doctor_exit_code(report, settings);
}

}  // namespace switchyard::cli
