// RuntimeSettings: filled from the document, then from SWITCHYARD_* environment variables.
#include "runtime/config_runtime.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "runtime/config_values.h"
#include "switchyard/plugin.h"
#include "switchyard/registry.h"

namespace switchyard {
namespace {

Result<DevicePolicy> parse_device_policy(const ConfigNode& node) {
  SY_ASSIGN_OR_RETURN(const std::string text, node.as_string());
  if (text == "first") return DevicePolicy::kFirst;
  if (text == "most_free_memory") return DevicePolicy::kMostFreeMemory;
  if (text == "local_rank") return DevicePolicy::kLocalRank;
  return node.error("unknown value '" + text +
                    "', expected one of: first, most_free_memory, local_rank");
}

std::optional<FallbackPolicy> fallback_from_text(const std::string& text) {
  if (text == "warn") return FallbackPolicy::kWarn;
  if (text == "error") return FallbackPolicy::kError;
  if (text == "silent") return FallbackPolicy::kSilent;
  return std::nullopt;
}

Status fill_backend_options(const ConfigNode& node, RuntimeSettings& settings) {
  for (const std::string& backend : node.keys()) {
    OptionList options;
    const ConfigNode backend_node = node[backend];
    for (const std::string& key : backend_node.keys()) {
      SY_ASSIGN_OR_RETURN(std::string value, backend_node[key].as_string());
      options.emplace_back(key, std::move(value));
    }
    settings.backend_options[backend] = std::move(options);
  }
  return ok_status();
}

Status fill_lists(const ConfigNode& root, const std::filesystem::path& directory,
                  RuntimeSettings& settings) {
  if (const ConfigNode backends = root["backends"]; backends.is_sequence()) {
    settings.backends.clear();
    for (const ConfigNode& item : backends.items()) {
      SY_ASSIGN_OR_RETURN(std::string name, item.as_string());
      settings.backends.push_back(std::move(name));
    }
    settings.backends_from_config = true;
  }
  for (const ConfigNode& item : root["plugin_paths"].items()) {
    SY_ASSIGN_OR_RETURN(const std::string text, item.as_string());
    const std::filesystem::path path(text);
    settings.plugin_paths.push_back(path.is_absolute() ? path
                                                       : (directory / path).lexically_normal());
  }
  return fill_backend_options(root["backend_options"], settings);
}

// SWITCHYARD_BACKENDS: names separated by commas or colons, blanks around them ignored.
Result<std::vector<std::string>> parse_backend_list(
    const std::string& variable, const std::string& text,
    const std::vector<std::filesystem::path>& plugin_paths) {
  std::vector<std::string> names;
  std::string current;
  auto flush = [&]() -> Status {
    const std::size_t first = current.find_first_not_of(" \t");
    const std::string name =
        first == std::string::npos
            ? ""
            : current.substr(first, current.find_last_not_of(" \t") - first + 1);
    current.clear();
    if (name.empty()) return ok_status();
    const std::string problem = config_values::check_backend_name(name, plugin_paths);
    if (!problem.empty()) return invalid_argument(variable + "='" + text + "': " + problem);
    names.push_back(name);
    return ok_status();
  };
  for (const char c : text) {
    if (c == ',' || c == ':') {
      SY_RETURN_IF_ERROR(flush());
    } else {
      current += c;
    }
  }
  SY_RETURN_IF_ERROR(flush());
  return names;
}

std::string environment_value(const char* variable) {
  const char* value = std::getenv(variable);
  return value == nullptr ? "" : value;
}

// The first rank variable that is set; a value that is not a small non-negative integer is an
// error naming the variable (a launcher that sets it wrongly would otherwise put every process on
// device 0).
Result<LocalRank> read_local_rank() {
  for (const std::string& variable : local_rank_variables()) {
    const std::string text = environment_value(variable.c_str());
    if (text.empty()) continue;
    if (text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos) {
      return invalid_argument(variable + "='" + text +
                              "': expected the process's local rank, an integer >= 0 "
                              "(device_policy: local_rank)");
    }
    return LocalRank{static_cast<uint32_t>(std::stoul(text)), variable};
  }
  return LocalRank{};
}

}  // namespace

const std::vector<std::string>& local_rank_variables() {
  static const std::vector<std::string> variables = {"SWITCHYARD_LOCAL_RANK", "LOCAL_RANK",
                                                     "OMPI_COMM_WORLD_LOCAL_RANK",
                                                     "MPI_LOCALRANKID", "SLURM_LOCALID"};
  return variables;
}

std::vector<std::string> known_backend_names(
    const std::vector<std::filesystem::path>& plugin_paths) {
  std::vector<std::string> names = {"reference", "onednn", "vulkan", "cuda", "template"};
  // An out-of-tree backend is known by its file: any libswitchyard-<name>.so on
  // SWITCHYARD_PLUGIN_PATH, in `plugin_paths` or in the default plugin folders.
  for (const auto& folder : plugin_search_path(plugin_paths)) {
    std::error_code error;
    std::vector<std::string> found;  // sorted per folder, so that messages are stable
    for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
      found.push_back(plugin_name_from_path(entry.path()));
    }
    std::sort(found.begin(), found.end());
    for (const auto& name : found) {
      if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) {
        names.push_back(name);
      }
    }
  }
  return names;
}

