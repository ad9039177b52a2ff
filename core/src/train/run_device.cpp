// Choosing the run's device from the configuration and installing the op fallback.
#include "switchyard/registry.h"
#include "switchyard/train.h"

namespace switchyard {

Result<RunDevice> open_run_device(const RuntimeSettings& requested) {
  SY_ASSIGN_OR_RETURN(const RuntimeSettings settings, requested.with_environment());
  Registry registry = Registry::discover(plugin_search_path(settings.plugin_paths));
  SY_ASSIGN_OR_RETURN(Selection selection, select_device(registry, settings));
  if (!selection.device) {
    return unavailable("no usable device: every backend in the priority list failed");
  }
  RunDevice run;
  run.device = selection.device;
  run.warnings = selection.warnings;
  run.fallback_note = selection.fallback_note;
  run.note = selection.note;
  run.environment = settings.environment_applied;
  // Ops the device lacks run on the runtime's oracle device (host memory, every op).
  run.fallback_device = open_oracle_device(registry, selection, settings);
  run.device->set_fallback(settings.fallback, run.fallback_device);
  return run;
}

}  // namespace switchyard
