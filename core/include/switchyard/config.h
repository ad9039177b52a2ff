// Config: the YAML file that says which backends to use and what to run.
//
// A document is validated against one schema (core/src/runtime/config_schema.cpp) before anything
// reads it. Every error names file, line, column and the dotted key, and says what was expected;
// an unknown key suggests the closest known one; a duplicate key is an error.
//
// Threads: a Config and the ConfigNodes read from it are used by one thread at a time (yaml-cpp's
// nodes promise nothing more), and copies share one document, so copy the settings a thread needs
// (RuntimeSettings and the *Settings structs are plain values) rather than the Config.
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "switchyard/device.h"
#include "switchyard/status.h"

namespace switchyard {

// How a device is chosen among the usable devices of the chosen backend: the first; the one with
// the most free memory; or, for one process per device (MPI ranks, torchrun workers, Spark or Ray
// executors on one machine), device number local_rank modulo the number of devices.
enum class DevicePolicy { kFirst, kMostFreeMemory, kLocalRank };

// This process's rank among the processes on its machine, and the variable it was read from.
struct LocalRank {
  uint32_t rank = 0;
  std::string source;  // "OMPI_COMM_WORLD_LOCAL_RANK", ...; "" when no variable was set
};

// The variables that carry a local rank, in the order they are read: ours, then torchrun's,
// Open MPI's, MPICH's and Slurm's.
const std::vector<std::string>& local_rank_variables();

// What the runtime needs to pick a device. Filled from the document, then from the environment.
struct RuntimeSettings {
  std::vector<std::string> backends = {"cuda", "vulkan", "onednn", "reference"};
  bool backends_from_config = false;  // false: the default list above is in force
  std::string device = "auto";        // auto | cpu | <backend> | <backend>:<index>
  DevicePolicy device_policy = DevicePolicy::kFirst;
  LocalRank local_rank;  // read from the environment when device_policy is kLocalRank
  FallbackPolicy fallback = FallbackPolicy::kWarn;
  std::vector<std::filesystem::path> plugin_paths;
  std::map<std::string, OptionList> backend_options;  // per backend, passed to device_create
  bool deterministic = false;
  uint64_t seed = 0;
  // The SWITCHYARD_* variables apply by default: open_run_device and select_device call
  // apply_environment on their copy of these settings first, so a host application honours
  // SWITCHYARD_BACKENDS, SWITCHYARD_DEVICE and SWITCHYARD_FALLBACK as the CLI does. A host that
  // decides the device alone sets this to false.
  bool use_environment = true;
  // What apply_environment changed, one "NAME=value" per variable that was set, for the log
  // (RunDevice::environment); empty when none was.
  std::vector<std::string> environment_applied;

  // What device_create gets for `backend`: its backend_options, plus the standard option
  // deterministic=true when `deterministic` is set (it replaces a per-backend value, so the
  // top-level promise holds). Every place that opens a device uses this list.
  OptionList device_options(const std::string& backend) const;

  // Applies SWITCHYARD_BACKENDS, SWITCHYARD_DEVICE and SWITCHYARD_FALLBACK, and with the
  // local_rank policy reads the first of local_rank_variables() that is set. Bad values are errors
  // that name the variable. Applying twice gives the same settings.
  Status apply_environment();

  // A copy with apply_environment() applied when use_environment is set (and use_environment
  // cleared, so that applying is done once); an unchanged copy otherwise.
  Result<RuntimeSettings> with_environment() const;
};

struct SourceLocation {
  std::string file;
  int line = 0;                   // 1-based; 0 = unknown
  int column = 0;                 // 1-based
  std::string to_string() const;  // "configs/a.yaml:3:7"
};

// A read-only view of one validated node. Accessors return errors with the node's location, but
// after validation the types are known to be right.
class ConfigNode {
 public:
  ConfigNode();
  ~ConfigNode();
  ConfigNode(const ConfigNode&);
  ConfigNode& operator=(const ConfigNode&);

  bool valid() const;  // false for a key that is absent
  bool is_map() const;
  bool is_sequence() const;
  bool is_scalar() const;
  const std::string& key_path() const;  // "train.epochs"
  SourceLocation location() const;

  ConfigNode operator[](const std::string& key) const;  // invalid node if absent
  std::vector<ConfigNode> items() const;                // sequence elements
  std::vector<std::string> keys() const;                // map keys in document order

  Result<std::string> as_string() const;
  Result<int64_t> as_int() const;
  Result<double> as_double() const;
  Result<bool> as_bool() const;

  // Convenience: the value or `fallback` when the key is absent (errors still reported).
  Result<std::string> string_or(const std::string& key, const std::string& fallback) const;
  Result<int64_t> int_or(const std::string& key, int64_t fallback) const;
  Result<double> double_or(const std::string& key, double fallback) const;
  Result<bool> bool_or(const std::string& key, bool fallback) const;

  // An INVALID_ARGUMENT status "file:line:col: key 'a.b': <message>".
  Status error(const std::string& message) const;

 private:
  friend class Config;
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

class Config {
 public:
  // Parses and validates. `overrides` are "dotted.key=value" strings (the CLI's --set), applied
  // before validation; a value is parsed as YAML ("[a, b]" is a list).
  static Result<Config> load_file(const std::filesystem::path& path,
                                  const std::vector<std::string>& overrides = {});
  static Result<Config> load_string(const std::string& text, const std::string& display_name,
                                    const std::vector<std::string>& overrides = {});
  // The same with relative paths resolved against `directory` instead of the current folder.
  static Result<Config> load_string(const std::string& text, const std::string& display_name,
                                    const std::filesystem::path& directory,
                                    const std::vector<std::string>& overrides);
  // An empty document: defaults everywhere.
  static Config defaults();

  const RuntimeSettings& runtime() const { return runtime_; }
  RuntimeSettings& runtime() { return runtime_; }
  ConfigNode root() const { return root_; }
  const std::string& file() const { return file_; }
  std::filesystem::path directory() const;  // relative paths in the file resolve against this

 private:
  // The shared body of load_file and load_string: relative paths resolve against `directory`.
  static Result<Config> load_text(const std::string& text, const std::string& display_name,
                                  const std::filesystem::path& directory,
                                  const std::vector<std::string>& overrides);

  RuntimeSettings runtime_;
  ConfigNode root_;
  std::string file_;
};

// The names a config may use in `backends`, `device` and `backend_options`: the backends that have
// a plugin in this repository (reference, onednn, vulkan, cuda, template; named even where one is
// not built) plus, by file name, every plugin found on SWITCHYARD_PLUGIN_PATH, in `plugin_paths`
// (a config's own, which is validated with them) and in the default plugin folders.
std::vector<std::string> known_backend_names(
    const std::vector<std::filesystem::path>& plugin_paths = {});

}  // namespace switchyard

#pragma GCC visibility pop
