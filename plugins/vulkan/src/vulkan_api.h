// The Vulkan dispatch table. Nothing in the plugin links libvulkan: the loader is opened with
// dlopen and every entry point is resolved through vkGetInstanceProcAddr / vkGetDeviceProcAddr into
// a VulkanApi, so the plugin loads on a machine without Vulkan and says why it cannot run there.
#pragma once

#include <string>

#include <vulkan/vulkan_core.h>

#include "status.h"

namespace sy_vk {

// Entry points that need no instance.
#define SY_VK_GLOBAL_FUNCTIONS(X)           \
  X(vkCreateInstance)                       \
  X(vkEnumerateInstanceExtensionProperties) \
  X(vkEnumerateInstanceLayerProperties)     \
  X(vkEnumerateInstanceVersion)

#define SY_VK_INSTANCE_FUNCTIONS(X)           \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkGetPhysicalDeviceMemoryProperties2)     \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkEnumerateDeviceExtensionProperties)     \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)

// Present only when VK_EXT_debug_utils was enabled on the instance.
#define SY_VK_DEBUG_FUNCTIONS(X)    \
  X(vkCreateDebugUtilsMessengerEXT) \
  X(vkDestroyDebugUtilsMessengerEXT)

#define SY_VK_DEVICE_FUNCTIONS(X)  \
  X(vkDestroyDevice)               \
  X(vkGetDeviceQueue)              \
  X(vkDeviceWaitIdle)              \
  X(vkQueueSubmit)                 \
  X(vkQueueWaitIdle)               \
  X(vkCreateBuffer)                \
  X(vkDestroyBuffer)               \
  X(vkGetBufferMemoryRequirements) \
  X(vkAllocateMemory)              \
  X(vkFreeMemory)                  \
  X(vkBindBufferMemory)            \
  X(vkMapMemory)                   \
  X(vkUnmapMemory)                 \
  X(vkCreateShaderModule)          \
  X(vkDestroyShaderModule)         \
  X(vkCreateDescriptorSetLayout)   \
  X(vkDestroyDescriptorSetLayout)  \
  X(vkCreatePipelineLayout)        \
  X(vkDestroyPipelineLayout)       \
  X(vkCreatePipelineCache)         \
  X(vkDestroyPipelineCache)        \
  X(vkCreateComputePipelines)      \
  X(vkDestroyPipeline)             \
  X(vkCreateDescriptorPool)        \
  X(vkDestroyDescriptorPool)       \
  X(vkResetDescriptorPool)         \
  X(vkAllocateDescriptorSets)      \
  X(vkUpdateDescriptorSets)        \
  X(vkCreateCommandPool)           \
  X(vkDestroyCommandPool)          \
  X(vkAllocateCommandBuffers)      \
  X(vkResetCommandBuffer)          \
  X(vkFreeCommandBuffers)          \
  X(vkBeginCommandBuffer)          \
  X(vkEndCommandBuffer)            \
  X(vkCmdBindPipeline)             \
  X(vkCmdBindDescriptorSets)       \
  X(vkCmdDispatch)                 \
  X(vkCmdPipelineBarrier)          \
  X(vkCmdCopyBuffer)               \
  X(vkCmdWriteTimestamp)           \
  X(vkCmdResetQueryPool)           \
  X(vkCreateQueryPool)             \
  X(vkDestroyQueryPool)            \
  X(vkGetQueryPoolResults)         \
  X(vkCreateFence)                 \
  X(vkDestroyFence)                \
  X(vkWaitForFences)               \
  X(vkResetFences)                 \
  X(vkGetFenceStatus)

// Instance-level entry points of optional extensions: null where the loader has none (the
// plugin then treats the extension as absent).
#define SY_VK_OPTIONAL_INSTANCE_FUNCTIONS(X) X(vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)

#define SY_VK_DECLARE_POINTER(name) PFN_##name name = nullptr;

struct VulkanApi {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  SY_VK_GLOBAL_FUNCTIONS(SY_VK_DECLARE_POINTER)
  SY_VK_INSTANCE_FUNCTIONS(SY_VK_DECLARE_POINTER)
  SY_VK_DEBUG_FUNCTIONS(SY_VK_DECLARE_POINTER)
  SY_VK_OPTIONAL_INSTANCE_FUNCTIONS(SY_VK_DECLARE_POINTER)
  SY_VK_DEVICE_FUNCTIONS(SY_VK_DECLARE_POINTER)
};

#undef SY_VK_DECLARE_POINTER

// Opens the loader once per process (SWITCHYARD_VULKAN_LOADER names another file, for tests and
// unusual installs) and fills the global entry points. UNAVAILABLE carries the dlerror text.
// The library stays mapped for the life of the process: layers and drivers keep pointers into it.
Status load_vulkan_globals(VulkanApi& api);

// Resolves the instance-level entry points (and the debug-utils ones when `debug_utils`).
Status load_instance_functions(VulkanApi& api, VkInstance instance, bool debug_utils);

// Resolves the device-level entry points through vkGetDeviceProcAddr.
Status load_device_functions(VulkanApi& api, VkDevice device);

}  // namespace sy_vk
