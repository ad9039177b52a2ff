#include "device.h"

#include <algorithm>
#include <cstdio>

#include "command_queue.h"
#include "memory_pool.h"
#include "pipeline_cache.h"

namespace sy_vk {
namespace {

constexpr VkMemoryPropertyFlags kHostCoherent =
    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

// The first memory type allowed by `type_bits` that has all of `required` (and, on a tie, the
// most of `preferred`); UINT32_MAX if none.
uint32_t find_memory_type(const VkPhysicalDeviceMemoryProperties& memory, uint32_t type_bits,
                          VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) {
  uint32_t best = UINT32_MAX;
  int best_score = -1;
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags flags = memory.memoryTypes[i].propertyFlags;
    if ((type_bits & (1u << i)) == 0 || (flags & required) != required) continue;
    const int score = __builtin_popcount(flags & preferred);
    if (score > best_score) {
      best = i;
      best_score = score;
    }
  }
  return best;
}

// gemm_coopmat.glsl's shared memory: the f16 A and B tiles with their padded rows and eight
// subgroups' f32 scratch of at most 16 x 16.
constexpr uint32_t kCoopmatSharedBytes = (128 * 40 + 32 * 136) * 2 + 8 * 16 * 16 * 4;

}  // namespace

const CooperativeMatrixShape* choose_cooperative_matrix_shape(const PhysicalDeviceInfo& info) {
  if (!info.cooperative_matrix_nv || !info.shader_float16 || !info.storage_buffer_16bit ||
      !info.vulkan_memory_model || !info.compute_full_subgroups ||
      info.subgroup.subgroupSize != 32 ||
      info.properties.limits.maxComputeSharedMemorySize < kCoopmatSharedBytes) {
    return nullptr;
  }
  // The shapes gemm_coopmat.glsl is compiled for (CMakeLists.txt), best first.
  for (const CooperativeMatrixShape wanted :
       {CooperativeMatrixShape{16, 16, 16}, CooperativeMatrixShape{16, 8, 16}}) {
    for (const CooperativeMatrixShape& shape : info.cooperative_matrix_f16_f32) {
      if (shape == wanted) return &shape;
    }
  }
  return nullptr;
}

std::string cooperative_matrix_absence(const PhysicalDeviceInfo& info) {
  if (!info.cooperative_matrix_nv) return "has no VK_NV_cooperative_matrix";
  if (!info.shader_float16 || !info.storage_buffer_16bit) return "has no f16 arithmetic";
  if (!info.vulkan_memory_model) return "has no Vulkan memory model";
  if (!info.compute_full_subgroups) return "cannot require full subgroups";
  if (info.subgroup.subgroupSize != 32) {
    return "has subgroups of " + std::to_string(info.subgroup.subgroupSize) + ", not 32";
  }
  if (info.properties.limits.maxComputeSharedMemorySize < kCoopmatSharedBytes) {
    return "has " + std::to_string(info.properties.limits.maxComputeSharedMemorySize) +
           " bytes of shared memory, the kernel needs " + std::to_string(kCoopmatSharedBytes);
  }
  return "offers no f16 x f16 -> f32 shape 16x16x16 or 16x8x16";
}

uint64_t device_local_bytes(const PhysicalDeviceInfo& info) {
  uint64_t total = 0;
  for (uint32_t heap = 0; heap < info.memory.memoryHeapCount; ++heap) {
    if (info.memory.memoryHeaps[heap].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) {
      total += info.memory.memoryHeaps[heap].size;
    }
  }
  return total;
}

uint64_t device_local_free_bytes(const PhysicalDeviceInfo& info) {
  if (!info.has_memory_budget) return 0;
  uint64_t free_bytes = 0;
  for (uint32_t heap = 0; heap < info.memory.memoryHeapCount; ++heap) {
    if (info.memory.memoryHeaps[heap].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) {
      free_bytes += info.heap_budget_bytes[heap];
    }
  }
  return free_bytes;
}

