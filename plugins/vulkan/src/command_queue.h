// CommandQueue: the plugin's sy_queue. Ops are recorded into a command buffer and submitted in
// batches; the host waits only in finish(), read() and event_synchronize().
//
// Each batch has its own command buffer, fence, descriptor pools and host arena (parameter blocks
// and staging copies). A batch is submitted when it holds kCommandsPerBatch commands or when the
// host needs a result; it is recycled once its fence has signalled. Every recorded command is
// followed by a global memory barrier, and every batch starts with one, so ops see the results of
// all earlier ops on the queue, including those of earlier submissions.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "host_arena.h"
#include "status.h"

namespace sy_vk {

class VulkanDevice;
struct DeviceBlock;
struct Pipeline;

// One storage-buffer binding of a dispatch: a window of a tensor buffer.
struct BufferBinding {
  DeviceBlock* block = nullptr;
  uint64_t offset_bytes = 0;  // multiple of minStorageBufferOffsetAlignment
  uint64_t range_bytes = 0;
};

// Timestamp for sy_event: a one-query pool written by the queue.
struct TimestampEvent {
  VkQueryPool pool = VK_NULL_HANDLE;
  uint64_t serial = 0;  // batch that wrote it; 0 = never recorded
  class CommandQueue* queue = nullptr;
};

class CommandQueue {
 public:
  // A batch captured once and submitted on every launch (native replay, docs/capture.md).
  struct Graph;

  static Status create(VulkanDevice& device, std::unique_ptr<CommandQueue>* out);
  ~CommandQueue();
  CommandQueue(const CommandQueue&) = delete;
  CommandQueue& operator=(const CommandQueue&) = delete;

  // Records one dispatch of `pipeline` with the parameter block `params` (binding 0) and the
  // tensor bindings 1..n, over groups_x * groups_y * groups_z workgroups.
  Status dispatch(const Pipeline& pipeline, const void* params, size_t params_bytes,
                  std::span<const BufferBinding> tensors, uint32_t groups_x, uint32_t groups_y = 1,
                  uint32_t groups_z = 1);
  // Host to device; returns once `src` may be reused: the bytes are either in a staging buffer
  // with a copy recorded, or (mapped memory no pending work uses) already in place.
  Status write(DeviceBlock* dst, uint64_t dst_offset, const void* src, uint64_t size_bytes);
  // Device to host; submits what is recorded and waits for it.
  Status read(DeviceBlock* src, uint64_t src_offset, void* dst, uint64_t size_bytes);
  // Submits what is recorded and waits for every batch.
  Status finish();
  Status record_timestamp(TimestampEvent* event);
  // Waits until the batch that recorded `event` has completed.
  Status wait_for_event(const TimestampEvent& event);

  // Native capture: between begin_capture and end_capture, dispatches and writes go into a batch
  // of their own that is never submitted here (reads, finish and timestamps fail and spoil the
  // capture); end_capture hands it over as a Graph. The blocks it names are referenced in the
  // pool, so that scratch released meanwhile is not handed out again while the graph lives.
  Status begin_capture();
  Status end_capture(Graph** out);
  // Submits `graph` after everything recorded here so far (waiting for its previous launch);
  // finish() and reads wait for it like for this queue's own batches.
  Status launch(Graph& graph);
  // Waits for the graph's last launch and frees it; its capturing queue must still exist.
  static void destroy_graph(Graph* graph);

 private:
  struct Batch;
  explicit CommandQueue(VulkanDevice& device);
  Status current_batch(Batch** out);
  Status new_batch(std::unique_ptr<Batch>* out);
  Status allocate_descriptor_set(Batch& batch, VkDescriptorSetLayout layout, VkDescriptorSet* out);
  void record_barrier(VkCommandBuffer cmd, VkPipelineStageFlags dst_stages,
                      VkAccessFlags dst_access);
  void after_command(Batch& batch);
  Status submit_locked();
  Status wait_locked(bool wait_all);
  Status read_through_staging(DeviceBlock* src, uint64_t src_offset, void* dst,
                              uint64_t size_bytes);
  // Notes that the batch being captured names `block`.
  void note_captured(DeviceBlock* block);
  Status refuse_while_capturing(const char* what);
  void discard_capture_locked();
  // Retires this queue's graph launches that completed (all of them when wait_all).
  Status retire_graphs_locked(bool wait_all);

  VulkanDevice& device_;
  std::mutex mutex_;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  std::unique_ptr<Batch> recording_;
  std::deque<std::unique_ptr<Batch>> in_flight_;
  std::vector<std::unique_ptr<Batch>> spare_;
  std::unique_ptr<Batch> capturing_;  // the batch being captured, while capturing
  std::vector<DeviceBlock*> captured_blocks_;
  std::string capture_failure_;   // the first call that could not be captured
  std::vector<Graph*> launched_;  // graphs launched here whose launch may not have completed
};

}  // namespace sy_vk
