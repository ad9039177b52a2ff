// Inventory: the plugins found, their devices probed and the one the settings select, as data.
// `switchyard devices --json` and `doctor --json` print it; the C API (switchyard.h) and the Python
// package return the same documents.
//
// Threads: an Inventory is a plain value; making one probes devices through a Registry (registry.h)
// and may run on any thread, but with isolation it forks (see below).
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <filesystem>
#include <string>
#include <vector>

#include "switchyard/config.h"
#include "switchyard/registry.h"

namespace switchyard {

struct Inventory {
  Registry registry;
  std::vector<DeviceRecord> devices;  // every device of every loaded plugin
  Result<Choice> choice = Choice{};   // the selection's verdict (an error when nothing is usable)
};

// Discovers the plugins on the settings' search path and probes every device. With `isolate`, each
// plugin is loaded and probed in a forked child first, so that a crashing plugin becomes a reason;
// only safe while the process is single-threaded (the CLI). Embedding hosts (Python, Dask workers)
// probe in process.
Inventory take_inventory(const RuntimeSettings& settings, bool isolate);

// `devices --json`: one object per device (backend, id, name, type, memory, usable, reason,
// settings, selected), then one per plugin without a device to show and one per search folder that
// could not be searched, so that no reason is lost.
std::string devices_json(const Inventory& inventory, int indent = 2);

// `doctor --json`: search_path, plugins, devices (each unusable one with a hint), selected and
// exit_code (doctor_exit_code).
std::string doctor_json(const Inventory& inventory, const RuntimeSettings& settings,
                        int indent = 2);

// doctor's exit code: 0 when the first backend of the priority list is usable, 1 when only a
// lower one is, 2 when nothing is.
int doctor_exit_code(const Inventory& inventory, const RuntimeSettings& settings);

// Concrete advice for a plugin, device or folder reason ("install the NVIDIA driver ...").
std::string doctor_hint(const std::string& reason);

// A path as messages show it: in full up to 300 characters, otherwise its start and end around
// "...", so that a hostile path cannot flood the terminal.
std::string shown_path(const std::filesystem::path& path);

// "plugin folder '/opt/plugins' not searched: does not exist".
std::string folder_not_searched_text(const SearchFolder& folder);

}  // namespace switchyard

#pragma GCC visibility pop
