// Pieces shared by the CLI's commands: option parsing, config loading, discovery. (--json output
// is written with support/json_io.h.)
#pragma once

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/positional_options.hpp>
#include <boost/program_options/variables_map.hpp>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

#include "commands.h"
#include "switchyard/config.h"
#include "switchyard/inventory.h"
#include "switchyard/registry.h"

namespace switchyard::cli {

namespace po = boost::program_options;

// Exit codes shared by every command.
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;  // bad arguments or an invalid config

// Parses `args` against `options` (and `positional`, if any). On --help prints usage and returns
// kExitOk; on a parse error prints it and returns kExitUsage; otherwise std::nullopt.
std::optional<int> parse_args(const Args& args, const std::string& usage,
                              const po::options_description& options, po::variables_map& values,
                              const po::positional_options_description* positional = nullptr);

// The --set key=value arguments, in order (empty when none were given).
std::vector<std::string> set_overrides(const po::variables_map& values);

// Loads --config (or the defaults) and applies the environment overrides.
Result<Config> load_config(const po::variables_map& values,
                           const std::vector<std::string>& overrides = {});
// load_config for a command's start: an invalid file or variable is printed (file, line, column,
// key) and gives nullopt, on which the command exits with kExitUsage.
std::optional<Config> load_config_or_report(const po::variables_map& values,
                                            const std::vector<std::string>& overrides = {});

// Discovers plugins along the search path, each loaded in a child process first.
Registry discover_isolated(const RuntimeSettings& settings);

// "search path:" and one line per folder, each not searched with its reason:
//   /opt/plugins  (not searched: does not exist)
// and, when `hint` is given, a line "    hint: ..." with its advice for the reason.
void print_search_path(std::ostream& out, const Registry& registry,
                       const std::function<std::string(const std::string&)>& hint = {});

// The options device_create gets for one backend (RuntimeSettings::device_options).
OptionList backend_options(const RuntimeSettings& settings, const std::string& backend);

// Prints "switchyard: error: ..." ("switchyard: error: rank R of N: ..." under mpirun) to stderr
// in one write.
void print_error(const Status& status);

// Writes `text` and a newline to stderr in one write(2), so that no other output sharing the
// stream (mpirun's banners, another rank's lines, this process's stdout) lands inside the line.
void write_stderr_line(const std::string& text);

// What the selection said, to stderr: the fallback note ("switchyard: using onednn:0 (cuda: no
// driver)") and each warning ("switchyard: warning: ...").
void print_selection_messages(const std::string& fallback_note,
                              const std::vector<std::string>& warnings);

std::string format_bytes(uint64_t bytes);  // "1.5 GiB"

// The process's communicator as doctor and devices show it: which one, this rank and the number
// of ranks, where the MPI library is (or that it was not built), and why it could not be opened.
struct CommunicatorReport {
  std::string name;         // "single", "mpi"
  std::string description;  // "Open MPI v4.1.4"
  int rank = 0;
  int size = 1;
  std::string launcher;     // the launcher variable that is set, or ""
  std::string mpi_library;  // the library's path, or "" when no plugin folder has it
  std::string error;        // why the communicator could not be opened
};
// Opens the communicator (world_communicator): call it after any forking probe, since MPI starts
// threads.
CommunicatorReport communicator_report(const RuntimeSettings& settings);
// "communicator: mpi (Open MPI v4.1.4), rank 0 of 2" and the library line.
void print_communicator(std::ostream& out, const CommunicatorReport& report);

// Where `run` keeps the model when train.checkpoint is not set, relative to the current folder
// (not the YAML's, which may be an installed example): runs/<config name>/model.ckpt.
std::filesystem::path default_checkpoint_path(const Config& config);

// Runs the task `config` names (cmd_run.cpp): what `switchyard run` and `switchyard predict` share.
// Returns the exit code.
int run_loaded_config(const Config& config, const std::string& metrics_path,
                      const std::string& profile_path);

}  // namespace switchyard::cli
