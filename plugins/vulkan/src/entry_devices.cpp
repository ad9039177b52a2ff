#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "entry_common.h"

namespace sy_vk {
namespace {

void copy_text(char* dst, size_t capacity, const std::string& text) {
  std::snprintf(dst, capacity, "%s", text.c_str());
}

const char* vendor_name(uint32_t vendor_id) {
  switch (vendor_id) {
    case 0x10de:
      return "NVIDIA";
    case 0x1002:
      return "AMD";
    case 0x8086:
      return "Intel";
    case 0x13b5:
      return "ARM";
    case 0x5143:
      return "Qualcomm";
    case 0x106b:
      return "Apple";
    case 0x10005:
      return "Mesa";
    default:
      return nullptr;
  }
}

sy_device_type device_type(const PhysicalDeviceInfo& info) {
  const VkDriverId driver = info.driver.driverID;
  if (driver == VK_DRIVER_ID_MESA_LLVMPIPE || driver == VK_DRIVER_ID_GOOGLE_SWIFTSHADER) {
    return SY_DEVICE_TYPE_EMULATED;
  }
  switch (info.properties.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return SY_DEVICE_TYPE_EMULATED;
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return SY_DEVICE_TYPE_GPU;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return SY_DEVICE_TYPE_INTEGRATED_GPU;
    default:
      return SY_DEVICE_TYPE_OTHER;
  }
}

std::string version_text(uint32_t version) {
  return std::to_string(VK_API_VERSION_MAJOR(version)) + "." +
         std::to_string(VK_API_VERSION_MINOR(version)) + "." +
         std::to_string(VK_API_VERSION_PATCH(version));
}

void fill_properties(const PhysicalDeviceInfo& info, uint32_t loader_version,
                     sy_device_properties* props) {
  props->type = device_type(info);
  copy_text(props->name, sizeof(props->name), info.properties.deviceName);
  const char* vendor = vendor_name(info.properties.vendorID);
  char vendor_hex[16];
  std::snprintf(vendor_hex, sizeof(vendor_hex), "0x%04x", info.properties.vendorID);
  copy_text(props->vendor, sizeof(props->vendor), vendor != nullptr ? vendor : vendor_hex);
  copy_text(props->driver_version, sizeof(props->driver_version),
            std::string(info.driver.driverName) + " " + info.driver.driverInfo);
  copy_text(props->runtime_version, sizeof(props->runtime_version),
            "Vulkan " + version_text(info.properties.apiVersion) + " (loader " +
                version_text(loader_version) + ")");
  std::string uuid;
  for (uint8_t byte : info.ids.deviceUUID) {
    char hex[3];
    std::snprintf(hex, sizeof(hex), "%02x", byte);
    uuid += hex;
  }
  copy_text(props->uuid, sizeof(props->uuid), uuid);
  if (info.has_pci_bus_info) {
    std::snprintf(props->bus_id, sizeof(props->bus_id), "%04x:%02x:%02x.%x", info.pci.pciDomain,
                  info.pci.pciBus, info.pci.pciDevice, info.pci.pciFunction);
  }
  props->memory_total_bytes = device_local_bytes(info);
  props->memory_free_bytes = device_local_free_bytes(info);
  props->compute_units = 0;
  std::string details = "subgroup " + std::to_string(info.subgroup.subgroupSize) + ", heaps:";
  for (uint32_t heap = 0; heap < info.memory.memoryHeapCount; ++heap) {
    const auto& h = info.memory.memoryHeaps[heap];
    details += " " + std::to_string(h.size >> 20) + " MiB" +
               ((h.flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) ? " (device-local)" : "");
  }
  details += std::string(", f16 ") +
             (info.storage_buffer_16bit && info.shader_float16 ? "yes" : "no") + ", bf16 " +
             (info.storage_buffer_16bit ? "yes" : "no");
  // The tensor-core shapes (f16 x f16 -> f32), the one the matmul uses marked with *.
  const CooperativeMatrixShape* used = choose_cooperative_matrix_shape(info);
  if (info.cooperative_matrix_f16_f32.empty()) {
    details += ", cooperative matrix: none";
  } else {
    details += ", cooperative matrix f16->f32:";
    for (const CooperativeMatrixShape& shape : info.cooperative_matrix_f16_f32) {
      details += " " + shape.text() + (used != nullptr && *used == shape ? "*" : "");
    }
    if (used == nullptr)
      details += " (unused: the device " + cooperative_matrix_absence(info) + ")";
  }
  copy_text(props->details, sizeof(props->details), details);
}

// ---- device functions -------------------------------------------------------------------------

}  // namespace

const char* entry_last_error_message() {
  return last_error();
}

sy_status entry_device_count(uint32_t* count) {
  return guarded(nullptr, "vulkan device_count", [&]() -> Status {
    const Instance* instance = nullptr;
    SY_VK_RETURN_IF_ERROR(probe_instance(&instance));
    const auto& devices = instance->physical_devices();
    *count = static_cast<uint32_t>(instance->usable_indices().size());
    if (*count == 0) {
      std::string reason = "no usable Vulkan device";
      if (devices.empty()) reason += " (the loader found no driver: no ICD installed?)";
      for (const auto& device : devices) {
        reason += std::string("; ") + device.properties.deviceName + ": " + device.unusable_reason;
      }
      return unavailable(reason);
    }
    return ok_status();
  });
}

sy_status entry_device_properties(uint32_t index, sy_device_properties* props) {
  return guarded(nullptr, "vulkan device_properties", [&]() -> Status {
    if (props == nullptr || props->struct_size < sizeof(sy_device_properties)) {
      return invalid_argument("device_properties: props is null or struct_size too small");
    }
    const Instance* instance = nullptr;
    SY_VK_RETURN_IF_ERROR(probe_instance(&instance));
    const auto& usable = instance->usable_indices();
    if (index >= usable.size()) {
      return invalid_argument("vulkan device index " + std::to_string(index) + " out of range (" +
                              std::to_string(usable.size()) + " devices)");
    }
    // Re-read so that free memory is current.
    PhysicalDeviceInfo info;
    SY_VK_RETURN_IF_ERROR(describe_physical_device(
        instance->api(), instance->physical_devices()[usable[index]].handle, &info));
    const uint32_t struct_size = props->struct_size;
    std::memset(props, 0, sizeof(sy_device_properties));
    props->struct_size = struct_size;
    fill_properties(info, instance->loader_version(), props);
    return ok_status();
  });
}

sy_status entry_device_create(uint32_t index, const sy_option* options, size_t option_count,
                              sy_device* out_device) {
  return guarded(nullptr, "vulkan device_create", [&]() -> Status {
    DeviceOptions parsed;
    SY_VK_RETURN_IF_ERROR(parse_device_options(options, option_count, &parsed));
    std::unique_ptr<VulkanDevice> device;
    SY_VK_RETURN_IF_ERROR(VulkanDevice::create(index, parsed, &device));
    *out_device = reinterpret_cast<sy_device>(device.release());
    return ok_status();
  });
}

sy_status entry_device_settings(sy_device device, char* buffer, size_t size) {
  return guarded(nullptr, "vulkan device_settings", [&]() -> Status {
    if (device == nullptr || buffer == nullptr || size == 0) {
      return invalid_argument("vulkan device_settings: null device or empty buffer");
    }
    const VulkanDevice& d = *as_device(device);
    const DeviceOptions& o = d.options();
    const CooperativeMatrixShape* shape = d.cooperative_matrix();
    const std::string coopmat = shape == nullptr ? std::string("off") : shape->text();
    std::snprintf(buffer, size,
                  "validation=%s device_local_only=%s deterministic=%s matmul_tile=%d "
                  "cooperative_matrix=%s gemms_coopmat=%llu gemms_shader=%llu",
                  o.validation ? "on" : "off", o.device_local_only ? "on" : "off",
                  o.deterministic ? "on" : "off", d.matmul_tile(), coopmat.c_str(),
                  static_cast<unsigned long long>(d.gemms_coopmat()),
                  static_cast<unsigned long long>(d.gemms_shader()));
    return ok_status();
  });
}

void entry_device_destroy(sy_device device) {
  try {
    delete as_device(device);
  } catch (...) {
    set_last_error("vulkan device_destroy threw");
  }
}

}  // namespace sy_vk
