#include "pipeline_cache.h"

#include <cstring>
#include <vector>

#include "device.h"
#include "embedded_shaders.h"

namespace sy_vk {

PipelineCache::PipelineCache(VulkanDevice& device) : device_(device) {
  VkPipelineCacheCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
  // A failure only costs compile time, so it is not an error.
  if (device_.api().vkCreatePipelineCache(device_.handle(), &info, nullptr, &vk_cache_) !=
      VK_SUCCESS) {
    vk_cache_ = VK_NULL_HANDLE;
  }
}

PipelineCache::~PipelineCache() {
  const VulkanApi& vk = device_.api();
  const VkDevice device = device_.handle();
  for (auto& [name, pipeline] : pipelines_)
    vk.vkDestroyPipeline(device, pipeline->pipeline, nullptr);
  for (auto& [count, layout] : layouts_) {
    vk.vkDestroyPipelineLayout(device, layout.layout, nullptr);
    vk.vkDestroyDescriptorSetLayout(device, layout.set_layout, nullptr);
  }
  if (vk_cache_ != VK_NULL_HANDLE) vk.vkDestroyPipelineCache(device, vk_cache_, nullptr);
}

Status PipelineCache::get(const std::string& name, uint32_t tensor_count, uint32_t mode,
                          const Pipeline** out) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto key = std::make_pair(name, mode);
  auto it = pipelines_.find(key);
  if (it == pipelines_.end()) {
    auto pipeline = std::make_unique<Pipeline>();
    SY_VK_RETURN_IF_ERROR(create(name, tensor_count + 1, mode, pipeline.get()));
    it = pipelines_.emplace(key, std::move(pipeline)).first;
  }
  if (it->second->binding_count != tensor_count + 1) {
    return internal_error("shader " + name + " was created with " +
                          std::to_string(it->second->binding_count - 1) +
                          " tensor bindings, asked for " + std::to_string(tensor_count));
  }
  *out = it->second.get();
  return ok_status();
}

Status PipelineCache::layout_for(uint32_t binding_count, Layout* out) {
  auto it = layouts_.find(binding_count);
  if (it != layouts_.end()) {
    *out = it->second;
    return ok_status();
  }
  const VulkanApi& vk = device_.api();
  std::vector<VkDescriptorSetLayoutBinding> bindings(binding_count);
  for (uint32_t i = 0; i < binding_count; ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo set_info{};
  set_info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  set_info.bindingCount = binding_count;
  set_info.pBindings = bindings.data();
  Layout layout;
  SY_VK_CALL(
      vk.vkCreateDescriptorSetLayout(device_.handle(), &set_info, nullptr, &layout.set_layout),
      "vkCreateDescriptorSetLayout");
  VkPipelineLayoutCreateInfo layout_info{};
  layout_info.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  layout_info.setLayoutCount = 1;
  layout_info.pSetLayouts = &layout.set_layout;
  const VkResult result =
      vk.vkCreatePipelineLayout(device_.handle(), &layout_info, nullptr, &layout.layout);
  if (result != VK_SUCCESS) {
    vk.vkDestroyDescriptorSetLayout(device_.handle(), layout.set_layout, nullptr);
    return vk_failure(result, "vkCreatePipelineLayout");
  }
  layouts_.emplace(binding_count, layout);
  *out = layout;
  return ok_status();
}

Status PipelineCache::create(const std::string& name, uint32_t binding_count, uint32_t mode,
                             Pipeline* out) {
  const EmbeddedShader* shader = nullptr;
  for (const EmbeddedShader& candidate : embedded_shaders()) {
    if (name == candidate.name) shader = &candidate;
  }
  if (shader == nullptr) return internal_error("no embedded shader module named " + name);
  Layout layout;
  SY_VK_RETURN_IF_ERROR(layout_for(binding_count, &layout));
  const VulkanApi& vk = device_.api();
  VkShaderModuleCreateInfo module_info{};
  module_info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  module_info.codeSize = shader->word_count * sizeof(uint32_t);
  module_info.pCode = shader->words;
  VkShaderModule module = VK_NULL_HANDLE;
  SY_VK_CALL(vk.vkCreateShaderModule(device_.handle(), &module_info, nullptr, &module),
             "vkCreateShaderModule(" + name + ")");
  VkComputePipelineCreateInfo pipeline_info{};
  pipeline_info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  pipeline_info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  pipeline_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pipeline_info.stage.module = module;
  pipeline_info.stage.pName = "main";
  // The cooperative-matrix modules (gemm_coopmat.glsl) divide their workgroup into subgroups of
  // 32 by gl_SubgroupID.
  if (name.find(".coopmat.") != std::string::npos && device_.full_subgroups_enabled()) {
    pipeline_info.stage.flags |= VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  }
  const VkSpecializationMapEntry entry{0, 0, sizeof(uint32_t)};
  VkSpecializationInfo specialization{};
  specialization.mapEntryCount = 1;
  specialization.pMapEntries = &entry;
  specialization.dataSize = sizeof(mode);
  specialization.pData = &mode;
  pipeline_info.stage.pSpecializationInfo = &specialization;
  pipeline_info.layout = layout.layout;
  const VkResult result = vk.vkCreateComputePipelines(device_.handle(), vk_cache_, 1,
                                                      &pipeline_info, nullptr, &out->pipeline);
  vk.vkDestroyShaderModule(device_.handle(), module, nullptr);
  if (result != VK_SUCCESS) return vk_failure(result, "vkCreateComputePipelines(" + name + ")");
  out->name = name + " (mode " + std::to_string(mode) + ")";
  out->layout = layout.layout;
  out->set_layout = layout.set_layout;
  out->binding_count = binding_count;
  return ok_status();
}

}  // namespace sy_vk
