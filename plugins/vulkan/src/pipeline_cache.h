// PipelineCache: one compute pipeline per embedded SPIR-V module and specialisation, created on
// first use and kept for the life of the device.
//
// Every pipeline is specialised on constant 0 (MODE in shaders/common.glsl) with the dispatch's
// mode, so that a shader family (unary ops, reductions, ...) compiles into one branch-free
// pipeline per op. Shaders that do not use MODE simply ignore it.
//
// Every shader of the plugin uses the same binding scheme in descriptor set 0: binding 0 is the
// dispatch's parameter block (ParamBlock in op_params.h), bindings 1..n are its tensors, all
// storage buffers. Only n differs between shaders, so layouts are shared by binding count.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include <vulkan/vulkan_core.h>

#include "status.h"

namespace sy_vk {

class VulkanDevice;

struct Pipeline {
  std::string name;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  uint32_t binding_count = 0;  // including the parameter block
};

class PipelineCache {
 public:
  explicit PipelineCache(VulkanDevice& device);
  ~PipelineCache();
  PipelineCache(const PipelineCache&) = delete;
  PipelineCache& operator=(const PipelineCache&) = delete;

  // The pipeline for module `name` with `tensor_count` tensor bindings, specialised with
  // MODE = `mode`. INTERNAL status when no such module was embedded.
  Status get(const std::string& name, uint32_t tensor_count, uint32_t mode, const Pipeline** out);

 private:
  struct Layout {
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
  };
  Status layout_for(uint32_t binding_count, Layout* out);
  Status create(const std::string& name, uint32_t binding_count, uint32_t mode, Pipeline* out);

  VulkanDevice& device_;
  std::mutex mutex_;
  VkPipelineCache vk_cache_ = VK_NULL_HANDLE;
  std::map<uint32_t, Layout> layouts_;
  std::map<std::pair<std::string, uint32_t>, std::unique_ptr<Pipeline>> pipelines_;
};

}  // namespace sy_vk
