// Device selection: the priority list, the `device` string, the policy and the fallback rule.
#include <algorithm>
#include <functional>

#include "switchyard/plugin.h"
#include "switchyard/registry.h"

namespace switchyard {
namespace {

struct DeviceRequest {
  enum class Kind { kAuto, kCpu, kBackend, kExact } kind = Kind::kAuto;
  std::string backend;
  uint32_t index = 0;
};

Result<DeviceRequest> parse_device(const std::string& text) {
  DeviceRequest request;
  if (text.empty() || text == "auto") return request;
  if (text == "cpu") {
    request.kind = DeviceRequest::Kind::kCpu;
    return request;
  }
  const size_t colon = text.find(':');
  request.backend = text.substr(0, colon);
  if (colon == std::string::npos) {
    request.kind = DeviceRequest::Kind::kBackend;
    return request;
  }
  const std::string index = text.substr(colon + 1);
  if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos) {
    return invalid_argument("device '" + text + "': expected auto, cpu, <backend> or " +
                            "<backend>:<index>");
  }
  request.kind = DeviceRequest::Kind::kExact;
  request.index = static_cast<uint32_t>(std::stoul(index));
  return request;
}

bool is_emulated(const DeviceRecord& d) {
  return d.info.type == DeviceType::kEmulated;
}

// The index of the picked device (-1: none) and how many it was picked from.
struct Picked {
  int index = -1;
  size_t candidates = 0;
};

// Among the usable devices that `accept` admits, those of the first backend (in `order`) that has
// any; then the policy picks one of them.
Picked pick(const std::vector<DeviceRecord>& devices, const std::vector<std::string>& order,
            const RuntimeSettings& settings,
            const std::function<bool(const DeviceRecord&)>& accept) {
  for (const auto& backend : order) {
    std::vector<int> candidates;
    for (size_t i = 0; i < devices.size(); ++i) {
      const auto& d = devices[i];
      if (d.info.backend == backend && d.usable && accept(d)) {
        candidates.push_back(static_cast<int>(i));
      }
    }
    if (candidates.empty()) continue;
    Picked picked{candidates.front(), candidates.size()};
    if (settings.device_policy == DevicePolicy::kMostFreeMemory) {
      picked.index = *std::max_element(candidates.begin(), candidates.end(), [&](int a, int b) {
        return devices[a].info.memory_free_bytes < devices[b].info.memory_free_bytes;
      });
    } else if (settings.device_policy == DevicePolicy::kLocalRank) {
      picked.index = candidates[settings.local_rank.rank % candidates.size()];
    }
    return picked;
  }
  return {};
}

// What the local_rank policy did, for the log: "local rank 3 (from OMPI_COMM_WORLD_LOCAL_RANK)
// -> cuda:1, one of 2 usable cuda devices; ranks share devices".
std::string local_rank_note(const DeviceRecord& chosen, size_t peers, const LocalRank& local_rank) {
  const std::string source =
      local_rank.source.empty() ? std::string("no rank variable set") : "from " + local_rank.source;
  const std::string among = peers == 1 ? "the only usable " + chosen.info.backend + " device"
                                       : "one of " + std::to_string(peers) + " usable " +
                                             chosen.info.backend + " devices";
  return "device_policy local_rank: local rank " + std::to_string(local_rank.rank) + " (" + source +
         ") -> " + chosen.info.id() + ", " + among +
         (local_rank.rank >= peers ? "; ranks share devices" : "");
}

// Why a backend was not used, in one phrase.
std::string why_not(const std::string& backend, const std::vector<DeviceRecord>& devices,
                    const std::vector<PluginRecord>& plugins) {
  std::string reasons;
  bool any_device = false;
  for (const auto& d : devices) {
    if (d.info.backend != backend) continue;
    any_device = true;
    const std::string why = d.usable ? (is_emulated(d) ? "emulated device, ranked below real ones"
                                                       : "usable, not chosen")
                                     : d.reason;
    reasons += (reasons.empty() ? "" : "; ") + d.info.id() + " (" + d.info.name + "): " + why;
  }
  if (any_device) return reasons;
  for (const auto& p : plugins) {
    if (p.name == backend && p.state != PluginState::kShadowed) {
      return p.reason.empty() ? std::string("not probed") : p.reason;
    }
  }
  return "no plugin named '" + backend + "' in the search path";
}

// Why a backend was skipped, in a few words, for the one line a run prints; `doctor` and
// `devices` show the full reasons.
std::string why_not_briefly(const std::string& backend, const std::vector<DeviceRecord>& devices,
                            const std::vector<PluginRecord>& plugins) {
  size_t emulated = 0, failed = 0, others = 0;
  for (const auto& d : devices) {
    if (d.info.backend != backend) continue;
    (d.usable ? (is_emulated(d) ? emulated : others) : failed) += 1;
  }
  if (emulated + failed + others > 0) {
    if (failed + others == 0)
      return emulated == 1 ? "only an emulated device" : "only emulated devices";
    if (emulated + others == 0)
      return failed == 1 ? "its device failed the probe" : "its devices failed the probe";
    return "no usable real device";
  }
  for (const auto& p : plugins) {
    if (p.name != backend || p.state == PluginState::kShadowed) continue;
    if (p.state == PluginState::kRejected) return "plugin not loaded";
    if (p.reason == "no devices found") return "no device";
    const bool no_driver = p.reason.find("cannot open shared object") != std::string::npos ||
                           p.reason.find("driver") != std::string::npos;
    return no_driver ? "no driver" : "unavailable";
  }
  return "no plugin";
}

bool plugin_present(const std::string& backend, const std::vector<PluginRecord>& plugins) {
  return std::any_of(plugins.begin(), plugins.end(), [&](const PluginRecord& p) {
    return p.name == backend && p.state != PluginState::kShadowed;
  });
}

// fallback: error refuses a device below the first backend of the list, with every full reason.
std::string skipped_backends_error(const DeviceRecord& chosen,
                                   const std::vector<std::string>& order,
                                   const std::vector<DeviceRecord>& devices,
                                   const std::vector<PluginRecord>& plugins) {
  std::string skipped;
  for (const auto& backend : order) {
    if (backend == chosen.info.backend) break;
    skipped += (skipped.empty() ? "" : "; ") + backend + ": " + why_not(backend, devices, plugins);
  }
  return "using " + chosen.info.id() + " (" + chosen.info.name +
         ") instead of a higher-priority backend. Skipped: " + skipped + " (fallback: error)";
}

}  // namespace

