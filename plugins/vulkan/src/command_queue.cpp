#include "command_queue.h"

#include <algorithm>
#include <cstring>

#include "device.h"
#include "memory_pool.h"
#include "pipeline_cache.h"
#include "switchyard/plugin_support/graph_update.h"

namespace sy_vk {
namespace {

// Enough to keep the GPU busy while the host records more, small enough to recycle arenas often.
constexpr uint32_t kCommandsPerBatch = 64;
constexpr uint32_t kSetsPerDescriptorPool = 128;
constexpr uint32_t kMaxBindingsPerSet = 9;

constexpr VkPipelineStageFlags kWorkStages =
    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
constexpr VkAccessFlags kWorkAccess = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                      VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;

}  // namespace

struct CommandQueue::Batch {
  explicit Batch(VulkanDevice& device) : arena(device) {}
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  std::vector<VkDescriptorPool> descriptor_pools;
  size_t descriptor_pool_index = 0;
  HostArena arena;
  uint64_t serial = 0;
  uint32_t commands = 0;
};

struct CommandQueue::Graph {
  CommandQueue* owner = nullptr;  // the capturing queue: its command pool holds batch->cmd
  std::unique_ptr<Batch> batch;
  std::vector<DeviceBlock*> blocks;
  std::vector<CapturedDispatch> dispatches;  // in record order, so in call order
  std::vector<sy_op_call> calls;             // the op calls captured, in order
  std::mutex mutex;                          // guards the launch state below
  CommandQueue* launched_on = nullptr;       // the queue of the launch in flight, if any
  uint64_t serial = 0;                       // of the launch in flight; 0 when none

