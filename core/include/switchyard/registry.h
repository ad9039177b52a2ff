// Registry: finds plugin files, loads them, probes their devices and picks one.
//
// Discovery never fails as a whole: every file found gets a PluginRecord with a state and, unless
// usable, a reason that names the path, the dlerror text and the search path used.
#pragma once

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

struct DeviceRecord {
  DeviceInfo info;
  bool usable = false;
  std::string reason;  // why not usable: create failed, smoke op wrong, ...
  bool selected = false;
  std::shared_ptr<Device> device;  // the created device when usable
};

// SWITCHYARD_PLUGIN_PATH (colon-separated), then `config_paths`, then the default folder
// (<dir of the running executable>/../lib/switchyard, and the folder holding libswitchyard_core).
std::vector<std::filesystem::path> plugin_search_path(
    const std::vector<std::filesystem::path>& config_paths);

// Creates the device, runs a smoke op (add and matmul) and compares with the answer worked out on
// the host. OK means usable.
Status smoke_test(Device& device);

class Registry {
 public:
  // Scans every folder for libswitchyard-*.so, loads each (first of a name wins).
  static Registry discover(const std::vector<std::filesystem::path>& search_path);

  const std::vector<std::filesystem::path>& search_path() const { return search_path_; }
  const std::vector<PluginRecord>& plugins() const { return plugins_; }
  // The loaded plugin of that name, or null.
  std::shared_ptr<const Plugin> find(const std::string& name) const;

  // Enumerates, creates and smoke-tests every device of the named plugin; updates its record.
  std::vector<DeviceRecord> probe(const std::string& name, const OptionList& options);

 private:
  std::vector<std::filesystem::path> search_path_;
  std::vector<PluginRecord> plugins_;
};

struct Selection {
  std::shared_ptr<Device> device;      // null if nothing usable
  std::vector<DeviceRecord> devices;   // every device considered, in priority order
  std::vector<std::string> warnings;   // fallbacks and skipped backends, for the log
  bool first_choice = false;           // the first backend of the priority list was used
};

// Applies the priority list, `device`, `device_policy` and `fallback`. With fallback=error, any
// fallback is an error; with warn, each fallback adds a warning with its reason.
Result<Selection> select_device(Registry& registry, const RuntimeSettings& settings);

}  // namespace switchyard