Result<Choice> choose_device(const std::vector<DeviceRecord>& devices,
                             const std::vector<PluginRecord>& plugins,
                             const RuntimeSettings& settings) {
  SY_ASSIGN_OR_RETURN(DeviceRequest request, parse_device(settings.device));
  // The default list names backends that may simply not be built here; only those present count.
  std::vector<std::string> order;
  for (const auto& backend : settings.backends) {
    if (settings.backends_from_config || plugin_present(backend, plugins)) order.push_back(backend);
  }
  auto real = [](const DeviceRecord& d) { return !is_emulated(d); };
  auto any = [](const DeviceRecord&) { return true; };
  Choice choice;
  Picked picked;
  std::string requested_text;
  switch (request.kind) {
    case DeviceRequest::Kind::kAuto:
      picked = pick(devices, order, settings, real);
      if (picked.index < 0) picked = pick(devices, order, settings, any);
      break;
    case DeviceRequest::Kind::kCpu:
      requested_text = "cpu";
      picked = pick(devices, order, settings,
                    [](const DeviceRecord& d) { return d.info.type == DeviceType::kCpu; });
      break;
    case DeviceRequest::Kind::kBackend:
      requested_text = request.backend;
      picked = pick(devices, {request.backend}, settings, any);
      break;
    case DeviceRequest::Kind::kExact:
      requested_text = settings.device;
      for (size_t i = 0; i < devices.size(); ++i) {
        const auto& d = devices[i];
        if (d.info.backend == request.backend && d.info.index == request.index && d.usable) {
          picked = {static_cast<int>(i), 1};
        }
      }
      break;
  }
  choice.index = picked.index;
  const bool named = request.kind != DeviceRequest::Kind::kAuto;
  if (named && choice.index < 0) {
    const std::string why = request.kind == DeviceRequest::Kind::kCpu
                                ? "no listed backend has a usable CPU device"
                                : why_not(request.backend, devices, plugins);
    if (settings.fallback == FallbackPolicy::kError) {
      return unavailable("device '" + requested_text + "' is not usable: " + why +
                         " (fallback: error)");
    }
    picked = pick(devices, order, settings, real);
    if (picked.index < 0) picked = pick(devices, order, settings, any);
    choice.index = picked.index;
    if (choice.index >= 0 && settings.fallback == FallbackPolicy::kWarn) {
      choice.warnings.push_back("device '" + requested_text + "' is not usable (" + why +
                                "); falling back to " + devices[choice.index].info.id());
    }
  }
  if (choice.index < 0) {
    std::string reasons;
    for (const auto& backend : order) {
      reasons += "\n  " + backend + ": " + why_not(backend, devices, plugins);
    }
    return unavailable("no usable device" + (reasons.empty() ? " (no backend listed)" : reasons));
  }
  const auto& chosen = devices[choice.index];
  if (settings.device_policy == DevicePolicy::kLocalRank &&
      request.kind != DeviceRequest::Kind::kExact) {
    choice.note = local_rank_note(chosen, picked.candidates, settings.local_rank);
  }
  choice.first_choice =
      named ? choice.warnings.empty() : (!order.empty() && chosen.info.backend == order.front());
  if (!named && !choice.first_choice) {
    if (settings.fallback == FallbackPolicy::kError) {
      return unavailable(skipped_backends_error(chosen, order, devices, plugins));
    }
    if (settings.fallback == FallbackPolicy::kWarn) {
      std::string skipped;
      for (const auto& backend : order) {
        if (backend == chosen.info.backend) break;
        skipped += (skipped.empty() ? "" : "; ") + backend + ": " +
                   why_not_briefly(backend, devices, plugins);
      }
      choice.fallback_note = "using " + chosen.info.id() + " (" + skipped + ")";
    }
  }
  return choice;
}