  // Ends the launch in flight, if any, once its fence has signalled: waits for it, or with
  // `wait` false only looks and leaves *running true when it has not finished. The caller
  // holds `mutex`.
  Status retire(VulkanDevice& device, bool wait, bool* running = nullptr) {
    if (running != nullptr) *running = false;
    if (serial == 0) return ok_status();
    const VulkanApi& vk = device.api();
    if (wait) {
      SY_VK_CALL(vk.vkWaitForFences(device.handle(), 1, &batch->fence, VK_TRUE, UINT64_MAX),
                 "vkWaitForFences");
    } else {
      const VkResult result = vk.vkGetFenceStatus(device.handle(), batch->fence);
      if (result == VK_NOT_READY) {
        if (running != nullptr) *running = true;
        return ok_status();
      }
      if (result != VK_SUCCESS) return vk_failure(result, "vkGetFenceStatus");
    }
    SY_VK_CALL(vk.vkResetFences(device.handle(), 1, &batch->fence), "vkResetFences");
    device.serials().complete(serial);
    serial = 0;
    launched_on = nullptr;  // any queue's list drops it at its next retire
    return ok_status();
  }
};

// graph_update's progress through the captured dispatches of one call.
struct CommandQueue::Update {
  Graph* graph = nullptr;
  uint64_t call = 0;
  size_t next = 0;  // the captured dispatch the op's next dispatch must match
  size_t end = 0;
  std::string failure;
  std::vector<std::pair<void*, std::vector<uint8_t>>> blocks;  // new parameter bytes, by block
};

CommandQueue::CommandQueue(VulkanDevice& device) : device_(device) {}

Status CommandQueue::create(VulkanDevice& device, std::unique_ptr<CommandQueue>* out) {
  std::unique_ptr<CommandQueue> queue(new CommandQueue(device));
  VkCommandPoolCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  info.queueFamilyIndex = device.physical().compute_queue_family;
  SY_VK_CALL(
      device.api().vkCreateCommandPool(device.handle(), &info, nullptr, &queue->command_pool_),
      "vkCreateCommandPool");
  device.register_queue(queue.get());
  *out = std::move(queue);
  return ok_status();
}

CommandQueue::~CommandQueue() {
  (void)finish();
  device_.unregister_queue(this);
  const VulkanApi& vk = device_.api();
  const VkDevice device = device_.handle();
  auto destroy = [&](std::unique_ptr<Batch>& batch) {
    if (!batch) return;
    for (VkDescriptorPool pool : batch->descriptor_pools) {
      vk.vkDestroyDescriptorPool(device, pool, nullptr);
    }
    if (batch->fence != VK_NULL_HANDLE) vk.vkDestroyFence(device, batch->fence, nullptr);
    if (batch->serial != 0) device_.serials().complete(batch->serial);
    batch.reset();
  };
  if (recording_) {
    vk.vkEndCommandBuffer(recording_->cmd);
    destroy(recording_);
  }
  if (capturing_) {
    vk.vkEndCommandBuffer(capturing_->cmd);
    for (DeviceBlock* block : captured_blocks_) device_.pool().capture_unref(block);
    destroy(capturing_);
  }
  for (auto& batch : in_flight_) destroy(batch);
  for (auto& batch : spare_) destroy(batch);
  if (command_pool_ != VK_NULL_HANDLE) vk.vkDestroyCommandPool(device, command_pool_, nullptr);
}

Status CommandQueue::new_batch(std::unique_ptr<Batch>* out) {
  const VulkanApi& vk = device_.api();
  auto batch = std::make_unique<Batch>(device_);
  VkCommandBufferAllocateInfo allocate_info{};
  allocate_info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  allocate_info.commandPool = command_pool_;
  allocate_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  allocate_info.commandBufferCount = 1;
  SY_VK_CALL(vk.vkAllocateCommandBuffers(device_.handle(), &allocate_info, &batch->cmd),
             "vkAllocateCommandBuffers");
  VkFenceCreateInfo fence_info{};
  fence_info.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  SY_VK_CALL(vk.vkCreateFence(device_.handle(), &fence_info, nullptr, &batch->fence),
             "vkCreateFence");
  *out = std::move(batch);
  return ok_status();
}

Status CommandQueue::current_batch(Batch** out) {
  if (capturing_) {
    *out = capturing_.get();
    return ok_status();
  }
  if (!recording_) {
    // Recycle what has finished before taking a new batch, without waiting.
    SY_VK_RETURN_IF_ERROR(wait_locked(false));
    if (!spare_.empty()) {
      recording_ = std::move(spare_.back());
      spare_.pop_back();
    } else {
      SY_VK_RETURN_IF_ERROR(new_batch(&recording_));
    }
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    SY_VK_CALL(device_.api().vkBeginCommandBuffer(recording_->cmd, &begin), "vkBeginCommandBuffer");
    recording_->serial = device_.serials().begin();
    recording_serial_.store(recording_->serial, std::memory_order_relaxed);
    // Orders this batch after everything submitted to the queue before it.
    record_barrier(recording_->cmd, kWorkStages, kWorkAccess);
  }
  *out = recording_.get();
  return ok_status();
}

void CommandQueue::record_barrier(VkCommandBuffer cmd, VkPipelineStageFlags dst_stages,
                                  VkAccessFlags dst_access) {
  VkMemoryBarrier barrier{};
  barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = dst_access;
  device_.api().vkCmdPipelineBarrier(cmd, kWorkStages, dst_stages, 0, 1, &barrier, 0, nullptr, 0,
                                     nullptr);
}

void CommandQueue::after_command(Batch& batch) {
  record_barrier(batch.cmd, kWorkStages, kWorkAccess);
  ++batch.commands;
}

Status CommandQueue::allocate_descriptor_set(Batch& batch, VkDescriptorSetLayout layout,
                                             VkDescriptorSet* out) {
  const VulkanApi& vk = device_.api();
  while (true) {
    if (batch.descriptor_pool_index == batch.descriptor_pools.size()) {
      VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                kSetsPerDescriptorPool * kMaxBindingsPerSet};
      VkDescriptorPoolCreateInfo info{};
      info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
      info.maxSets = kSetsPerDescriptorPool;
      info.poolSizeCount = 1;
      info.pPoolSizes = &size;
      VkDescriptorPool pool = VK_NULL_HANDLE;
      SY_VK_CALL(vk.vkCreateDescriptorPool(device_.handle(), &info, nullptr, &pool),
                 "vkCreateDescriptorPool");
      batch.descriptor_pools.push_back(pool);
    }
    VkDescriptorSetAllocateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    info.descriptorPool = batch.descriptor_pools[batch.descriptor_pool_index];
    info.descriptorSetCount = 1;
    info.pSetLayouts = &layout;
    const VkResult result = vk.vkAllocateDescriptorSets(device_.handle(), &info, out);
    if (result == VK_SUCCESS) return ok_status();
    if (result != VK_ERROR_OUT_OF_POOL_MEMORY && result != VK_ERROR_FRAGMENTED_POOL) {
      return vk_failure(result, "vkAllocateDescriptorSets");
    }
    ++batch.descriptor_pool_index;
  }
}

