// The oracle backend's device, used as the fallback for ops a selected device lacks.
#include "switchyard/registry.h"

namespace switchyard {
namespace {

constexpr const char* kOracleBackend = "reference";

}  // namespace

std::shared_ptr<Device> open_oracle_device(Registry& registry, const Selection& selection,
                                           const RuntimeSettings& settings) {
  if (selection.device && selection.device->backend() == kOracleBackend) return selection.device;
  for (const DeviceRecord& record : selection.devices) {
    if (record.usable && record.device && record.info.backend == kOracleBackend) {
      return record.device;
    }
  }
  if (registry.find(kOracleBackend) == nullptr) return nullptr;
  for (DeviceRecord& record :
       registry.probe(kOracleBackend, settings.device_options(kOracleBackend))) {
    if (record.usable && record.device) return record.device;
  }
  return nullptr;
}

}  // namespace switchyard
