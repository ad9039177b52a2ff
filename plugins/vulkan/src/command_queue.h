// CommandQueue: the plugin's sy_queue. Ops are recorded into a command buffer and submitted in
// batches; the host waits only in finish(), read() and event_synchronize().
//
// Each batch has its own command buffer, fence, descriptor pools and host arena (parameter blocks
// and staging copies). A batch is submitted when it holds kCommandsPerBatch commands or when the
// host needs a result; it is recycled once its fence has signalled. Every recorded command is
// followed by a global memory barrier, and every batch starts with one, so ops see the results of
// all earlier ops on the queue, including those of earlier submissions.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "host_arena.h"
#include "status.h"
#include "switchyard/plugin_abi.h"

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
  // An op call begins on this queue (entry_dispatch): while capturing, calls are kept in order,
  // so that graph_update can name one by its index and check it names the same tensors.
  void begin_call(const sy_op_call& call);
  // graph_update: runs `run` (the op's dispatch code, on this queue, which captured `graph`)
  // with its dispatches matched against those captured for call `call_index` instead of
  // recorded: the same pipelines, bindings and workgroup counts. Once every one has matched, the
  // launch in flight (if any) is waited for and the captured parameter blocks take the new bytes.
  // UNIMPLEMENTED, with the graph unchanged, where the dispatches differ or the op writes.
  // INVALID_ARGUMENT where `call` is not the captured call with other params.
  Status update_captured_call(Graph& graph, uint64_t call_index, const sy_op_call& call,
                              const std::function<Status()>& run);
  // Submits `graph` after everything recorded here so far (waiting for its previous launch);
  // finish() and reads wait for it like for this queue's own batches.
  Status launch(Graph& graph);
  // The queue that captured `graph` (graph_update runs the op there).
  static CommandQueue& graph_owner(Graph& graph);
  // Waits for the graph's last launch and frees it; its capturing queue must still exist.
  static void destroy_graph(Graph* graph);
  // The serial of the batch this queue is recording, 0 when none (read without the queue's lock,
  // by other queues' order_use_locked).
  uint64_t recording_serial() const { return recording_serial_.load(std::memory_order_relaxed); }
  // Submits the batch this queue is recording if its serial is `serial` (see order_use_locked).
  Status submit_if_recording(uint64_t serial);

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
  // Before this queue records a command that touches `block` (in its batch `own_serial`, or in
  // a graph launch: 0): where the block's last use is in a batch another queue is still recording
  // (memory released there and handed out again here, or a buffer shared between queues), that
  // batch is submitted first. Both batches go to the one VkQueue and every batch starts with a
  // barrier, so the earlier work then runs first, whichever queue submits next; without this, the
  // later queue's batch could overwrite the block before the earlier queue's queued work read it.
  Status order_use_locked(const DeviceBlock& block, uint64_t own_serial);
  Status read_through_staging(DeviceBlock* src, uint64_t src_offset, void* dst,
                              uint64_t size_bytes);
  // Notes that the batch being captured names `block`.
  void note_captured(DeviceBlock* block);
  Status refuse_while_capturing(const char* what);
  void discard_capture_locked();
  // Retires this queue's graph launches that completed (all of them when wait_all).
  Status retire_graphs_locked(bool wait_all);

  // One dispatch recorded while capturing, for graph_update to match and rewrite.
  struct CapturedDispatch {
    uint64_t call = 0;  // the op call it belongs to (begin_call's count), UINT64_MAX outside one
    const Pipeline* pipeline = nullptr;
    void* params_host = nullptr;  // the parameter block in the graph's host arena
    size_t params_bytes = 0;
    uint32_t groups[3] = {};
    std::vector<BufferBinding> bindings;
  };
  struct Update;
  Status update_dispatch_locked(const Pipeline& pipeline, const void* params, size_t params_bytes,
                                std::span<const BufferBinding> tensors, const uint32_t groups[3]);

  VulkanDevice& device_;
  std::mutex mutex_;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  std::unique_ptr<Batch> recording_;
  std::atomic<uint64_t> recording_serial_{0};  // recording_->serial, or 0
  std::deque<std::unique_ptr<Batch>> in_flight_;
  std::vector<std::unique_ptr<Batch>> spare_;
  std::unique_ptr<Batch> capturing_;  // the batch being captured, while capturing
  std::vector<DeviceBlock*> captured_blocks_;
  std::string capture_failure_;   // the first call that could not be captured
  std::vector<Graph*> launched_;  // graphs launched here whose launch may not have completed
  std::vector<sy_op_call> capture_calls_;  // op calls begun while capturing
  std::vector<CapturedDispatch> capture_dispatches_;
  std::unique_ptr<Update> update_;  // while update_captured_call runs the op
};

}  // namespace sy_vk
