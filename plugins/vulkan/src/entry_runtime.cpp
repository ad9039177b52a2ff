// Buffers, queues, events, ops and memory control of the C ABI.
#include <memory>
#include <string>

#include "entry_common.h"
#include "ops.h"

namespace sy_vk {
namespace {

Status check_range(const char* what, DeviceBlock* block, uint64_t offset, uint64_t size_bytes) {
  if (offset > block->requested_bytes || size_bytes > block->requested_bytes - offset) {
    return invalid_argument(std::string(what) + ": bytes [" + std::to_string(offset) + ", " +
                            std::to_string(offset + size_bytes) + ") outside a buffer of " +
                            std::to_string(block->requested_bytes) + " bytes");
  }
  return ok_status();
}

Status check_handles(VulkanDevice* device, CommandQueue* queue, DeviceBlock* block,
                     const char* what) {
  if (device == nullptr || queue == nullptr) {
    return invalid_argument(std::string(what) + ": null device or queue");
  }
  if (block != nullptr && !device->pool().owns(block)) {
    return invalid_argument(std::string(what) + ": the buffer is not a live buffer of this device");
  }
  return ok_status();
}

}  // namespace

sy_status entry_buffer_allocate(sy_device device, uint64_t size_bytes, sy_buffer* out_buffer) {
  VulkanDevice* dev = as_device(device);
  return guarded(dev, "vulkan buffer_allocate", [&]() -> Status {
    DeviceBlock* block = nullptr;
    SY_VK_RETURN_IF_ERROR(dev->pool().allocate(size_bytes, &block));
    *out_buffer = reinterpret_cast<sy_buffer>(block);
    return ok_status();
  });
}

void entry_buffer_release(sy_device device, sy_buffer buffer) {
  if (device != nullptr && buffer != nullptr) as_device(device)->pool().release(as_block(buffer));
}

sy_status entry_queue_create(sy_device device, sy_queue* out_queue) {
  VulkanDevice* dev = as_device(device);
  return guarded(dev, "vulkan queue_create", [&]() -> Status {
    std::unique_ptr<CommandQueue> queue;
    SY_VK_RETURN_IF_ERROR(CommandQueue::create(*dev, &queue));
    *out_queue = reinterpret_cast<sy_queue>(queue.release());
    return ok_status();
  });
}

void entry_queue_destroy(sy_device /*device*/, sy_queue queue) {
  try {
    delete as_queue(queue);
  } catch (...) {
    set_last_error("vulkan queue_destroy threw");
  }
}

sy_status entry_queue_finish(sy_device device, sy_queue queue) {
  VulkanDevice* dev = as_device(device);
  return guarded(dev, "vulkan queue_finish", [&]() -> Status {
    SY_VK_RETURN_IF_ERROR(check_handles(dev, as_queue(queue), nullptr, "queue_finish"));
    return as_queue(queue)->finish();
  });
}

sy_status entry_buffer_write(sy_device device, sy_queue queue, sy_buffer dst, uint64_t dst_offset,
                             const void* src, uint64_t size_bytes) {
  VulkanDevice* dev = as_device(device);
  return guarded(dev, "vulkan buffer_write", [&]() -> Status {
    SY_VK_RETURN_IF_ERROR(check_handles(dev, as_queue(queue), as_block(dst), "buffer_write"));
    SY_VK_RETURN_IF_ERROR(check_range("buffer_write", as_block(dst), dst_offset, size_bytes));
    if (src == nullptr && size_bytes != 0) return invalid_argument("buffer_write: src is null");
    return as_queue(queue)->write(as_block(dst), dst_offset, src, size_bytes);
  });
}

sy_status entry_buffer_read(sy_device device, sy_queue queue, sy_buffer src, uint64_t src_offset,
                            void* dst, uint64_t size_bytes) {
  VulkanDevice* dev = as_device(device);
  return guarded(dev, "vulkan buffer_read", [&]() -> Status {
    SY_VK_RETURN_IF_ERROR(check_handles(dev, as_queue(queue), as_block(src), "buffer_read"));
    SY_VK_RETURN_IF_ERROR(check_range("buffer_read", as_block(src), src_offset, size_bytes));
    if (dst == nullptr && size_bytes != 0) return invalid_argument("buffer_read: dst is null");
    return as_queue(queue)->read(as_block(src), src_offset, dst, size_bytes);
  });
}

sy_status entry_event_create(sy_device device, sy_event* out_event) {
  VulkanDevice* dev = as_device(device);
  return guarded(dev, "vulkan event_create", [&]() -> Status {
    if (dev->physical().timestamp_valid_bits == 0) {
      return unimplemented("the compute queue of this Vulkan device has no timestamps");
    }
    auto event = std::make_unique<TimestampEvent>();
    VkQueryPoolCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = 1;
    SY_VK_CALL(dev->api().vkCreateQueryPool(dev->handle(), &info, nullptr, &event->pool),
               "vkCreateQueryPool");
    *out_event = reinterpret_cast<sy_event>(event.release());
    return ok_status();
  });
}

void entry_event_destroy(sy_device device, sy_event event) {
  auto* timestamp = reinterpret_cast<TimestampEvent*>(event);
  if (device == nullptr || timestamp == nullptr) return;
  VulkanDevice* dev = as_device(device);
  // The query may still be written by a batch in flight.
  if (timestamp->queue != nullptr) (void)timestamp->queue->wait_for_event(*timestamp);
  dev->api().vkDestroyQueryPool(dev->handle(), timestamp->pool, nullptr);
  delete timestamp;
}

sy_status entry_event_record(sy_device device, sy_queue queue, sy_event event) {
  VulkanDevice* dev = as_device(device);
  return guarded(dev, "vulkan event_record", [&]() -> Status {
    SY_VK_RETURN_IF_ERROR(check_handles(dev, as_queue(queue), nullptr, "event_record"));
    return as_queue(queue)->record_timestamp(reinterpret_cast<TimestampEvent*>(event));
  });
}

sy_status entry_event_synchronize(sy_device device, sy_event event) {
  VulkanDevice* dev = as_device(device);
  return guarded(dev, "vulkan event_synchronize", [&]() -> Status {
    auto* timestamp = reinterpret_cast<TimestampEvent*>(event);
    if (timestamp == nullptr || timestamp->queue == nullptr) {
      return {SY_STATUS_FAILED_PRECONDITION, "event_synchronize: the event was never recorded"};
    }
    return timestamp->queue->wait_for_event(*timestamp);
  });
}

sy_status entry_event_elapsed_ms(sy_device device, sy_event start, sy_event end, double* out_ms) {
  VulkanDevice* dev = as_device(device);
  return guarded(dev, "vulkan event_elapsed_ms", [&]() -> Status {
    uint64_t ticks[2] = {0, 0};
    const sy_event events[2] = {start, end};
    for (int i = 0; i < 2; ++i) {
      auto* timestamp = reinterpret_cast<TimestampEvent*>(events[i]);
      if (timestamp == nullptr || timestamp->queue == nullptr) {
        return {SY_STATUS_FAILED_PRECONDITION, "event_elapsed_ms: an event was never recorded"};
      }
      SY_VK_RETURN_IF_ERROR(timestamp->queue->wait_for_event(*timestamp));
      SY_VK_CALL(dev->api().vkGetQueryPoolResults(
                     dev->handle(), timestamp->pool, 0, 1, sizeof(uint64_t), &ticks[i],
                     sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
                 "vkGetQueryPoolResults");
    }
    const double period_ns = dev->limits().timestampPeriod;
    *out_ms = static_cast<double>(static_cast<int64_t>(ticks[1] - ticks[0])) * period_ns * 1e-6;
    return ok_status();
  });
}

int entry_supports_op(sy_device device, uint32_t op, uint32_t dtype) {
  try {
    return device != nullptr && op_supported(*as_device(device), op, dtype) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

sy_status entry_dispatch(sy_device device, sy_queue queue, const sy_op_call* call) {
  VulkanDevice* dev = as_device(device);
  return guarded(dev, "vulkan dispatch", [&]() -> Status {
    SY_VK_RETURN_IF_ERROR(check_handles(dev, as_queue(queue), nullptr, "dispatch"));
    if (call == nullptr) return invalid_argument("dispatch: call is null");
    as_queue(queue)->begin_call(*call);
    const OpContext ctx{*dev, *as_queue(queue), *call};
    return dispatch_op(ctx);
  });
}

sy_status entry_memory_stats(sy_device device, sy_memory_stats* out_stats) {
  VulkanDevice* dev = as_device(device);
  return guarded(dev, "vulkan memory_stats", [&]() -> Status {
    *out_stats = dev->pool().stats();
    return ok_status();
  });
}

sy_status entry_memory_reset_peak(sy_device device) {
  VulkanDevice* dev = as_device(device);
  return guarded(dev, "vulkan memory_reset_peak", [&]() -> Status {
    dev->pool().reset_peak();
    return ok_status();
  });
}

sy_status entry_memory_empty_cache(sy_device device) {
  VulkanDevice* dev = as_device(device);
  return guarded(dev, "vulkan memory_empty_cache", [&]() -> Status { return dev->empty_cache(); });
}

sy_status entry_memory_set_limit(sy_device device, uint64_t limit_bytes) {
  VulkanDevice* dev = as_device(device);
  return guarded(dev, "vulkan memory_set_limit", [&]() -> Status {
    dev->pool().set_limit(limit_bytes);
    return ok_status();
  });
}

// ---- native capture (docs/capture.md) ----------------------------------------------------------

sy_status entry_queue_capture_begin(sy_device device, sy_queue queue) {
  VulkanDevice* dev = as_device(device);
  return guarded(dev, "vulkan queue_capture_begin", [&]() -> Status {
    SY_VK_RETURN_IF_ERROR(check_handles(dev, as_queue(queue), nullptr, "queue_capture_begin"));
    return as_queue(queue)->begin_capture();
  });
}

sy_status entry_queue_capture_end(sy_device device, sy_queue queue, sy_graph* out_graph) {
  VulkanDevice* dev = as_device(device);
  return guarded(dev, "vulkan queue_capture_end", [&]() -> Status {
    SY_VK_RETURN_IF_ERROR(check_handles(dev, as_queue(queue), nullptr, "queue_capture_end"));
    if (out_graph == nullptr) return invalid_argument("queue_capture_end: out_graph is null");
    CommandQueue::Graph* graph = nullptr;
    SY_VK_RETURN_IF_ERROR(as_queue(queue)->end_capture(&graph));
    *out_graph = reinterpret_cast<sy_graph>(graph);
    return ok_status();
  });
}

sy_status entry_graph_launch(sy_device device, sy_queue queue, sy_graph graph) {
  VulkanDevice* dev = as_device(device);
  return guarded(dev, "vulkan graph_launch", [&]() -> Status {
    SY_VK_RETURN_IF_ERROR(check_handles(dev, as_queue(queue), nullptr, "graph_launch"));
    if (graph == nullptr) return invalid_argument("graph_launch: null graph");
    return as_queue(queue)->launch(*reinterpret_cast<CommandQueue::Graph*>(graph));
  });
}

sy_status entry_graph_update(sy_device device, sy_graph graph, uint64_t call_index,
                             const sy_op_call* call) {
  VulkanDevice* dev = as_device(device);
  return guarded(dev, "vulkan graph_update", [&]() -> Status {
    if (graph == nullptr || call == nullptr) {
      return invalid_argument("graph_update: null graph or call");
    }
    auto* captured = reinterpret_cast<CommandQueue::Graph*>(graph);
    CommandQueue& owner = CommandQueue::graph_owner(*captured);
    return owner.update_captured_call(*captured, call_index, *call, [&] {
      const OpContext ctx{*dev, owner, *call};
      return dispatch_op(ctx);
    });
  });
}

void entry_graph_destroy(sy_device /*device*/, sy_graph graph) {
  try {
    CommandQueue::destroy_graph(reinterpret_cast<CommandQueue::Graph*>(graph));
  } catch (...) {
    set_last_error("vulkan graph_destroy threw");
  }
}

}  // namespace sy_vk