Status CommandQueue::dispatch(const Pipeline& pipeline, const void* params, size_t params_bytes,
                              std::span<const BufferBinding> tensors, uint32_t groups_x,
                              uint32_t groups_y, uint32_t groups_z) {
  if (tensors.size() + 1 != pipeline.binding_count || tensors.size() + 1 > kMaxBindingsPerSet) {
    return internal_error("dispatch of " + pipeline.name + " with " +
                          std::to_string(tensors.size()) + " tensor bindings");
  }
  if (groups_x == 0 || groups_y == 0 || groups_z == 0) return ok_status();
  std::lock_guard<std::mutex> lock(mutex_);
  const uint32_t groups[3] = {groups_x, groups_y, groups_z};
  if (update_) return update_dispatch_locked(pipeline, params, params_bytes, tensors, groups);
  Batch* batch = nullptr;
  SY_VK_RETURN_IF_ERROR(current_batch(&batch));
  HostSlice slice;
  SY_VK_RETURN_IF_ERROR(batch->arena.allocate(
      params_bytes, device_.limits().minStorageBufferOffsetAlignment, &slice));
  std::memcpy(slice.host, params, params_bytes);
  VkDescriptorSet set = VK_NULL_HANDLE;
  SY_VK_RETURN_IF_ERROR(allocate_descriptor_set(*batch, pipeline.set_layout, &set));
  VkDescriptorBufferInfo infos[kMaxBindingsPerSet];
  VkWriteDescriptorSet writes[kMaxBindingsPerSet];
  infos[0] = {slice.buffer, slice.offset, params_bytes};
  for (size_t i = 0; i < tensors.size(); ++i) {
    infos[i + 1] = {tensors[i].block->buffer, tensors[i].offset_bytes, tensors[i].range_bytes};
    if (capturing_) {
      note_captured(tensors[i].block);
    } else {
      SY_VK_RETURN_IF_ERROR(order_use_locked(*tensors[i].block, batch->serial));
      tensors[i].block->last_use_serial.store(batch->serial);
    }
  }
  for (uint32_t i = 0; i < pipeline.binding_count; ++i) {
    writes[i] = VkWriteDescriptorSet{};
    writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  const VulkanApi& vk = device_.api();
  vk.vkUpdateDescriptorSets(device_.handle(), pipeline.binding_count, writes, 0, nullptr);
  vk.vkCmdBindPipeline(batch->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline);
  vk.vkCmdBindDescriptorSets(batch->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout, 0, 1,
                             &set, 0, nullptr);
  vk.vkCmdDispatch(batch->cmd, groups_x, groups_y, groups_z);
  if (capturing_) {
    CapturedDispatch& d = capture_dispatches_.emplace_back();
    d.call = capture_calls_.empty() ? UINT64_MAX : capture_calls_.size() - 1;
    d.pipeline = &pipeline;
    d.params_host = slice.host;
    d.params_bytes = params_bytes;
    std::copy(groups, groups + 3, d.groups);
    d.bindings.assign(tensors.begin(), tensors.end());
  }
  after_command(*batch);
  if (!capturing_ && batch->commands >= kCommandsPerBatch) SY_VK_RETURN_IF_ERROR(submit_locked());
  return ok_status();
}

Status CommandQueue::write(DeviceBlock* dst, uint64_t dst_offset, const void* src,
                           uint64_t size_bytes) {
  if (size_bytes == 0) return ok_status();
  std::lock_guard<std::mutex> lock(mutex_);
  if (update_) {
    if (update_->failure.empty()) {
      update_->failure = "vulkan: call " + std::to_string(update_->call) +
                         " writes data to the device, which a parameter update cannot redo";
    }
    return unimplemented(update_->failure);
  }
  // When no batch that used the buffer is still pending (on any queue), nothing queued can touch
  // it, and a copy straight into mapped memory is indistinguishable from a queued one.
  SY_VK_RETURN_IF_ERROR(wait_locked(false));
  // While capturing, the copy is part of the graph (its bytes kept in the graph's arena).
  if (!capturing_ && dst->mapped != nullptr &&
      device_.serials().is_complete(dst->last_use_serial.load())) {
    std::memcpy(static_cast<uint8_t*>(dst->mapped) + dst_offset, src, size_bytes);
    return ok_status();
  }
  Batch* batch = nullptr;
  SY_VK_RETURN_IF_ERROR(current_batch(&batch));
  if (!capturing_) SY_VK_RETURN_IF_ERROR(order_use_locked(*dst, batch->serial));
  HostSlice slice;
  SY_VK_RETURN_IF_ERROR(batch->arena.allocate(size_bytes, 16, &slice));
  std::memcpy(slice.host, src, size_bytes);
  VkBufferCopy region{slice.offset, dst_offset, size_bytes};
  device_.api().vkCmdCopyBuffer(batch->cmd, slice.buffer, dst->buffer, 1, &region);
  if (capturing_) {
    note_captured(dst);
  } else {
    dst->last_use_serial.store(batch->serial);
  }
  after_command(*batch);
  if (!capturing_ && batch->commands >= kCommandsPerBatch) SY_VK_RETURN_IF_ERROR(submit_locked());
  return ok_status();
}

Status CommandQueue::read(DeviceBlock* src, uint64_t src_offset, void* dst, uint64_t size_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (capturing_) return refuse_while_capturing("buffer_read");
  if (src->mapped == nullptr) return read_through_staging(src, src_offset, dst, size_bytes);
  SY_VK_RETURN_IF_ERROR(submit_locked());
  SY_VK_RETURN_IF_ERROR(wait_locked(true));
  if (size_bytes != 0) {
    std::memcpy(dst, static_cast<const uint8_t*>(src->mapped) + src_offset, size_bytes);
  }
  return ok_status();
}

Status CommandQueue::read_through_staging(DeviceBlock* src, uint64_t src_offset, void* dst,
                                          uint64_t size_bytes) {
  if (size_bytes == 0) {
    SY_VK_RETURN_IF_ERROR(submit_locked());
    return wait_locked(true);
  }
  Batch* batch = nullptr;
  SY_VK_RETURN_IF_ERROR(current_batch(&batch));
  SY_VK_RETURN_IF_ERROR(order_use_locked(*src, batch->serial));
  HostSlice slice;
  SY_VK_RETURN_IF_ERROR(batch->arena.allocate(size_bytes, 16, &slice));
  VkBufferCopy region{src_offset, slice.offset, size_bytes};
  device_.api().vkCmdCopyBuffer(batch->cmd, src->buffer, slice.buffer, 1, &region);
  src->last_use_serial.store(batch->serial);
  after_command(*batch);
  Batch* reading = batch;
  SY_VK_RETURN_IF_ERROR(submit_locked());
  SY_VK_CALL(
      device_.api().vkWaitForFences(device_.handle(), 1, &reading->fence, VK_TRUE, UINT64_MAX),
      "vkWaitForFences");
  // The slice stays valid until the batch is recycled below.
  std::memcpy(dst, slice.host, size_bytes);
  return wait_locked(true);
}

Status CommandQueue::submit_locked() {
  if (capturing_ || !recording_) return ok_status();
  recording_serial_.store(0, std::memory_order_relaxed);
  const VulkanApi& vk = device_.api();
  // Makes the batch's writes visible to host reads after the fence wait.
  record_barrier(recording_->cmd, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  SY_VK_CALL(vk.vkEndCommandBuffer(recording_->cmd), "vkEndCommandBuffer");
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &recording_->cmd;
  const Status submitted = device_.submit(submit, recording_->fence);
  if (!submitted.ok()) {
    // The batch never ran; give its serial back so that cached buffers can be freed.
    device_.serials().complete(recording_->serial);
    recording_.reset();
    return submitted;
  }
  in_flight_.push_back(std::move(recording_));
  return ok_status();
}

Status CommandQueue::submit_if_recording(uint64_t serial) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!recording_ || recording_->serial != serial) return ok_status();
  return submit_locked();
}

