// RuntimeSettings from a validated document (internal).
#pragma once

#include <filesystem>

#include "switchyard/config.h"

namespace switchyard {

// Reads the top-level runtime keys (backends, device, device_policy, fallback, plugin_paths,
// backend_options, deterministic, seed) of a validated document into `settings`. Relative plugin
// paths are resolved against `directory`.
Status fill_runtime_settings(const ConfigNode& root, const std::filesystem::path& directory,
                             RuntimeSettings& settings);

}  // namespace switchyard
