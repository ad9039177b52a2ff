// Inventory: discovery, probing and selection as data, and the JSON of `devices` and `doctor`.
#include "switchyard/inventory.h"

#include <algorithm>

#include "support/json_io.h"

namespace switchyard {
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
    {"over NAME_MAX", "use a shorter name for that folder or file"},
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

std::string hint_text(const std::string& reason) {
  for (const auto& hint : kHints) {
    if (reason.find(hint.pattern) != std::string::npos) return hint.advice;
  }
  return "run `switchyard plugins` and `switchyard devices` for details";
}

bool has_device(const std::vector<DeviceRecord>& devices, const std::string& backend) {
  for (const auto& d : devices) {
    if (d.info.backend == backend) return true;
  }
  return false;
}

}  // namespace

std::string doctor_hint(const std::string& reason) {
  return hint_text(reason);
}

std::string shown_path(const std::filesystem::path& path) {
  constexpr size_t kLimit = 300;
  const std::string text = path.string();
  if (text.size() <= kLimit) return text;
  return text.substr(0, 150) + "..." + text.substr(text.size() - 100) + " (" +
         std::to_string(text.size()) + " characters)";
}

std::string folder_not_searched_text(const SearchFolder& folder) {
  return "plugin folder '" + shown_path(folder.path) + "' not searched: " + folder.reason;
}

Inventory take_inventory(const RuntimeSettings& settings, bool isolate) {
  DiscoverOptions options;
  options.isolate = isolate;
  Inventory inventory{
      Registry::discover(plugin_search_path(settings.plugin_paths), options), {}, Choice{}};
  std::vector<std::string> names;
  for (const auto& record : inventory.registry.plugins()) {
    if (record.plugin != nullptr) names.push_back(record.name);
  }
  for (const auto& name : names) {
    const OptionList backend_options = settings.device_options(name);
    auto found = isolate ? inventory.registry.probe_isolated(name, backend_options)
                         : inventory.registry.probe(name, backend_options, false);
    inventory.devices.insert(inventory.devices.end(), found.begin(), found.end());
  }
  inventory.choice = choose_device(inventory.devices, inventory.registry.plugins(), settings);
  if (inventory.choice.ok() && inventory.choice->index >= 0) {
    inventory.devices[static_cast<size_t>(inventory.choice->index)].selected = true;
  }
  return inventory;
}

std::string devices_json(const Inventory& inventory, int indent) {
  const Registry& registry = inventory.registry;
  const std::vector<DeviceRecord>& devices = inventory.devices;
  detail::Json list = detail::Json::array();
  for (const auto& d : devices) {
    list.push_back(detail::Json{{"backend", d.info.backend},
                                {"id", d.info.id()},
                                {"name", d.info.name},
                                {"type", device_type_name(d.info.type)},
                                {"memory_total_bytes", d.info.memory_total_bytes},
                                {"memory_free_bytes", d.info.memory_free_bytes},
                                {"usable", d.usable},
                                {"reason", d.reason},
                                {"settings", d.settings},
                                {"details", d.info.details},
                                {"selected", d.selected}});
  }
  for (const auto& p : registry.plugins()) {
    if (has_device(devices, p.name) && p.state != PluginState::kShadowed) continue;
    list.push_back(
        detail::Json{{"backend", p.name},
                     {"id", p.name},
                     {"name", ""},
                     {"type", "none"},
                     {"memory_total_bytes", 0},
                     {"memory_free_bytes", 0},
                     {"usable", false},
                     {"reason", std::string(plugin_state_name(p.state)) + ": " + p.reason},
                     {"settings", ""},
                     {"details", ""},
                     {"selected", false}});
  }
  // A search folder that could not be searched gets an entry too: it may be why a backend is
  // missing above.
  for (const auto& folder : registry.search_folders()) {
    if (folder.searched) continue;
    list.push_back(detail::Json{{"backend", ""},
                                {"id", folder.path.string()},
                                {"name", ""},
                                {"type", "plugin folder"},
                                {"memory_total_bytes", 0},
                                {"memory_free_bytes", 0},
                                {"usable", false},
                                {"reason", folder_not_searched_text(folder)},
                                {"settings", ""},
                                {"details", ""},
                                {"selected", false}});
  }
  return detail::json_text(list, indent);
}

int doctor_exit_code(const Inventory& inventory, const RuntimeSettings& settings) {
  const Result<Choice>& choice = inventory.choice;
  const std::vector<DeviceRecord>& devices = inventory.devices;
  const Registry& registry = inventory.registry;
  if (!choice.ok() || choice->index < 0) return 2;
  // The first backend of the priority list that is present decides 0 versus 1.
  for (const auto& backend : settings.backends) {
    const bool present = std::any_of(registry.plugins().begin(), registry.plugins().end(),
                                     [&](const PluginRecord& p) { return p.name == backend; });
    if (!present && !settings.backends_from_config) continue;
    const bool usable = std::any_of(devices.begin(), devices.end(), [&](const DeviceRecord& d) {
      return d.info.backend == backend && d.usable;
    });
    return usable ? 0 : 1;
  }
  return 1;
}

std::string doctor_json(const Inventory& inventory, const RuntimeSettings& settings, int indent) {
  const Registry& registry = inventory.registry;
  detail::Json plugins = detail::Json::array();
  for (const auto& p : registry.plugins()) {
    plugins.push_back(detail::Json{{"name", p.name},
                                   {"path", p.path.string()},
                                   {"status", plugin_state_name(p.state)},
                                   {"version", p.version},
                                   {"reason", p.reason},
                                   {"hint", p.reason.empty() ? "" : hint_text(p.reason)}});
  }
  detail::Json folders = detail::Json::array();
  for (const auto& folder : registry.search_folders()) {
    folders.push_back(detail::Json{{"path", folder.path.string()},
                                   {"searched", folder.searched},
                                   {"plugin_files", folder.plugin_files},
                                   {"reason", folder.reason},
                                   {"hint", folder.searched ? "" : hint_text(folder.reason)}});
  }
  detail::Json devices = detail::Json::array();
  for (const auto& d : inventory.devices) {
    devices.push_back(detail::Json{{"id", d.info.id()},
                                   {"name", d.info.name},
                                   {"type", device_type_name(d.info.type)},
                                   {"usable", d.usable},
                                   {"reason", d.reason},
                                   {"hint", d.usable ? "" : hint_text(d.reason)},
                                   {"selected", d.selected}});
  }
  const detail::Json selected =
      inventory.choice.ok() ? detail::Json(inventory.devices[inventory.choice->index].info.id())
                            : detail::Json(nullptr);
  const detail::Json document{{"search_path", std::move(folders)},
                              {"plugins", std::move(plugins)},
                              {"devices", std::move(devices)},
                              {"selected", selected},
                              {"exit_code", doctor_exit_code(inventory, settings)}};
  return detail::json_text(document, indent);
}

}  // namespace switchyard