Status CommandQueue::order_use_locked(const DeviceBlock& block, uint64_t own_serial) {
  const uint64_t last = block.last_use_serial.load();
  if (last == 0 || last == own_serial || device_.queue_count() < 2) return ok_status();
  return device_.submit_recording_batch(last, this);
}

Status CommandQueue::wait_locked(bool wait_all) {
  SY_VK_RETURN_IF_ERROR(retire_graphs_locked(wait_all));
  const VulkanApi& vk = device_.api();
  while (!in_flight_.empty()) {
    Batch& batch = *in_flight_.front();
    if (wait_all) {
      SY_VK_CALL(vk.vkWaitForFences(device_.handle(), 1, &batch.fence, VK_TRUE, UINT64_MAX),
                 "vkWaitForFences");
    } else {
      const VkResult result = vk.vkGetFenceStatus(device_.handle(), batch.fence);
      if (result == VK_NOT_READY) break;
      if (result != VK_SUCCESS) return vk_failure(result, "vkGetFenceStatus");
    }
    SY_VK_CALL(vk.vkResetFences(device_.handle(), 1, &batch.fence), "vkResetFences");
    SY_VK_CALL(vk.vkResetCommandBuffer(batch.cmd, 0), "vkResetCommandBuffer");
    for (VkDescriptorPool pool : batch.descriptor_pools) {
      SY_VK_CALL(vk.vkResetDescriptorPool(device_.handle(), pool, 0), "vkResetDescriptorPool");
    }
    batch.descriptor_pool_index = 0;
    batch.arena.reset();
    batch.commands = 0;
    device_.serials().complete(batch.serial);
    batch.serial = 0;
    spare_.push_back(std::move(in_flight_.front()));
    in_flight_.pop_front();
  }
  return ok_status();
}