Status VulkanDevice::create(uint32_t index, const DeviceOptions& options,
                            std::unique_ptr<VulkanDevice>* out) {
  std::unique_ptr<VulkanDevice> device(new VulkanDevice());
  device->options_ = options;
  SY_VK_RETURN_IF_ERROR(
      Instance::create(options.validation, &device->validation_log_, &device->instance_));
  const auto& usable = device->instance_->usable_indices();
  if (index >= usable.size()) {
    return invalid_argument("vulkan device index " + std::to_string(index) + " out of range: " +
                            std::to_string(usable.size()) + " usable device(s)");
  }
  device->physical_ = device->instance_->physical_devices()[usable[index]];
  const VkDriverId driver = device->physical_.driver.driverID;
  const bool software = device->physical_.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ||
                        driver == VK_DRIVER_ID_MESA_LLVMPIPE ||
                        driver == VK_DRIVER_ID_GOOGLE_SWIFTSHADER;
  device->matmul_tile_ = options.matmul_tile != 0 ? options.matmul_tile : (software ? 64 : 128);
  SY_VK_RETURN_IF_ERROR(device->create_logical_device());
  SY_VK_RETURN_IF_ERROR(device->choose_memory_types());

  uint64_t limit_bytes = options.memory_limit_bytes;
  if (options.memory_fraction > 0.0) {
    const auto fraction_bytes = static_cast<uint64_t>(
        options.memory_fraction * static_cast<double>(device_local_bytes(device->physical_)));
    limit_bytes = limit_bytes == 0 ? fraction_bytes : std::min(limit_bytes, fraction_bytes);
  }
  device->pool_ = std::make_unique<MemoryPool>(*device, limit_bytes);
  device->pipelines_ = std::make_unique<PipelineCache>(*device);
  SY_VK_RETURN_IF_ERROR(device->validation_status(0).with_context("creating the Vulkan device"));
  *out = std::move(device);
  return ok_status();
}

Status VulkanDevice::create_logical_device() {
  const VulkanApi& vk = api();
  // 16-bit storage lets shaders load and store f16/bf16 elements; all arithmetic stays in f32.
  VkPhysicalDeviceVulkan12Features features12{};
  features12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  features12.shaderFloat16 = physical_.shader_float16 ? VK_TRUE : VK_FALSE;
  features12.hostQueryReset = physical_.host_query_reset ? VK_TRUE : VK_FALSE;
  VkPhysicalDeviceVulkan11Features features11{};
  features11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  features11.pNext = &features12;
  features11.storageBuffer16BitAccess = physical_.storage_buffer_16bit ? VK_TRUE : VK_FALSE;
  VkPhysicalDeviceFeatures2 features{};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.pNext = &features11;
  features.features.shaderInt64 = physical_.shader_int64 ? VK_TRUE : VK_FALSE;
  std::vector<const char*> extensions;
  if (physical_.has_memory_budget) extensions.push_back(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);

  // Tensor cores: gemm_coopmat.glsl needs f16 arithmetic, full 32-wide subgroups and a fragment
  // shape it is compiled for.
  const CooperativeMatrixShape* shape = choose_cooperative_matrix_shape(physical_);
  if (options_.cooperative_matrix == DeviceOptions::CooperativeMatrix::kOn && shape == nullptr) {
    return unavailable("vulkan option cooperative_matrix=on, but " +
                       std::string(physical_.properties.deviceName) + " " +
                       cooperative_matrix_absence(physical_));
  }
  VkPhysicalDeviceCooperativeMatrixFeaturesNV cooperative{};
  cooperative.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;
  if (shape != nullptr && options_.cooperative_matrix != DeviceOptions::CooperativeMatrix::kOff) {
    cooperative.cooperativeMatrix = VK_TRUE;
    features12.vulkanMemoryModel = VK_TRUE;  // glslang's cooperative matrix modules declare it
    cooperative.pNext = features12.pNext;
    features12.pNext = &cooperative;
    extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    cooperative_matrix_ = *shape;
  }
  VkPhysicalDeviceSubgroupSizeControlFeatures size_control{};
  size_control.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES;
  if (physical_.compute_full_subgroups) {
    size_control.computeFullSubgroups = VK_TRUE;
    size_control.pNext = features12.pNext;
    features12.pNext = &size_control;
    extensions.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
    full_subgroups_ = true;
  }

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{};
  queue_info.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  queue_info.queueFamilyIndex = physical_.compute_queue_family;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  VkDeviceCreateInfo create_info{};
  create_info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  create_info.pNext = &features;
  create_info.queueCreateInfoCount = 1;
  create_info.pQueueCreateInfos = &queue_info;
  create_info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  create_info.ppEnabledExtensionNames = extensions.data();
  SY_VK_CALL(vk.vkCreateDevice(physical_.handle, &create_info, nullptr, &device_),
             "vkCreateDevice");
  SY_VK_RETURN_IF_ERROR(load_device_functions(instance_->mutable_api(), device_));
  vk.vkGetDeviceQueue(device_, physical_.compute_queue_family, 0, &queue_);
  // The shaders keep f16 and bf16 as 16-bit integers and convert by hand, so 16-bit storage is all
  // they need; f16 is still gated on shaderFloat16 so that "supported" means what users expect.
  supports_bf16_ = physical_.storage_buffer_16bit;
  supports_f16_ = physical_.storage_buffer_16bit && physical_.shader_float16;
  return ok_status();
}

