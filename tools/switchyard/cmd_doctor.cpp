// switchyard doctor: probes every plugin in a child process, explains each failure with a concrete
// hint, and says which device the configuration would select.
//
// Exit codes: 0 the first backend of the priority list is usable; 1 only a lower one is;
// 2 nothing is usable, or the config is invalid.
#include <algorithm>
#include <iostream>

#include "cli_common.h"
#include "json/json_io.h"

namespace switchyard::cli {
namespace {

struct Hint {
  const char* pattern;
  const char* advice;
};

// Matched in order against a reason; the first match gives the advice.
const Hint kHints[] = {
    {"libcuda.so",
     "install the NVIDIA driver (it provides libcuda.so.1) or put its folder on "
     "LD_LIBRARY_PATH; on a machine without an NVIDIA GPU this is expected"},
    {"libvulkan", "install a Vulkan loader and driver (Debian: libvulkan1 mesa-vulkan-drivers)"},
    {"a loop of symbolic links",
     "a symbolic link on this path points back at itself: replace it with the real file or "
     "folder"},
    {"which does not exist",
     "a symbolic link on this path points at nothing: fix the link or remove it"},
    {"not a library", "only libswitchyard-<name>.so library files belong in a plugin folder"},
    {"does not exist",
     "create the folder or remove it from SWITCHYARD_PLUGIN_PATH / the YAML's plugin_paths"},
    {"over PATH_MAX", "use a shorter path (a symbolic link to the folder will do)"},
    {"is longer than the system allows", "use a shorter folder name"},
    {"not a folder", "plugin_paths and SWITCHYARD_PLUGIN_PATH name folders, not files"},
    {"cannot be read", "give this user read permission, or remove the entry from the path"},
    {"cannot be reached", "give this user permission to enter every folder on the path"},
    {"cannot open shared object file",
     "a library the plugin needs is missing: install it or add its folder to LD_LIBRARY_PATH "
     "(run `ldd` on the plugin file to see every missing one)"},
    {"undefined symbol", "the plugin was built against different library versions; rebuild it"},
    {"plugin ABI", "rebuild the plugin against this switchyard's plugin_abi.h"},
    {"descriptor of", "rebuild the plugin against this switchyard's plugin_abi.h"},
    {"does not export", "this file is not a switchyard plugin; remove it from the plugin folder"},
    {"crashed with signal",
     "the plugin crashed while loading or probing; remove it from the "
     "plugin folder or report the crash to its author"},
    {"did not finish", "the plugin hung while loading or probing; check its driver"},
    {"shadowed by", "two plugins share a name; remove one or reorder SWITCHYARD_PLUGIN_PATH"},
    {"smoke test", "the device computes wrong results; update its driver or exclude the backend"},
    {"file name says", "rename the file to libswitchyard-<name>.so after the name it reports"},
    {"no devices found", "the backend sees no device of its kind on this machine"},
    {"is a skeleton",
     "the template plugin is a starting point, not a backend: build yours from it"},
    {"Exec format error", "the file is not a loadable library for this machine; remove it"},
    {"invalid ELF header", "the file is not a loadable library for this machine; remove it"},
    {"file too short", "the file is not a loadable library for this machine; remove it"},
};

std::string hint_for(const std::string& reason) {
  for (const auto& hint : kHints) {
    if (reason.find(hint.pattern) != std::string::npos) return hint.advice;
  }
  return "run `switchyard plugins` and `switchyard devices` for details";
}

struct Report {
  std::vector<DeviceRecord> devices;
  Result<Choice> choice = Choice{};
  int exit_code = kExitUsage;
};

int exit_code_for(const Result<Choice>& choice, const std::vector<DeviceRecord>& devices,
                  const RuntimeSettings& settings, const Registry& registry) {
  if (!choice.ok() || choice->index < 0) return kExitUsage;
  // The first backend of the priority list that is present decides 0 versus 1.
  for (const auto& backend : settings.backends) {
    const bool present = std::any_of(registry.plugins().begin(), registry.plugins().end(),
                                     [&](const PluginRecord& p) { return p.name == backend; });
    if (!present && !settings.backends_from_config) continue;
    const bool usable = std::any_of(devices.begin(), devices.end(), [&](const DeviceRecord& d) {
      return d.info.backend == backend && d.usable;
    });
    return usable ? kExitOk : kExitFailure;
  }
  return kExitFailure;
}

void print_text(const Registry& registry, const RuntimeSettings& settings, const Report& report) {
  std::cout << "switchyard " << SWITCHYARD_VERSION << " doctor\n\npriority list:";
  for (const auto& b : settings.backends) std::cout << " " << b;
  std::cout << "  (device: " << settings.device << ")\n";
  print_search_path(std::cout, registry, hint_for);
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
        std::cout << "      reason: " << d.reason << "\n      hint: " << hint_for(d.reason) << "\n";
      }
    }
    if (!p.reason.empty()) {
      std::cout << "    reason: " << p.reason << "\n    hint: " << hint_for(p.reason) << "\n";
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

void print_json(const Registry& registry, const Report& report, const CommunicatorReport& comm) {
  detail::Json plugins = detail::Json::array();
  for (const auto& p : registry.plugins()) {
    plugins.push_back(detail::Json{{"name", p.name},
                                   {"path", p.path.string()},
                                   {"status", plugin_state_name(p.state)},
                                   {"version", p.version},
                                   {"reason", p.reason},
                                   {"hint", p.reason.empty() ? "" : hint_for(p.reason)}});
  }
  detail::Json folders = detail::Json::array();
  for (const auto& folder : registry.search_folders()) {
    folders.push_back(detail::Json{{"path", folder.path.string()},
                                   {"searched", folder.searched},
                                   {"plugin_files", folder.plugin_files},
                                   {"reason", folder.reason},
                                   {"hint", folder.searched ? "" : hint_for(folder.reason)}});
  }
  detail::Json devices = detail::Json::array();
  for (const auto& d : report.devices) {
    devices.push_back(detail::Json{{"id", d.info.id()},
                                   {"name", d.info.name},
                                   {"type", device_type_name(d.info.type)},
                                   {"usable", d.usable},
                                   {"reason", d.reason},
                                   {"hint", d.usable ? "" : hint_for(d.reason)},
                                   {"selected", d.selected}});
  }
  const detail::Json selected = report.choice.ok()
                                    ? detail::Json(report.devices[report.choice->index].info.id())
                                    : detail::Json(nullptr);
  const detail::Json document{{"search_path", std::move(folders)},
                              {"plugins", std::move(plugins)},
                              {"devices", std::move(devices)},
                              {"selected", selected},
                              {"communicator", detail::Json{{"name", comm.name},
                                                            {"description", comm.description},
                                                            {"rank", comm.rank},
                                                            {"size", comm.size},
                                                            {"launcher", comm.launcher},
                                                            {"mpi_library", comm.mpi_library},
                                                            {"error", comm.error}}},
                              {"exit_code", report.exit_code}};
  std::cout << detail::json_text(document, 2) << "\n";
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
  Registry registry = discover_isolated(settings);
  Report report;
  report.devices = probe_all_isolated(registry, settings, &report.choice);
  report.exit_code = exit_code_for(report.choice, report.devices, settings, registry);
  // After the forking probes: an MPI communicator starts threads.
  const CommunicatorReport communicator = communicator_report(settings);
  if (values.count("json") != 0) {
    print_json(registry, report, communicator);
  } else {
    print_text(registry, settings, report);
    std::cout << "\n";
    print_communicator(std::cout, communicator);
  }
  return report.exit_code;
}

}  // namespace switchyard::cli
