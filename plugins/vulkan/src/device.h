// VulkanDevice: one logical device of the plugin, with everything that hangs off it: the dispatch
// table, the compute queue, the memory pool, the pipeline cache and the queues the host made.
//
// Ownership: created by device_create (plugin_entry.cpp) and destroyed by device_destroy after the
// host has released every buffer and queue. It owns its own Instance (see instance.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "instance.h"
#include "serial_tracker.h"
#include "status.h"
#include "vulkan_api.h"

namespace sy_vk {

class MemoryPool;
class PipelineCache;
class CommandQueue;

// Options from the YAML backend section; device_create rejects keys it does not know.
struct DeviceOptions {
  bool validation = false;
  uint64_t memory_limit_bytes = 0;  // 0 = none
  double memory_fraction = 0.0;     // 0 = none; else the cap is this share of device-local memory
  // Never map tensor memory, even where device-local memory is host-visible: every host copy then
  // goes through a staging buffer, as on a discrete GPU.
  bool device_local_only = false;
  // The ABI's standard option, accepted and reported: every shader already runs in a fixed order
  // (no float atomics; reductions are fixed-order trees or sequential sums), so results are
  // bit-identical run to run on the same device and driver with or without it.
  bool deterministic = false;
  // f16 matmuls and convolutions on tensor cores (gemm_coopmat.glsl) where the device has them:
  // auto uses them when the device offers a shape the shader has, on makes their absence an error
  // at device creation, off never uses them.
  enum class CooperativeMatrix { kAuto, kOn, kOff };
  CooperativeMatrix cooperative_matrix = CooperativeMatrix::kAuto;
  // The edge of the shader GEMM's output tile (gemm_tile.glsl; MATMUL and the convolutions): 64
  // (8x8 invocations; best on CPU drivers, where each barrier is a coroutine switch), 128 (16x16,
  // the .wide modules; for GPUs), or 0 for auto: 128 on a GPU, 64 on a CPU driver.
  int matmul_tile = 0;
};

// Parses the option list; INVALID_ARGUMENT names the key and the bad value.
Status parse_device_options(const sy_option* options, size_t count, DeviceOptions* out);

// The cooperative matrix shape gemm_coopmat.glsl would use on this device (16x16x16, else
// 16x8x16, f16 inputs and f32 accumulation), or null; and, when null, why, for messages.
const CooperativeMatrixShape* choose_cooperative_matrix_shape(const PhysicalDeviceInfo& info);
std::string cooperative_matrix_absence(const PhysicalDeviceInfo& info);

class VulkanDevice {
 public:
  static Status create(uint32_t index, const DeviceOptions& options,
                       std::unique_ptr<VulkanDevice>* out);
  ~VulkanDevice();
  VulkanDevice(const VulkanDevice&) = delete;
  VulkanDevice& operator=(const VulkanDevice&) = delete;

  const VulkanApi& api() const { return instance_->api(); }
  VkDevice handle() const { return device_; }
  const PhysicalDeviceInfo& physical() const { return physical_; }
  const VkPhysicalDeviceLimits& limits() const { return physical_.properties.limits; }
  MemoryPool& pool() { return *pool_; }
  PipelineCache& pipelines() { return *pipelines_; }
  SerialTracker& serials() { return serials_; }

  // Memory for tensors, and whether it is mapped (host-visible and coherent: lavapipe, UMA).
  uint32_t device_memory_type() const { return device_memory_type_; }
  bool device_memory_mapped() const { return device_memory_mapped_; }
  // Host-visible coherent memory for staging copies and per-dispatch parameters.
  uint32_t host_memory_type() const { return host_memory_type_; }

