#include "vulkan_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace sy_vk {
namespace {

struct LoaderState {
  std::once_flag once;
  void* handle = nullptr;
  PFN_vkGetInstanceProcAddr get_instance_proc_addr = nullptr;
  std::string error;
};

LoaderState& loader_state() {
  static LoaderState state;
  return state;
}

void open_loader(LoaderState& state) {
  const char* override_name = std::getenv("SWITCHYARD_VULKAN_LOADER");
  const char* name =
      (override_name != nullptr && *override_name != '\0') ? override_name : "libvulkan.so.1";
  state.handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (state.handle == nullptr) {
    const char* reason = dlerror();
    state.error = std::string("cannot open the Vulkan loader ") + name + ": " +
                  (reason != nullptr ? reason : "unknown dlopen error");
    return;
  }
  void* symbol = dlsym(state.handle, "vkGetInstanceProcAddr");
  if (symbol == nullptr) {
    const char* reason = dlerror();
    state.error = std::string("the Vulkan loader ") + name +
                  " has no vkGetInstanceProcAddr: " + (reason != nullptr ? reason : "");
    return;
  }
  state.get_instance_proc_addr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(symbol);
}

}  // namespace

Status load_vulkan_globals(VulkanApi& api) {
  LoaderState& state = loader_state();
  std::call_once(state.once, [&state] { open_loader(state); });
  if (state.get_instance_proc_addr == nullptr) return unavailable(state.error);
  api.vkGetInstanceProcAddr = state.get_instance_proc_addr;
#define SY_VK_LOAD_GLOBAL(name) \
  api.name = reinterpret_cast<PFN_##name>(api.vkGetInstanceProcAddr(VK_NULL_HANDLE, #name));
  SY_VK_GLOBAL_FUNCTIONS(SY_VK_LOAD_GLOBAL)
#undef SY_VK_LOAD_GLOBAL
  if (api.vkCreateInstance == nullptr) {
    return unavailable("the Vulkan loader returned no vkCreateInstance");
  }
  if (api.vkEnumerateInstanceVersion == nullptr) {
    return unavailable(
        "the Vulkan loader is older than Vulkan 1.1 (no vkEnumerateInstanceVersion)");
  }
  return ok_status();
}

Status load_instance_functions(VulkanApi& api, VkInstance instance, bool debug_utils) {
#define SY_VK_LOAD_INSTANCE(name)                                                      \
  api.name = reinterpret_cast<PFN_##name>(api.vkGetInstanceProcAddr(instance, #name)); \
  if (api.name == nullptr) return unavailable("the Vulkan instance has no entry point " #name);
  SY_VK_INSTANCE_FUNCTIONS(SY_VK_LOAD_INSTANCE)
  if (debug_utils) {
    SY_VK_DEBUG_FUNCTIONS(SY_VK_LOAD_INSTANCE)
  }
#undef SY_VK_LOAD_INSTANCE
#define SY_VK_LOAD_OPTIONAL(name) \
  api.name = reinterpret_cast<PFN_##name>(api.vkGetInstanceProcAddr(instance, #name));
  SY_VK_OPTIONAL_INSTANCE_FUNCTIONS(SY_VK_LOAD_OPTIONAL)
#undef SY_VK_LOAD_OPTIONAL
  return ok_status();
}

Status load_device_functions(VulkanApi& api, VkDevice device) {
#define SY_VK_LOAD_DEVICE(name)                                                    \
  api.name = reinterpret_cast<PFN_##name>(api.vkGetDeviceProcAddr(device, #name)); \
  if (api.name == nullptr) return unavailable("the Vulkan device has no entry point " #name);
  SY_VK_DEVICE_FUNCTIONS(SY_VK_LOAD_DEVICE)
#undef SY_VK_LOAD_DEVICE
  return ok_status();
}

}  // namespace sy_vk