Status VulkanDevice::choose_memory_types() {
  const VulkanApi& vk = api();
  // Ask a throw-away buffer which memory types storage buffers may live in.
  VkBufferCreateInfo buffer_info{};
  buffer_info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  buffer_info.size = 256;
  buffer_info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                      VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  VkBuffer probe = VK_NULL_HANDLE;
  SY_VK_CALL(vk.vkCreateBuffer(device_, &buffer_info, nullptr, &probe), "vkCreateBuffer");
  VkMemoryRequirements requirements{};
  vk.vkGetBufferMemoryRequirements(device_, probe, &requirements);
  vk.vkDestroyBuffer(device_, probe, nullptr);
  const auto& memory = physical_.memory;
  const uint32_t bits = requirements.memoryTypeBits;
  // Where device-local memory is also host-visible and coherent on a device that is not discrete
  // (lavapipe, integrated GPUs), map it: buffer_read then needs no staging copy.
  const bool discrete = physical_.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
  uint32_t type = UINT32_MAX;
  if (!discrete && !options_.device_local_only) {
    type = find_memory_type(memory, bits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | kHostCoherent,
                            VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  }
  device_memory_mapped_ = type != UINT32_MAX;
  if (type == UINT32_MAX) {
    type = find_memory_type(memory, bits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
  }
  if (type == UINT32_MAX) type = find_memory_type(memory, bits, 0, 0);
  if (type == UINT32_MAX) return unavailable("no memory type can hold a storage buffer");
  device_memory_type_ = type;
  host_memory_type_ =
      find_memory_type(memory, bits, kHostCoherent, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  if (host_memory_type_ == UINT32_MAX) {
    return unavailable("no host-visible coherent memory type for staging buffers");
  }
  return ok_status();
}

void VulkanDevice::refuse_cooperative_matrix(const std::string& why) {
  if (cooperative_matrix_refused_.exchange(true)) return;
  std::fprintf(stderr,
               "switchyard vulkan: the cooperative-matrix GEMM kernel could not be built on %s "
               "(%s); f16 matmuls and convolutions run on the shader kernels\n",
               physical_.properties.deviceName, why.c_str());
}

Status VulkanDevice::submit(const VkSubmitInfo& info, VkFence fence) {
  std::lock_guard<std::mutex> lock(submit_mutex_);
  SY_VK_CALL(api().vkQueueSubmit(queue_, 1, &info, fence), "vkQueueSubmit");
  return ok_status();
}

void VulkanDevice::register_queue(CommandQueue* queue) {
  std::lock_guard<std::mutex> lock(queues_mutex_);
  queues_.insert(queue);
  queue_count_.store(queues_.size(), std::memory_order_relaxed);
}

void VulkanDevice::unregister_queue(CommandQueue* queue) {
  std::lock_guard<std::mutex> lock(queues_mutex_);
  queues_.erase(queue);
  queue_count_.store(queues_.size(), std::memory_order_relaxed);
}

Status VulkanDevice::submit_recording_batch(uint64_t serial, const CommandQueue* user) {
  CommandQueue* owner = nullptr;
  {
    std::lock_guard<std::mutex> lock(queues_mutex_);
    for (CommandQueue* queue : queues_) {
      if (queue != user && queue->recording_serial() == serial) owner = queue;
    }
  }
  // The host makes one plugin call at a time for a device, so the owner is still there and still
  // recording that batch (submit_if_recording checks again under its lock).
  return owner != nullptr ? owner->submit_if_recording(serial) : ok_status();
}

Status VulkanDevice::empty_cache() {
  std::vector<CommandQueue*> queues;
  {
    std::lock_guard<std::mutex> lock(queues_mutex_);
    queues.assign(queues_.begin(), queues_.end());
  }
  for (CommandQueue* queue : queues) SY_VK_RETURN_IF_ERROR(queue->finish());
  pool_->free_cached(/*only_idle=*/false);
  return ok_status();
}

Status VulkanDevice::validation_status(uint64_t first_message) const {
  if (!options_.validation || validation_log_.message_count() <= first_message) {
    return ok_status();
  }
  return internal_error(validation_log_.messages_since(first_message));
}

VulkanDevice::~VulkanDevice() {
  if (device_ != VK_NULL_HANDLE) {
    api().vkDeviceWaitIdle(device_);
    pipelines_.reset();
    pool_.reset();
    api().vkDestroyDevice(device_, nullptr);
  }
}

}  // namespace sy_vk
