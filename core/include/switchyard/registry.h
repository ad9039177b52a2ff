// Registry: finds plugin files, loads them, probes their devices and picks one.
//
// Discovery never fails as a whole: every file found gets a PluginRecord with a state and, unless
// usable, a reason that names the path, the dlerror text and the search path used.
//
// Threads: a Registry's const members may be called from any number of threads at once; probe()
// and probe_isolated() update its records and need it to itself. The devices it hands out may be
// shared (device.h). With DiscoverOptions::isolate it forks, which is safe only while the process
// has one thread.
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "switchyard/config.h"
#include "switchyard/device.h"
#include "switchyard/status.h"

namespace switchyard {

class Plugin;

enum class PluginState {
  kLoaded,    // loaded and ABI accepted; devices not probed yet
  kRejected,  // could not be loaded, or its entry/ABI was wrong
  kShadowed,  // a plugin with the same name was found earlier in the search path
  kUnusable,  // loaded, but no device passed the probe
  kUsable,    // at least one device passed the probe
};
const char* plugin_state_name(PluginState state);

struct PluginRecord {
  std::string name;  // from the descriptor, or from the file name when loading failed
  std::filesystem::path path;
  PluginState state = PluginState::kRejected;
  std::string reason;  // empty when loaded/usable
  std::string version;
  std::string description;
  std::shared_ptr<const Plugin> plugin;  // null unless loaded
};

// One folder of the search path. A folder that cannot be searched is kept with its reason, so that
// `plugins`, `devices --json` and `doctor` can say why nothing was found there.
struct SearchFolder {
  std::filesystem::path path;
  bool searched = false;
  // Why it was not searched: "does not exist", "a loop of symbolic links (...)", "not a folder
  // (a regular file)", "the path is N bytes long, over PATH_MAX (...)", "cannot be read: ...".
  std::string reason;
  std::size_t plugin_files = 0;  // libswitchyard-*.so files found in it
};

struct DeviceRecord {
  DeviceInfo info;
  bool usable = false;
  std::string reason;  // why not usable: create failed, smoke op wrong, ...
  bool selected = false;
  std::string settings;            // Device::settings() of the created device; "" if none
  std::shared_ptr<Device> device;  // the created device when usable
};

// SWITCHYARD_PLUGIN_PATH (colon-separated), then `config_paths`, then the default folder
// (<dir of the running executable>/../lib/switchyard, and the folder holding libswitchyard_core).
std::vector<std::filesystem::path> plugin_search_path(
    const std::vector<std::filesystem::path>& config_paths);

// Creates the device, runs a smoke op (add and matmul) and compares with the answer worked out on
// the host. OK means usable.
Status smoke_test(Device& device);

struct DiscoverOptions {
  // Load each plugin in a forked child first, and load it in this process only if the child
  // survived. Costs a fork per plugin; only safe while the process is single-threaded (the CLI).
  bool isolate = false;
  int isolate_timeout_ms = 20000;
};

class Registry {
 public:
  // Scans every folder for libswitchyard-*.so, loads each (first of a name wins).
  static Registry discover(const std::vector<std::filesystem::path>& search_path,
                           const DiscoverOptions& options = {});

  const std::vector<std::filesystem::path>& search_path() const { return search_path_; }
  // The search path's folders in order, each with whether it could be searched and why not.
  const std::vector<SearchFolder>& search_folders() const { return search_folders_; }
  const std::vector<PluginRecord>& plugins() const { return plugins_; }
  // The loaded plugin of that name, or null.
  std::shared_ptr<const Plugin> find(const std::string& name) const;

  // Enumerates, creates and smoke-tests every device of the named plugin; updates its record.
  // Unless `keep_devices`, the created devices are released again (records keep the verdict).
  std::vector<DeviceRecord> probe(const std::string& name, const OptionList& options,
                                  bool keep_devices = true);
  // The same, run in a forked child (see DiscoverOptions::isolate); records carry no devices.
  std::vector<DeviceRecord> probe_isolated(const std::string& name, const OptionList& options,
                                           int timeout_ms = 60000);

 private:
  std::vector<std::filesystem::path> search_path_;
  std::vector<SearchFolder> search_folders_;
  std::vector<PluginRecord> plugins_;
};

struct Selection {
  std::shared_ptr<Device> device;     // null if nothing usable
  std::vector<DeviceRecord> devices;  // every device considered, in priority order
  std::vector<std::string> warnings;  // fallbacks from a named device, for the log
  std::string fallback_note;          // Choice::fallback_note
  bool first_choice = false;          // the first backend of the priority list was used
  std::string note;                   // how the device policy chose, when that is worth a line
};

// Applies the SWITCHYARD_* variables (unless settings.use_environment is false), then the
// priority list, `device`, `device_policy` and `fallback`. With fallback=error, any
// fallback is an error that names every skipped backend and its full reason; with warn, a named
// device that is not usable adds a warning with the reason, and `auto` landing below the first
// backend of the list sets fallback_note, one short line. Probes in this process; `devices` and
// `doctor` use choose_device on isolated probe records instead.
Result<Selection> select_device(Registry& registry, const RuntimeSettings& settings);

// The device of the oracle backend (`reference`: host memory, every op of the op set), where ops
// that the selected device lacks fall back. Reuses the selection's device when it is one; null
// when the oracle plugin is absent or unusable. The runtime is the one layer that may name it.
std::shared_ptr<Device> open_oracle_device(Registry& registry, const Selection& selection,
                                           const RuntimeSettings& settings);

// The pure selection rule over already-probed devices (all backends, in any order). Returns the
// index into `devices` of the chosen one and fills `warnings`; sets `first_choice`.
struct Choice {
  int index = -1;
  bool first_choice = false;
  std::vector<std::string> warnings;
  // fallback: warn and `auto` chose below the first backend of the list: the device and a few
  // words per skipped backend, "using onednn:0 (cuda: no driver; vulkan: only an emulated
  // device)". `doctor` and `devices` show the full reasons. Empty otherwise.
  std::string fallback_note;
  std::string note;  // device_policy local_rank: which rank picked which device, for the log
};
Result<Choice> choose_device(const std::vector<DeviceRecord>& devices,
                             const std::vector<PluginRecord>& plugins,
                             const RuntimeSettings& settings);

}  // namespace switchyard

#pragma GCC visibility pop
