#include "cli_common.h"

#include "switchyard/communicator.h"

#include <unistd.h>
#include <boost/program_options/parsers.hpp>

#include <cerrno>
#include <cstdio>
#include <iostream>

namespace switchyard::cli {

std::optional<int> parse_args(const Args& args, const std::string& usage,
                              const po::options_description& options, po::variables_map& values,
                              const po::positional_options_description* positional) {
  po::options_description all(options);
  all.add_options()("help,h", "show this help");
  try {
    auto parser = po::command_line_parser(args).options(all);
    if (positional != nullptr) parser.positional(*positional);
    po::store(parser.run(), values);
    // --help before notify(): a command with required options must still explain itself.
    if (values.count("help") != 0) {
      std::cout << usage << "\n" << all;
      return kExitOk;
    }
    po::notify(values);
  } catch (const po::error& e) {
    std::cerr << "switchyard: " << e.what() << "\n\n" << usage << "\n" << all;
    return kExitUsage;
  }
  return std::nullopt;
}

std::vector<std::string> set_overrides(const po::variables_map& values) {
  if (values.count("set") == 0) return {};
  return values["set"].as<std::vector<std::string>>();
}

Result<Config> load_config(const po::variables_map& values,
                           const std::vector<std::string>& overrides) {
  Config config = Config::defaults();
  if (values.count("config") != 0) {
    SY_ASSIGN_OR_RETURN(config, Config::load_file(values["config"].as<std::string>(), overrides));
  } else if (!overrides.empty()) {
    // --set without a file: the overrides alone make the document.
    SY_ASSIGN_OR_RETURN(config, Config::load_string("", "<--set>", overrides));
  }
  SY_RETURN_IF_ERROR(config.runtime().apply_environment());
  return config;
}

std::optional<Config> load_config_or_report(const po::variables_map& values,
                                            const std::vector<std::string>& overrides) {
  Result<Config> config = load_config(values, overrides);
  if (!config.ok()) {
    print_error(config.status());
    return std::nullopt;
  }
  return std::move(*config);
}

CommunicatorReport communicator_report(const RuntimeSettings& settings) {
  CommunicatorReport report;
  const auto search_path = plugin_search_path(settings.plugin_paths);
  for (const auto& folder : search_path) {
    std::error_code error;
    const auto path = folder / "libswitchyard_comm-mpi.so";
    if (std::filesystem::exists(path, error)) {
      report.mpi_library = path.string();
      break;
    }
  }
  report.launcher = launcher_variable();
  Result<std::shared_ptr<Communicator>> communicator = world_communicator(search_path);
  if (!communicator.ok()) {
    report.name = "none";
    report.error = communicator.status().message();
    return report;
  }
  report.name = (*communicator)->name();
  report.description = (*communicator)->description();
  report.rank = (*communicator)->rank();
  report.size = (*communicator)->size();
  return report;
}

void print_communicator(std::ostream& out, const CommunicatorReport& report) {
  out << "communicator: " << report.name;
  if (!report.description.empty()) out << " (" << report.description << ")";
  out << ", rank " << report.rank << " of " << report.size;
  out << (report.launcher.empty() ? " (no MPI launcher started this process)"
                                  : " (launcher: " + report.launcher + " is set)")
      << "\n";
  out << "  MPI library: "
      << (report.mpi_library.empty()
              ? std::string("not built (configure with openmpi-bin and libopenmpi-dev installed)")
              : report.mpi_library + " (loaded only under mpirun)")
      << "\n";
  if (!report.error.empty()) out << "  error: " << report.error << "\n";
}

Registry discover_isolated(const RuntimeSettings& settings) {
  DiscoverOptions options;
  options.isolate = true;
  return Registry::discover(plugin_search_path(settings.plugin_paths), options);
}

void print_search_path(std::ostream& out, const Registry& registry,
                       const std::function<std::string(const std::string&)>& hint) {
  out << "search path:\n";
  for (const auto& folder : registry.search_folders()) {
    out << "  " << shown_path(folder.path);
    if (folder.searched) {
      out << "\n";
      continue;
    }
    out << "  (not searched: " << folder.reason << ")\n";
    if (hint) out << "    hint: " << hint(folder.reason) << "\n";
  }
}

OptionList backend_options(const RuntimeSettings& settings, const std::string& backend) {
  return settings.device_options(backend);
}

void print_error(const Status& status) {
  // Under mpirun every rank may fail: say which one.
  const std::shared_ptr<Communicator> communicator = current_communicator();
  std::string line = "switchyard: error: ";
  if (communicator->size() > 1) {
    line += "rank " + std::to_string(communicator->rank()) + " of " +
            std::to_string(communicator->size()) + ": ";
  }
  write_stderr_line(line + status.message());
}

void write_stderr_line(const std::string& text) {
  // One write(2) of the whole line: under mpirun the launcher forwards a rank's stderr in the
  // chunks it reads, and its own MPI_ABORT banner must not land inside ours (a line written in
  // pieces, as std::cerr's unit buffering does, was split that way).
  std::cerr.flush();
  const std::string line = text + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
}

void print_selection_messages(const std::string& fallback_note,
                              const std::vector<std::string>& warnings) {
  if (!fallback_note.empty()) write_stderr_line("switchyard: " + fallback_note);
  for (const auto& warning : warnings) write_stderr_line("switchyard: warning: " + warning);
}

std::string format_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return buffer;
}

std::filesystem::path default_checkpoint_path(const Config& config) {
  const std::string stem = std::filesystem::path(config.file()).stem().string();
  return std::filesystem::path("runs") / (stem.empty() || stem.front() == '<' ? "run" : stem) /
         "model.ckpt";
}

}  // namespace switchyard::cli
