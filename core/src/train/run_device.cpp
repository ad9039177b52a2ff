// Choosing the run's device from the configuration and installing the op fallback.
#include "switchyard/dispatch.h"
#include "switchyard/registry.h"
#include "switchyard/train.h"

namespace switchyard {
namespace {

// The CPU backend that every op is guaranteed on: the reference plugin. Fallback copies data to
// it, so it must be a host-memory device.
constexpr const char* kFallbackBackend = "reference";

OptionList options_for(const RuntimeSettings& settings, const std::string& backend) {
  const auto found = settings.backend_options.find(backend);
  return found == settings.backend_options.end() ? OptionList{} : found->second;
}

std::shared_ptr<Device> find_fallback_device(Registry& registry, const Selection& selection,
                                             const RuntimeSettings& settings) {
  if (selection.device->backend() == kFallbackBackend) return selection.device;
  for (const DeviceRecord& record : selection.devices) {
    if (record.usable && record.device && record.info.backend == kFallbackBackend) {
      return record.device;
    }
  }
  if (registry.find(kFallbackBackend) == nullptr) return nullptr;
  for (DeviceRecord& record :
       registry.probe(kFallbackBackend, options_for(settings, kFallbackBackend))) {
    if (record.usable && record.device) return record.device;
  }
  return nullptr;
}

}  // namespace

Result<RunDevice> open_run_device(const RuntimeSettings& settings) {
  Registry registry = Registry::discover(plugin_search_path(settings.plugin_paths));
  SY_ASSIGN_OR_RETURN(Selection selection, select_device(registry, settings));
  if (!selection.device) {
    return unavailable("no usable device: every backend in the priority list failed");
  }
  RunDevice run;
  run.device = selection.device;
  run.warnings = selection.warnings;
  run.fallback_device = find_fallback_device(registry, selection, settings);
  set_fallback(settings.fallback, run.fallback_device);
  return run;
}

}  // namespace switchyard