  // Whether tensors of 16-bit float types are supported (see supports_op).
  bool supports_f16() const { return supports_f16_; }
  bool supports_bf16() const { return supports_bf16_; }
  // The cooperative matrix shape f16 products use (enabled at device creation), or null; null
  // too once the driver has refused the kernel's pipeline (refuse_cooperative_matrix).
  const CooperativeMatrixShape* cooperative_matrix() const {
    return cooperative_matrix_.m != 0 && !cooperative_matrix_refused_.load() ? &cooperative_matrix_
                                                                             : nullptr;
  }
  // Called when the cooperative matrix pipeline cannot be created: says so once on stderr (the
  // f16 products then run on the shader kernel, and the settings line says cooperative_matrix=off).
  void refuse_cooperative_matrix(const std::string& why);
  // Whether pipelines may require full subgroups (VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_
  // SUBGROUPS_BIT), enabled at device creation where the device has computeFullSubgroups.
  bool full_subgroups_enabled() const { return full_subgroups_; }
  // The shader GEMM's tile edge (64 or 128), from the option and the device type.
  int matmul_tile() const { return matmul_tile_; }
  // GEMM dispatches so far (MATMUL and the convolutions' implicit GEMMs), on cooperative matrices
  // and on the shader kernels (the settings line reports both, so that a benchmark can say which
  // kernel it timed).
  void count_gemm(bool cooperative) {
    (cooperative ? gemms_coopmat_ : gemms_shader_).fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t gemms_coopmat() const { return gemms_coopmat_.load(std::memory_order_relaxed); }
  uint64_t gemms_shader() const { return gemms_shader_.load(std::memory_order_relaxed); }

  // Submits to the one VkQueue; serialised because several CommandQueues share it.
  Status submit(const VkSubmitInfo& info, VkFence fence);
  VkQueue vk_queue() const { return queue_; }

  // Queues register themselves so that empty_cache can wait for all of them.
  void register_queue(CommandQueue* queue);
  void unregister_queue(CommandQueue* queue);
  // Calls `visit` on every live queue of the device, holding the list's lock.
  template <typename Visit>
  void for_each_queue(Visit&& visit) {
    std::lock_guard<std::mutex> lock(queues_mutex_);
    for (CommandQueue* queue : queues_) visit(*queue);
  }
  // Waits for every queue's work, then frees every cached block.
  Status empty_cache();
  // Submits the batch with `serial` if a queue other than `user` is still recording it
  // (CommandQueue::order_use_locked).
  Status submit_recording_batch(uint64_t serial, const CommandQueue* user);
  size_t queue_count() const { return queue_count_.load(std::memory_order_relaxed); }

  // With validation on: fails when the layer reported anything since `first_message` (a count
  // taken at the start of the plugin call).
  uint64_t validation_message_count() const { return validation_log_.message_count(); }
  Status validation_status(uint64_t first_message) const;
  bool validation_enabled() const { return options_.validation; }
  const DeviceOptions& options() const { return options_; }

 private:
  VulkanDevice() = default;
  Status create_logical_device();
  Status choose_memory_types();

  DeviceOptions options_;
  ValidationLog validation_log_;  // declared before instance_: the messenger points at it
  std::unique_ptr<Instance> instance_;
  PhysicalDeviceInfo physical_;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  std::mutex submit_mutex_;
  uint32_t device_memory_type_ = 0;
  bool device_memory_mapped_ = false;
  uint32_t host_memory_type_ = 0;
  bool supports_f16_ = false;
  bool supports_bf16_ = false;
  CooperativeMatrixShape cooperative_matrix_;  // m == 0: none
  bool full_subgroups_ = false;
  int matmul_tile_ = 64;
  std::atomic<bool> cooperative_matrix_refused_{false};
  std::atomic<uint64_t> gemms_coopmat_{0};
  std::atomic<uint64_t> gemms_shader_{0};
  SerialTracker serials_;
  std::unique_ptr<MemoryPool> pool_;
  std::unique_ptr<PipelineCache> pipelines_;
  std::mutex queues_mutex_;
  std::set<CommandQueue*> queues_;
  std::atomic<size_t> queue_count_{0};
};

// The total of the device-local heaps, the plugin's "memory_total_bytes".
uint64_t device_local_bytes(const PhysicalDeviceInfo& info);
// Free device-local memory from VK_EXT_memory_budget; 0 when the driver cannot tell.
uint64_t device_local_free_bytes(const PhysicalDeviceInfo& info);

}  // namespace sy_vk