Status fill_runtime_settings(const ConfigNode& root, const std::filesystem::path& directory,
                             RuntimeSettings& settings) {
  SY_ASSIGN_OR_RETURN(settings.device, root.string_or("device", settings.device));
  if (const ConfigNode policy = root["device_policy"]; policy.valid()) {
    SY_ASSIGN_OR_RETURN(settings.device_policy, parse_device_policy(policy));
  }
  if (const ConfigNode fallback = root["fallback"]; fallback.valid()) {
    SY_ASSIGN_OR_RETURN(const std::string text, fallback.as_string());
    const auto policy = fallback_from_text(text);
    if (!policy)
      return fallback.error("unknown value '" + text +
                            "', expected one of: " + "warn, error, silent");
    settings.fallback = *policy;
  }
  SY_ASSIGN_OR_RETURN(settings.deterministic,
                      root.bool_or("deterministic", settings.deterministic));
  SY_ASSIGN_OR_RETURN(const int64_t seed, root.int_or("seed", static_cast<int64_t>(settings.seed)));
  if (seed < 0) return root["seed"].error("expected an integer >= 0, got " + std::to_string(seed));
  settings.seed = static_cast<uint64_t>(seed);
  return fill_lists(root, directory, settings);
}

OptionList RuntimeSettings::device_options(const std::string& backend) const {
  const auto found = backend_options.find(backend);
  OptionList options = found == backend_options.end() ? OptionList{} : found->second;
  if (deterministic) {
    options.erase(
        std::remove_if(options.begin(), options.end(),
                       [](const auto& option) { return option.first == "deterministic"; }),
        options.end());
    options.emplace_back("deterministic", "true");
  }
  return options;
}

Status RuntimeSettings::apply_environment() {
  // Every variable is checked before any setting changes, so a bad one leaves the settings whole.
  const std::string backends_text = environment_value("SWITCHYARD_BACKENDS");
  std::vector<std::string> new_backends;
  if (!backends_text.empty()) {
    SY_ASSIGN_OR_RETURN(new_backends,
                        parse_backend_list("SWITCHYARD_BACKENDS", backends_text, plugin_paths));
  }
  const std::string device_text = environment_value("SWITCHYARD_DEVICE");
  if (!device_text.empty()) {
    const std::string problem = config_values::check_device_spec(device_text, plugin_paths);
    if (!problem.empty()) {
      return invalid_argument("SWITCHYARD_DEVICE='" + device_text + "': " + problem);
    }
  }
  const std::string fallback_text = environment_value("SWITCHYARD_FALLBACK");
  const auto new_fallback = fallback_from_text(fallback_text);
  if (!fallback_text.empty() && !new_fallback) {
    return invalid_argument("SWITCHYARD_FALLBACK='" + fallback_text + "': " +
                            config_values::unknown_name_message("value", fallback_text,
                                                                {"warn", "error", "silent"}, true));
  }
  LocalRank new_local_rank;
  if (device_policy == DevicePolicy::kLocalRank) {
    SY_ASSIGN_OR_RETURN(new_local_rank, read_local_rank());
  }
  local_rank = new_local_rank;
  environment_applied.clear();
  if (!new_backends.empty()) {
    backends = std::move(new_backends);
    backends_from_config = true;
    environment_applied.push_back("SWITCHYARD_BACKENDS=" + backends_text);
  }
  if (!device_text.empty()) {
    device = device_text;
    environment_applied.push_back("SWITCHYARD_DEVICE=" + device_text);
  }
  if (new_fallback) {
    fallback = *new_fallback;
    environment_applied.push_back("SWITCHYARD_FALLBACK=" + fallback_text);
  }
  return ok_status();
}

Result<RuntimeSettings> RuntimeSettings::with_environment() const {
  RuntimeSettings settings = *this;
  if (!use_environment) return settings;
  SY_RETURN_IF_ERROR(settings.apply_environment());
  settings.use_environment = false;
  return settings;
}

}  // namespace switchyard
