// Registry::probe_isolated: the probe of one plugin, run in a child process and reported back as
// text records, so that a driver crash while creating a device is a reason, not a dead host.
#include <sstream>

#include "isolation.h"
#include "switchyard/plugin.h"
#include "switchyard/registry.h"

namespace switchyard {
namespace {

using detail::escape_field;
using detail::unescape_field;

std::string serialize(const PluginRecord& plugin, const std::vector<DeviceRecord>& devices) {
  std::ostringstream out;
  out << "plugin_state=" << static_cast<int>(plugin.state) << "\n";
  out << "plugin_reason=" << escape_field(plugin.reason) << "\n--\n";
  for (const auto& d : devices) {
    out << "index=" << d.info.index << "\nname=" << escape_field(d.info.name)
        << "\nvendor=" << escape_field(d.info.vendor) << "\ntype=" << static_cast<int>(d.info.type)
        << "\ndriver=" << escape_field(d.info.driver_version)
        << "\nruntime=" << escape_field(d.info.runtime_version)
        << "\nuuid=" << escape_field(d.info.uuid) << "\nbus=" << escape_field(d.info.bus_id)
        << "\ndetails=" << escape_field(d.info.details) << "\ntotal=" << d.info.memory_total_bytes
        << "\nfree=" << d.info.memory_free_bytes << "\nunits=" << d.info.compute_units
        << "\nusable=" << (d.usable ? 1 : 0) << "\nreason=" << escape_field(d.reason)
        << "\nsettings=" << escape_field(d.settings) << "\n--\n";
  }
  return out.str();
}

void assign_field(DeviceRecord& d, const std::string& key, const std::string& value) {
  if (key == "index")
    d.info.index = static_cast<uint32_t>(std::stoul(value));
  else if (key == "name")
    d.info.name = value;
  else if (key == "vendor")
    d.info.vendor = value;
  else if (key == "type")
    d.info.type = static_cast<DeviceType>(std::stoi(value));
  else if (key == "driver")
    d.info.driver_version = value;
  else if (key == "runtime")
    d.info.runtime_version = value;
  else if (key == "uuid")
    d.info.uuid = value;
  else if (key == "bus")
    d.info.bus_id = value;
  else if (key == "details")
    d.info.details = value;
  else if (key == "total")
    d.info.memory_total_bytes = std::stoull(value);
  else if (key == "free")
    d.info.memory_free_bytes = std::stoull(value);
  else if (key == "units")
    d.info.compute_units = static_cast<uint32_t>(std::stoul(value));
  else if (key == "usable")
    d.usable = value == "1";
  else if (key == "reason")
    d.reason = value;
  else if (key == "settings")
    d.settings = value;
}

}  // namespace

std::vector<DeviceRecord> Registry::probe_isolated(const std::string& name,
                                                   const OptionList& options, int timeout_ms) {
  auto record = std::find_if(plugins_.begin(), plugins_.end(), [&](const PluginRecord& r) {
    return r.name == name && r.plugin != nullptr;
  });
  if (record == plugins_.end()) return {};
  auto output = detail::run_isolated(
      [&] {
        auto devices = probe(name, options, /*keep_devices=*/false);
        return serialize(*record, devices);
      },
      timeout_ms);
  if (!output.ok()) {
    record->state = PluginState::kUnusable;
    record->reason = "probing " + output.status().message();
    return {};
  }
  std::vector<DeviceRecord> devices;
  std::istringstream in(*output);
  std::string line;
  bool header = true;
  DeviceRecord current;
  current.info.backend = name;
  while (std::getline(in, line)) {
    if (line == "--") {
      if (!header) devices.push_back(current);
      header = false;
      current = DeviceRecord();
      current.info.backend = name;
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq);
    const std::string value = unescape_field(line.substr(eq + 1));
    if (header && key == "plugin_state")
      record->state = static_cast<PluginState>(std::stoi(value));
    else if (header && key == "plugin_reason")
      record->reason = value;
    else
      assign_field(current, key, value);
  }
  return devices;
}

}  // namespace switchyard
