// A Vulkan instance with its dispatch table, and what the plugin learns about each physical device.
//
// Ownership: every VulkanDevice owns its own Instance, because validation is chosen per device and
// a layer can only be enabled when the instance is created. Listing devices uses one shared
// instance without validation (probe_instance()).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "status.h"
#include "vulkan_api.h"

namespace sy_vk {

// Collects what the validation layer says through a debug-utils messenger. Every error or warning
// is counted and kept, and the plugin call during which it arrived fails with its text.
class ValidationLog {
 public:
  void add(VkDebugUtilsMessageSeverityFlagBitsEXT severity, const char* message);
  uint64_t message_count() const { return count_.load(); }
  // The messages that arrived after `first` (a count taken earlier), joined; empty when none.
  std::string messages_since(uint64_t first) const;

 private:
  mutable std::mutex mutex_;
  std::atomic<uint64_t> count_{0};
  std::vector<std::string> messages_;  // the first few hundred, enough to diagnose
};

// One shape of cooperative matrix product the device runs on its tensor cores
// (VkCooperativeMatrixPropertiesNV with subgroup scope): an M x K times K x N product accumulated
// into an M x N matrix.
struct CooperativeMatrixShape {
  uint32_t m = 0, n = 0, k = 0;
  bool operator==(const CooperativeMatrixShape&) const = default;
  // "16x16x16": in module names, the settings line and devices' details.
  std::string text() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  }
};

// What a physical device offers, gathered once.
struct PhysicalDeviceInfo {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties properties{};
  VkPhysicalDeviceDriverProperties driver{};
  VkPhysicalDeviceIDProperties ids{};
  VkPhysicalDeviceSubgroupProperties subgroup{};
  VkPhysicalDeviceMaintenance3Properties maintenance3{};  // maxMemoryAllocationSize
  VkPhysicalDeviceMemoryProperties memory{};
  uint64_t heap_budget_bytes[VK_MAX_MEMORY_HEAPS] = {};  // 0 without VK_EXT_memory_budget
  bool has_memory_budget = false;
  bool has_pci_bus_info = false;
  VkPhysicalDevicePCIBusInfoPropertiesEXT pci{};
  bool storage_buffer_16bit = false;  // VkPhysicalDeviceVulkan11Features::storageBuffer16BitAccess
  bool shader_float16 = false;        // VkPhysicalDeviceVulkan12Features::shaderFloat16
  bool shader_int64 = false;
  bool host_query_reset = false;
  // VK_NV_cooperative_matrix with its cooperativeMatrix feature, and the shapes it lists with f16
  // A and B and f32 C and D (the ones gemm_coopmat.glsl uses).
  bool cooperative_matrix_nv = false;
  bool vulkan_memory_model = false;  // VkPhysicalDeviceVulkan12Features; coopmat SPIR-V needs it
  std::vector<CooperativeMatrixShape> cooperative_matrix_f16_f32;
  // VK_EXT_subgroup_size_control's computeFullSubgroups (the extension is core in 1.3, but the
  // instance asks for 1.2): a pipeline may require that every subgroup of a workgroup be full.
  bool compute_full_subgroups = false;
  uint32_t compute_queue_family = UINT32_MAX;
  uint32_t timestamp_valid_bits = 0;
  std::string unusable_reason;  // empty when the plugin can run on it
};

class Instance {
 public:
  // Creates an instance for Vulkan 1.2; with `validation`, enables VK_LAYER_KHRONOS_validation and
  // a messenger feeding `log` (which must outlive the instance). UNAVAILABLE names the reason.
  static Status create(bool validation, ValidationLog* log, std::unique_ptr<Instance>* out);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  const VulkanApi& api() const { return api_; }
  // The owning device adds its device-level entry points here.
  VulkanApi& mutable_api() { return api_; }
  VkInstance handle() const { return instance_; }
  uint32_t loader_version() const { return loader_version_; }
  // Every physical device in the loader's order, usable or not.
  const std::vector<PhysicalDeviceInfo>& physical_devices() const { return devices_; }
  // Indices into physical_devices() of the usable ones: these are the plugin's device indices.
  const std::vector<uint32_t>& usable_indices() const { return usable_; }

 private:
  Instance() = default;
  Status enumerate();

  VulkanApi api_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  uint32_t loader_version_ = 0;
  std::vector<PhysicalDeviceInfo> devices_;
  std::vector<uint32_t> usable_;
};

// The shared instance used to count and describe devices; created on first use, kept for the life
// of the process. Returns the same failure on every call when Vulkan is unavailable.
Status probe_instance(const Instance** out);

// Reads everything in PhysicalDeviceInfo for one device.
Status describe_physical_device(const VulkanApi& api, VkPhysicalDevice device,
                                PhysicalDeviceInfo* info);

}  // namespace sy_vk
