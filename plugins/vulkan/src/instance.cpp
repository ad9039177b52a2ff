#include "instance.h"

#include <cstdio>
#include <cstring>

namespace sy_vk {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";
constexpr size_t kMaxKeptMessages = 256;

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT /*types*/,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* log = static_cast<ValidationLog*>(user);
  log->add(severity, data != nullptr && data->pMessage != nullptr ? data->pMessage : "(no text)");
  return VK_FALSE;
}

bool has_layer(const VulkanApi& api, const char* name) {
  uint32_t count = 0;
  if (api.vkEnumerateInstanceLayerProperties(&count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(count);
  if (api.vkEnumerateInstanceLayerProperties(&count, layers.data()) != VK_SUCCESS) return false;
  for (const auto& layer : layers) {
    if (std::strcmp(layer.layerName, name) == 0) return true;
  }
  return false;
}

bool has_device_extension(const VulkanApi& api, VkPhysicalDevice device, const char* name) {
  uint32_t count = 0;
  if (api.vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr) != VK_SUCCESS) {
    return false;
  }
  std::vector<VkExtensionProperties> extensions(count);
  if (api.vkEnumerateDeviceExtensionProperties(device, nullptr, &count, extensions.data()) !=
      VK_SUCCESS) {
    return false;
  }
  for (const auto& extension : extensions) {
    if (std::strcmp(extension.extensionName, name) == 0) return true;
  }
  return false;
}

void read_features(const VulkanApi& api, PhysicalDeviceInfo* info) {
  VkPhysicalDeviceCooperativeMatrixFeaturesNV cooperative{};
  cooperative.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;
  VkPhysicalDeviceSubgroupSizeControlFeatures size_control{};
  size_control.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES;
  const bool has_cooperative =
      api.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV != nullptr &&
      has_device_extension(api, info->handle, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  // Through the extension even where the device has Vulkan 1.3: the instance asks for 1.2
  // (Instance::create), so 1.3's core features are not ours to enable. Drivers keep listing
  // extensions that were promoted.
  const bool has_size_control =
      has_device_extension(api, info->handle, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  void* chain = nullptr;
  if (has_cooperative) {
    cooperative.pNext = chain;
    chain = &cooperative;
  }
  if (has_size_control) {
    size_control.pNext = chain;
    chain = &size_control;
  }
  VkPhysicalDeviceVulkan12Features features12{};
  features12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  features12.pNext = chain;
  VkPhysicalDeviceVulkan11Features features11{};
  features11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  features11.pNext = &features12;
  VkPhysicalDeviceFeatures2 features{};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.pNext = &features11;
  api.vkGetPhysicalDeviceFeatures2(info->handle, &features);
  info->storage_buffer_16bit = features11.storageBuffer16BitAccess == VK_TRUE;
  info->shader_float16 = features12.shaderFloat16 == VK_TRUE;
  info->host_query_reset = features12.hostQueryReset == VK_TRUE;
  info->vulkan_memory_model = features12.vulkanMemoryModel == VK_TRUE;
  info->shader_int64 = features.features.shaderInt64 == VK_TRUE;
  info->compute_full_subgroups = size_control.computeFullSubgroups == VK_TRUE;
  info->cooperative_matrix_nv = cooperative.cooperativeMatrix == VK_TRUE;
  info->cooperative_matrix_f16_f32.clear();
  if (!info->cooperative_matrix_nv) return;
  uint32_t count = 0;
  if (api.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(info->handle, &count, nullptr) !=
      VK_SUCCESS) {
    return;
  }
  std::vector<VkCooperativeMatrixPropertiesNV> shapes(count);
  for (auto& shape : shapes) shape.sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
  if (api.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(info->handle, &count, shapes.data()) !=
      VK_SUCCESS) {
    return;
  }
  for (const auto& shape : shapes) {
    if (shape.AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
        shape.BType == VK_COMPONENT_TYPE_FLOAT16_NV &&
        shape.CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
        shape.DType == VK_COMPONENT_TYPE_FLOAT32_NV && shape.scope == VK_SCOPE_SUBGROUP_NV) {
      info->cooperative_matrix_f16_f32.push_back({shape.MSize, shape.NSize, shape.KSize});
    }
  }
}

void read_properties(const VulkanApi& api, PhysicalDeviceInfo* info) {
  info->driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  info->ids.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
  info->ids.pNext = &info->driver;
  info->maintenance3.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
  info->maintenance3.pNext = &info->ids;
  info->subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  info->subgroup.pNext = &info->maintenance3;
  info->pci.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT;
  if (info->has_pci_bus_info) info->driver.pNext = &info->pci;
  VkPhysicalDeviceProperties2 properties{};
  properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  properties.pNext = &info->subgroup;
  api.vkGetPhysicalDeviceProperties2(info->handle, &properties);
  info->properties = properties.properties;
  info->subgroup.pNext = nullptr;
  info->maintenance3.pNext = nullptr;
  info->ids.pNext = nullptr;
  info->driver.pNext = nullptr;
  info->pci.pNext = nullptr;
}

void read_memory(const VulkanApi& api, PhysicalDeviceInfo* info) {
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{};
  budget.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT;
  VkPhysicalDeviceMemoryProperties2 memory{};
  memory.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2;
  if (info->has_memory_budget) memory.pNext = &budget;
  api.vkGetPhysicalDeviceMemoryProperties2(info->handle, &memory);
  info->memory = memory.memoryProperties;
  for (uint32_t heap = 0; heap < info->memory.memoryHeapCount && info->has_memory_budget; ++heap) {
    const uint64_t budget_bytes = budget.heapBudget[heap];
    const uint64_t used_bytes = budget.heapUsage[heap];
    info->heap_budget_bytes[heap] = budget_bytes > used_bytes ? budget_bytes - used_bytes : 0;
  }
}

void read_queue_families(const VulkanApi& api, PhysicalDeviceInfo* info) {
  uint32_t count = 0;
  api.vkGetPhysicalDeviceQueueFamilyProperties(info->handle, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  api.vkGetPhysicalDeviceQueueFamilyProperties(info->handle, &count, families.data());
  // A compute-only family is usually the async-compute engine; prefer a graphics+compute family,
  // which every driver implements fully, and fall back to any family with compute.
  for (uint32_t pass = 0; pass < 2 && info->compute_queue_family == UINT32_MAX; ++pass) {
    for (uint32_t family = 0; family < count; ++family) {
      const VkQueueFlags flags = families[family].queueFlags;
      const bool wanted = pass == 0
                              ? (flags & VK_QUEUE_COMPUTE_BIT) && (flags & VK_QUEUE_GRAPHICS_BIT)
                              : (flags & VK_QUEUE_COMPUTE_BIT) != 0;
      if (wanted && families[family].queueCount > 0) {
        info->compute_queue_family = family;
        info->timestamp_valid_bits = families[family].timestampValidBits;
        break;
      }
    }
  }
}

// The shaders use 256-wide workgroups (WORKGROUP_SIZE in common.glsl) and the GEMM kernel two
// 32 x 65 f32 tiles of shared memory (gemm_tile.glsl), a little above Vulkan's guaranteed 16 KiB.
std::string check_compute_limits(const VkPhysicalDeviceLimits& limits) {
  constexpr uint32_t kWorkgroupInvocations = 256;
  constexpr uint32_t kSharedBytes = 2 * 32 * 65 * 4;
  if (limits.maxComputeWorkGroupInvocations < kWorkgroupInvocations ||
      limits.maxComputeWorkGroupSize[0] < kWorkgroupInvocations) {
    return "compute workgroups of at most " +
           std::to_string(limits.maxComputeWorkGroupInvocations) +
           " invocations; the plugin needs 256";
  }
  if (limits.maxComputeSharedMemorySize < kSharedBytes) {
    return "only " + std::to_string(limits.maxComputeSharedMemorySize) +
           " bytes of compute shared memory; the plugin needs " + std::to_string(kSharedBytes);
  }
  return "";
}

}  // namespace

void ValidationLog::add(VkDebugUtilsMessageSeverityFlagBitsEXT severity, const char* message) {
  const char* level =
      (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) != 0 ? "error" : "warning";
  std::string text = std::string("Vulkan validation ") + level + ": " + message;
  std::fprintf(stderr, "switchyard vulkan: %s\n", text.c_str());
  std::lock_guard<std::mutex> lock(mutex_);
  if (messages_.size() < kMaxKeptMessages) messages_.push_back(std::move(text));
  count_.fetch_add(1);
}

std::string ValidationLog::messages_since(uint64_t first) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string joined;
  for (size_t i = first; i < messages_.size(); ++i) {
    if (!joined.empty()) joined += "; ";
    joined += messages_[i];
  }
  if (joined.empty() && count_.load() > first) {
    joined = std::to_string(count_.load() - first) + " Vulkan validation messages (text dropped)";
  }
  return joined;
}

Status describe_physical_device(const VulkanApi& api, VkPhysicalDevice device,
                                PhysicalDeviceInfo* info) {
  info->handle = device;
  info->has_memory_budget = has_device_extension(api, device, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  info->has_pci_bus_info = has_device_extension(api, device, VK_EXT_PCI_BUS_INFO_EXTENSION_NAME);
  read_properties(api, info);
  read_features(api, info);
  read_memory(api, info);
  read_queue_families(api, info);
  if (info->properties.apiVersion < VK_API_VERSION_1_2) {
    info->unusable_reason =
        "Vulkan " + std::to_string(VK_API_VERSION_MAJOR(info->properties.apiVersion)) + "." +
        std::to_string(VK_API_VERSION_MINOR(info->properties.apiVersion)) +
        " device; the plugin needs Vulkan 1.2";
  } else if (info->compute_queue_family == UINT32_MAX) {
    info->unusable_reason = "no queue family with compute";
  } else {
    info->unusable_reason = check_compute_limits(info->properties.limits);
  }
  return ok_status();
}

Status Instance::create(bool validation, ValidationLog* log, std::unique_ptr<Instance>* out) {
  std::unique_ptr<Instance> instance(new Instance());
  VulkanApi& api = instance->api_;
  SY_VK_RETURN_IF_ERROR(load_vulkan_globals(api));
  SY_VK_CALL(api.vkEnumerateInstanceVersion(&instance->loader_version_),
             "vkEnumerateInstanceVersion");
  if (instance->loader_version_ < VK_API_VERSION_1_2) {
    return unavailable("the Vulkan loader supports only Vulkan " +
                       std::to_string(VK_API_VERSION_MAJOR(instance->loader_version_)) + "." +
                       std::to_string(VK_API_VERSION_MINOR(instance->loader_version_)) +
                       "; the plugin needs 1.2");
  }
  if (validation && !has_layer(api, kValidationLayer)) {
    return unavailable(std::string("validation was requested but ") + kValidationLayer +
                       " is not installed (package vulkan-validationlayers)");
  }
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "switchyard";
  app.pEngineName = "switchyard";
  app.apiVersion = VK_API_VERSION_1_2;
  VkDebugUtilsMessengerCreateInfoEXT messenger_info{};
  messenger_info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
  messenger_info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                   VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger_info.pfnUserCallback = on_validation_message;
  messenger_info.pUserData = log;
  const char* layers[] = {kValidationLayer};
  const char* extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  VkInstanceCreateInfo create_info{};
  create_info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  create_info.pApplicationInfo = &app;
  if (validation) {
    // Chained here as well, so that instance creation and destruction are validated too.
    create_info.pNext = &messenger_info;
    create_info.enabledLayerCount = 1;
    create_info.ppEnabledLayerNames = layers;
    create_info.enabledExtensionCount = 1;
    create_info.ppEnabledExtensionNames = extensions;
  }
  const VkResult created = api.vkCreateInstance(&create_info, nullptr, &instance->instance_);
  if (created == VK_ERROR_INCOMPATIBLE_DRIVER) {
    return unavailable(vk_failure(created, "vkCreateInstance").message() +
                       ": the Vulkan loader found no driver (ICD) for Vulkan 1.2; install one "
                       "(e.g. mesa-vulkan-drivers for lavapipe) or check VK_ICD_FILENAMES");
  }
  SY_VK_CALL(created, "vkCreateInstance");
  SY_VK_RETURN_IF_ERROR(load_instance_functions(api, instance->instance_, validation));
  if (validation) {
    SY_VK_CALL(api.vkCreateDebugUtilsMessengerEXT(instance->instance_, &messenger_info, nullptr,
                                                  &instance->messenger_),
               "vkCreateDebugUtilsMessengerEXT");
  }
  SY_VK_RETURN_IF_ERROR(instance->enumerate());
  *out = std::move(instance);
  return ok_status();
}

Status Instance::enumerate() {
  uint32_t count = 0;
  SY_VK_CALL(api_.vkEnumeratePhysicalDevices(instance_, &count, nullptr),
             "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> handles(count);
  SY_VK_CALL(api_.vkEnumeratePhysicalDevices(instance_, &count, handles.data()),
             "vkEnumeratePhysicalDevices");
  devices_.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    SY_VK_RETURN_IF_ERROR(describe_physical_device(api_, handles[i], &devices_[i]));
    if (devices_[i].unusable_reason.empty()) usable_.push_back(i);
  }
  return ok_status();
}

Instance::~Instance() {
  if (instance_ == VK_NULL_HANDLE) return;
  if (messenger_ != VK_NULL_HANDLE) {
    api_.vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
  }
  api_.vkDestroyInstance(instance_, nullptr);
}

Status probe_instance(const Instance** out) {
  static std::once_flag once;
  static Instance* shared = nullptr;
  static Status failure;
  std::call_once(once, [] {
    std::unique_ptr<Instance> created;
    failure = Instance::create(false, nullptr, &created);
    // Kept for the life of the process on purpose: tearing an instance down from a static
    // destructor races with the loader's own teardown.
    if (failure.ok()) shared = created.release();
  });
  if (!failure.ok()) return failure;
  *out = shared;
  return ok_status();
}

}  // namespace sy_vk