Status CommandQueue::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (capturing_) return refuse_while_capturing("queue_finish");
  SY_VK_RETURN_IF_ERROR(submit_locked());
  return wait_locked(true);
}

Status CommandQueue::record_timestamp(TimestampEvent* event) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (capturing_) return refuse_while_capturing("event_record");
  Batch* batch = nullptr;
  SY_VK_RETURN_IF_ERROR(current_batch(&batch));
  const VulkanApi& vk = device_.api();
  vk.vkCmdResetQueryPool(batch->cmd, event->pool, 0, 1);
  vk.vkCmdWriteTimestamp(batch->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, event->pool, 0);
  event->serial = batch->serial;
  event->queue = this;
  ++batch->commands;
  return ok_status();
}

Status CommandQueue::wait_for_event(const TimestampEvent& event) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (recording_ && recording_->serial <= event.serial) SY_VK_RETURN_IF_ERROR(submit_locked());
  while (!in_flight_.empty() && in_flight_.front()->serial <= event.serial) {
    const VulkanApi& vk = device_.api();
    SY_VK_CALL(
        vk.vkWaitForFences(device_.handle(), 1, &in_flight_.front()->fence, VK_TRUE, UINT64_MAX),
        "vkWaitForFences");
    SY_VK_RETURN_IF_ERROR(wait_locked(false));
  }
  return ok_status();
}

// ---- native capture ----------------------------------------------------------------------------

void CommandQueue::note_captured(DeviceBlock* block) {
  for (const DeviceBlock* seen : captured_blocks_) {
    if (seen == block) return;
  }
  device_.pool().capture_ref(block);
  captured_blocks_.push_back(block);
}

Status CommandQueue::refuse_while_capturing(const char* what) {
  const std::string message = std::string("vulkan: ") + what + " while the queue is capturing";
  if (capture_failure_.empty()) capture_failure_ = message;
  return unimplemented(message);
}

void CommandQueue::discard_capture_locked() {
  const VulkanApi& vk = device_.api();
  vk.vkEndCommandBuffer(capturing_->cmd);
  for (DeviceBlock* block : captured_blocks_) device_.pool().capture_unref(block);
  captured_blocks_.clear();
  capture_dispatches_.clear();
  capture_calls_.clear();
  for (VkDescriptorPool pool : capturing_->descriptor_pools) {
    vk.vkDestroyDescriptorPool(device_.handle(), pool, nullptr);
  }
  vk.vkDestroyFence(device_.handle(), capturing_->fence, nullptr);
  vk.vkFreeCommandBuffers(device_.handle(), command_pool_, 1, &capturing_->cmd);
  capturing_.reset();
}