Result<Selection> select_device(Registry& registry, const RuntimeSettings& requested) {
  SY_ASSIGN_OR_RETURN(const RuntimeSettings settings, requested.with_environment());
  SY_ASSIGN_OR_RETURN(DeviceRequest request, parse_device(settings.device));
  std::vector<std::string> to_probe = settings.backends;
  if (request.kind == DeviceRequest::Kind::kBackend ||
      request.kind == DeviceRequest::Kind::kExact) {
    to_probe.insert(to_probe.begin(), request.backend);
  }
  Selection selection;
  std::vector<std::string> probed;
  for (const auto& backend : to_probe) {
    if (std::find(probed.begin(), probed.end(), backend) != probed.end()) continue;
    probed.push_back(backend);
    auto found = registry.probe(backend, settings.device_options(backend));
    selection.devices.insert(selection.devices.end(), found.begin(), found.end());
    // With `auto`, stop at the first backend that has a real usable device: later ones cannot win.
    const bool stop = request.kind == DeviceRequest::Kind::kAuto &&
                      std::any_of(found.begin(), found.end(), [](const DeviceRecord& d) {
                        return d.usable && !is_emulated(d);
                      });
    if (stop) break;
  }
  SY_ASSIGN_OR_RETURN(Choice choice,
                      choose_device(selection.devices, registry.plugins(), settings));
  selection.warnings = choice.warnings;
  selection.fallback_note = choice.fallback_note;
  selection.first_choice = choice.first_choice;
  selection.note = choice.note;
  for (size_t i = 0; i < selection.devices.size(); ++i) {
    auto& d = selection.devices[i];
    d.selected = static_cast<int>(i) == choice.index;
    if (d.selected)
      selection.device = d.device;
    else
      d.device.reset();  // release devices that were only probed
  }
  return selection;
}

}  // namespace switchyard
