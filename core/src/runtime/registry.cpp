#include "switchyard/registry.h"

#include <algorithm>
#include <sstream>

#include "isolation.h"
#include "runtime/plugin_files.h"
#include "switchyard/inventory.h"  // shown_path
#include "switchyard/plugin.h"

namespace switchyard {
namespace {

std::string join_paths(const std::vector<std::filesystem::path>& paths) {
  std::string out;
  for (const auto& path : paths) out += (out.empty() ? "" : ":") + shown_path(path);
  return out.empty() ? "(empty)" : out;
}

PluginRecord load_record(const std::filesystem::path& path, const DiscoverOptions& options,
                         const std::string& search_path_text) {
  PluginRecord record;
  record.name = plugin_name_from_path(path);
  record.path = path;
  // A file dlopen cannot even open (a loop of links, a folder) is named as such; dlopen's text
  // for it reads like a missing dependency.
  if (const std::string problem = detail::plugin_file_problem(path); !problem.empty()) {
    record.reason = "'" + shown_path(path) + "': " + problem;
    return record;
  }
  if (options.isolate) {
    auto child = detail::run_isolated(
        [&path] {
          auto plugin = Plugin::load(path);
          return plugin.ok() ? std::string("ok") : plugin.status().to_string();
        },
        options.isolate_timeout_ms);
    if (!child.ok() || *child != "ok") {
      const std::string why = child.ok() ? *child : "loading " + child.status().message();
      record.reason = why + " [" + shown_path(path) + "; search path " + search_path_text + "]";
      return record;
    }
  }
  auto plugin = Plugin::load(path);
  if (!plugin.ok()) {
    record.reason = plugin.status().message() + " [search path " + search_path_text + "]";
    return record;
  }
  record.plugin = *plugin;
  record.state = PluginState::kLoaded;
  record.name = (*plugin)->name();
  record.version = (*plugin)->version();
  record.description = (*plugin)->description();
  return record;
}

}  // namespace

const char* plugin_state_name(PluginState state) {
  switch (state) {
    case PluginState::kLoaded:
      return "loaded";
    case PluginState::kRejected:
      return "rejected";
    case PluginState::kShadowed:
      return "shadowed";
    case PluginState::kUnusable:
      return "unusable";
    case PluginState::kUsable:
      return "usable";
  }
  return "unknown";
}

Registry Registry::discover(const std::vector<std::filesystem::path>& search_path,
                            const DiscoverOptions& options) {
  Registry registry;
  registry.search_path_ = search_path;
  const std::string search_path_text = join_paths(search_path);
  for (const auto& folder : search_path) {
    std::vector<std::filesystem::path> files;
    registry.search_folders_.push_back(detail::search_folder(folder, files));
    for (const auto& path : files) {
      const std::string name = plugin_name_from_path(path);
      auto first = std::find_if(registry.plugins_.begin(), registry.plugins_.end(),
                                [&](const PluginRecord& r) {
                                  return r.name == name && r.state != PluginState::kShadowed;
                                });
      if (first != registry.plugins_.end()) {
        PluginRecord shadowed;
        shadowed.name = name;
        shadowed.path = path;
        shadowed.state = PluginState::kShadowed;
        shadowed.reason =
            "shadowed by " + first->path.string() + ", found earlier in the search path";
        registry.plugins_.push_back(std::move(shadowed));
        continue;
      }
      registry.plugins_.push_back(load_record(path, options, search_path_text));
    }
  }
  return registry;
}

std::shared_ptr<const Plugin> Registry::find(const std::string& name) const {
  for (const auto& record : plugins_) {
    if (record.name == name && record.plugin != nullptr) return record.plugin;
  }
  return nullptr;
}

namespace {

// A plugin's statuses start with "<name>: " (Plugin::check). Reasons are shown after the backend or
// device name already ("cuda: no devices (unusable: ...)"), so the prefix would say it twice.
std::string without_name(const std::string& text, const std::string& name) {
  const std::string prefix = name + ": ";
  return text.rfind(prefix, 0) == 0 ? text.substr(prefix.size()) : text;
}

}  // namespace

std::vector<DeviceRecord> Registry::probe(const std::string& name, const OptionList& options,
                                          bool keep_devices) {
  std::vector<DeviceRecord> devices;
  auto record = std::find_if(plugins_.begin(), plugins_.end(), [&](const PluginRecord& r) {
    return r.name == name && r.plugin != nullptr;
  });
  if (record == plugins_.end()) return devices;
  auto count = record->plugin->device_count();
  if (!count.ok()) {
    record->state = PluginState::kUnusable;
    record->reason = without_name(count.status().message(), name);
    return devices;
  }
  if (*count == 0) {
    record->state = PluginState::kUnusable;
    record->reason = "no devices found";
    return devices;
  }
  bool any_usable = false;
  for (uint32_t index = 0; index < *count; ++index) {
    DeviceRecord device_record;
    auto info = record->plugin->device_info(index);
    if (!info.ok()) {
      device_record.info.backend = name;
      device_record.info.index = index;
      device_record.reason = without_name(info.status().message(), name);
      devices.push_back(std::move(device_record));
      continue;
    }
    device_record.info = *info;
    auto device = Device::create(record->plugin, index, options);
    if (device.ok()) device_record.settings = (*device)->settings();
    Status verdict = device.ok() ? smoke_test(**device) : device.status();
    device_record.usable = verdict.ok();
    if (device_record.usable) {
      any_usable = true;
      if (keep_devices) device_record.device = *device;
    } else {
      device_record.reason = verdict.to_string();
    }
    devices.push_back(std::move(device_record));
  }
  record->state = any_usable ? PluginState::kUsable : PluginState::kUnusable;
  record->reason = any_usable ? "" : "no device passed the probe";
  return devices;
}

}  // namespace switchyard