Status CommandQueue::begin_capture() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (capturing_) return invalid_argument("vulkan: the queue is already capturing");
  SY_VK_RETURN_IF_ERROR(submit_locked());  // nothing eager stays in the batch being recorded
  std::unique_ptr<Batch> batch;
  SY_VK_RETURN_IF_ERROR(new_batch(&batch));
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;  // submitted again on every launch
  SY_VK_CALL(device_.api().vkBeginCommandBuffer(batch->cmd, &begin), "vkBeginCommandBuffer");
  record_barrier(batch->cmd, kWorkStages, kWorkAccess);
  capturing_ = std::move(batch);
  captured_blocks_.clear();
  capture_failure_.clear();
  capture_calls_.clear();
  capture_dispatches_.clear();
  return ok_status();
}

void CommandQueue::begin_call(const sy_op_call& call) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (capturing_) capture_calls_.push_back(call);
}

Status CommandQueue::end_capture(Graph** out) {
  std::lock_guard<std::mutex> lock(mutex_);
  *out = nullptr;
  if (!capturing_) return invalid_argument("vulkan: the queue is not capturing");
  if (!capture_failure_.empty()) {
    const std::string failure = capture_failure_;
    discard_capture_locked();
    return unimplemented(failure + ": nothing was captured");
  }
  record_barrier(capturing_->cmd, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  const VkResult ended = device_.api().vkEndCommandBuffer(capturing_->cmd);
  if (ended != VK_SUCCESS) {
    discard_capture_locked();
    return vk_failure(ended, "vkEndCommandBuffer");
  }
  auto graph = std::make_unique<Graph>();
  graph->owner = this;
  graph->batch = std::move(capturing_);
  graph->blocks = std::move(captured_blocks_);
  captured_blocks_.clear();
  graph->dispatches = std::move(capture_dispatches_);
  capture_dispatches_.clear();
  graph->calls = std::move(capture_calls_);
  capture_calls_.clear();
  *out = graph.release();
  return ok_status();
}

Status CommandQueue::retire_graphs_locked(bool wait_all) {
  for (size_t k = 0; k < launched_.size();) {
    Graph& graph = *launched_[k];
    std::lock_guard<std::mutex> graph_lock(graph.mutex);
    bool running = false;
    if (graph.launched_on == this) SY_VK_RETURN_IF_ERROR(graph.retire(device_, wait_all, &running));
    if (running) {
      ++k;
    } else {
      launched_.erase(launched_.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  return ok_status();
}

Status CommandQueue::launch(Graph& graph) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (capturing_) return refuse_while_capturing("graph_launch");
  SY_VK_RETURN_IF_ERROR(submit_locked());  // the graph runs after everything before it
  std::unique_lock<std::mutex> graph_lock(graph.mutex);
  // The previous launch may still run, and the command buffer is submitted once at a time.
  SY_VK_RETURN_IF_ERROR(graph.retire(device_, /*wait=*/true));
  for (const DeviceBlock* block : graph.blocks) {
    SY_VK_RETURN_IF_ERROR(order_use_locked(*block, 0));
  }
  graph.serial = device_.serials().begin();
  for (DeviceBlock* block : graph.blocks) block->last_use_serial.store(graph.serial);
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &graph.batch->cmd;
  const Status submitted = device_.submit(submit, graph.batch->fence);
  if (!submitted.ok()) {
    device_.serials().complete(graph.serial);
    graph.serial = 0;
    return submitted;
  }
  graph.launched_on = this;
  graph_lock.unlock();
  bool listed = false;
  for (const Graph* g : launched_) listed = listed || g == &graph;
  if (!listed) launched_.push_back(&graph);
  return ok_status();
}

Status CommandQueue::update_captured_call(Graph& graph, uint64_t call_index, const sy_op_call& call,
                                          const std::function<Status()>& run) {
  if (call_index >= graph.calls.size()) {
    return invalid_argument("graph_update: call " + std::to_string(call_index) + ", but " +
                            std::to_string(graph.calls.size()) + " calls were captured");
  }
  if (const std::string problem =
          sy_support::call_replacement_problem(graph.calls[call_index], call);
      !problem.empty()) {
    return invalid_argument("graph_update: the new call " + std::to_string(call_index) + " " +
                            problem);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (capturing_ || update_) {
      return invalid_argument("vulkan: graph_update on a queue that is capturing or updating");
    }
    if (graph.owner != this) return internal_error("vulkan: graph_update on a foreign queue");
    auto update = std::make_unique<Update>();
    update->graph = &graph;
    update->call = call_index;
    const std::vector<CapturedDispatch>& all = graph.dispatches;
    while (update->next < all.size() && all[update->next].call < call_index) ++update->next;
    update->end = update->next;
    while (update->end < all.size() && all[update->end].call == call_index) ++update->end;
    update_ = std::move(update);
  }
  const Status ran = run();
  std::unique_ptr<Update> update;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    update = std::move(update_);
  }
  if (!update->failure.empty()) return unimplemented(update->failure);
  SY_VK_RETURN_IF_ERROR(ran);
  if (update->next != update->end) {
    return unimplemented("vulkan: call " + std::to_string(call_index) +
                         " now dispatches less than was captured");
  }
  // The device reads the parameter blocks when the graph runs: not while a launch is in flight.
  std::lock_guard<std::mutex> graph_lock(graph.mutex);
  SY_VK_RETURN_IF_ERROR(graph.retire(device_, /*wait=*/true));
  for (const auto& [host, bytes] : update->blocks) std::memcpy(host, bytes.data(), bytes.size());
  graph.calls[call_index].params = call.params;
  return ok_status();
}

Status CommandQueue::update_dispatch_locked(const Pipeline& pipeline, const void* params,
                                            size_t params_bytes,
                                            std::span<const BufferBinding> tensors,
                                            const uint32_t groups[3]) {
  Update& u = *update_;
  if (!u.failure.empty()) return unimplemented(u.failure);
  const CapturedDispatch* d = u.next < u.end ? &u.graph->dispatches[u.next] : nullptr;
  bool same = d != nullptr && d->pipeline == &pipeline && d->params_bytes == params_bytes &&
              std::equal(groups, groups + 3, d->groups) && d->bindings.size() == tensors.size();
  const auto named = [&](const DeviceBlock* block) {
    return std::find(u.graph->blocks.begin(), u.graph->blocks.end(), block) !=
           u.graph->blocks.end();
  };
  for (size_t i = 0; same && i < tensors.size(); ++i) {
    const BufferBinding& a = d->bindings[i];
    const BufferBinding& b = tensors[i];
    same = a.offset_bytes == b.offset_bytes && a.range_bytes == b.range_bytes;
    // Scratch the op allocates for itself (attention's D, a recurrence's state) is a new block
    // now, one the graph does not name; the graph keeps its own, parked while it lives.
    same = same && (a.block == b.block || !named(b.block));
  }
  if (!same) {
    u.failure = "vulkan: with the new parameters call " + std::to_string(u.call) + " dispatches " +
                pipeline.name +
                (d == nullptr ? " beyond what was captured"
                              : " differently from the captured " + d->pipeline->name);
    return unimplemented(u.failure);
  }
  const auto* bytes = static_cast<const uint8_t*>(params);
  u.blocks.emplace_back(d->params_host, std::vector<uint8_t>(bytes, bytes + params_bytes));
  ++u.next;
  return ok_status();
}

CommandQueue& CommandQueue::graph_owner(Graph& graph) {
  return *graph.owner;
}

void CommandQueue::destroy_graph(Graph* graph) {
  if (graph == nullptr) return;
  CommandQueue& owner = *graph->owner;
  VulkanDevice& device = owner.device_;
  const VulkanApi& vk = device.api();
  {
    std::lock_guard<std::mutex> graph_lock(graph->mutex);
    (void)graph->retire(device, /*wait=*/true);
  }
  // No queue may keep a pointer to it. Queues are the device's; each is locked in turn.
  device.for_each_queue([graph](CommandQueue& queue) {
    std::lock_guard<std::mutex> lock(queue.mutex_);
    std::erase(queue.launched_, graph);
  });
  for (DeviceBlock* block : graph->blocks) device.pool().capture_unref(block);
  for (VkDescriptorPool pool : graph->batch->descriptor_pools) {
    vk.vkDestroyDescriptorPool(device.handle(), pool, nullptr);
  }
  vk.vkDestroyFence(device.handle(), graph->batch->fence, nullptr);
  {
    std::lock_guard<std::mutex> lock(owner.mutex_);
    vk.vkFreeCommandBuffers(device.handle(), owner.command_pool_, 1, &graph->batch->cmd);
  }
  delete graph;
}

}  // namespace sy_vk
