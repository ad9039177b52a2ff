// Shared by the files that implement the plugin's C ABI (entry_*.cpp, plugin_entry.cpp).
#pragma once

#include <exception>
#include <string>

#include "command_queue.h"
#include "device.h"
#include "memory_pool.h"
#include "status.h"
#include "switchyard/plugin_abi.h"

namespace sy_vk {

inline VulkanDevice* as_device(sy_device device) {
  return reinterpret_cast<VulkanDevice*>(device);
}
inline CommandQueue* as_queue(sy_queue queue) {
  return reinterpret_cast<CommandQueue*>(queue);
}
inline DeviceBlock* as_block(sy_buffer buffer) {
  return reinterpret_cast<DeviceBlock*>(buffer);
}

// Runs `body`, turns exceptions into INTERNAL, and (with validation on) fails the call when the
// validation layer said anything while it ran.
template <typename Body>
sy_status guarded(VulkanDevice* device, const char* what, Body&& body) {
  try {
    const uint64_t first_message = device != nullptr ? device->validation_message_count() : 0;
    Status status = body();
    if (status.ok() && device != nullptr) {
      status = device->validation_status(first_message).with_context(what);
    }
    return report(status);
  } catch (const std::exception& error) {
    return report(internal_error(std::string(what) + ": " + error.what()));
  } catch (...) {
    return report(internal_error(std::string(what) + ": unknown exception"));
  }
}

// The function-table entries, defined in entry_devices.cpp and entry_runtime.cpp.
const char* entry_last_error_message();
sy_status entry_device_count(uint32_t* count);
sy_status entry_device_properties(uint32_t index, sy_device_properties* props);
sy_status entry_device_create(uint32_t index, const sy_option* options, size_t option_count,
                              sy_device* out_device);
void entry_device_destroy(sy_device device);
sy_status entry_device_settings(sy_device device, char* buffer, size_t size);
sy_status entry_buffer_allocate(sy_device device, uint64_t size_bytes, sy_buffer* out_buffer);
void entry_buffer_release(sy_device device, sy_buffer buffer);
sy_status entry_queue_create(sy_device device, sy_queue* out_queue);
void entry_queue_destroy(sy_device device, sy_queue queue);
sy_status entry_queue_finish(sy_device device, sy_queue queue);
sy_status entry_buffer_write(sy_device device, sy_queue queue, sy_buffer dst, uint64_t dst_offset,
                             const void* src, uint64_t size_bytes);
sy_status entry_buffer_read(sy_device device, sy_queue queue, sy_buffer src, uint64_t src_offset,
                            void* dst, uint64_t size_bytes);
sy_status entry_event_create(sy_device device, sy_event* out_event);
void entry_event_destroy(sy_device device, sy_event event);
sy_status entry_event_record(sy_device device, sy_queue queue, sy_event event);
sy_status entry_event_synchronize(sy_device device, sy_event event);
sy_status entry_event_elapsed_ms(sy_device device, sy_event start, sy_event end, double* out_ms);
int entry_supports_op(sy_device device, uint32_t op, uint32_t dtype);
sy_status entry_dispatch(sy_device device, sy_queue queue, const sy_op_call* call);
sy_status entry_queue_capture_begin(sy_device device, sy_queue queue);
sy_status entry_queue_capture_end(sy_device device, sy_queue queue, sy_graph* out_graph);
sy_status entry_graph_launch(sy_device device, sy_queue queue, sy_graph graph);
sy_status entry_graph_update(sy_device device, sy_graph graph, uint64_t call_index,
                             const sy_op_call* call);
void entry_graph_destroy(sy_device device, sy_graph graph);
sy_status entry_memory_stats(sy_device device, sy_memory_stats* out_stats);
sy_status entry_memory_reset_peak(sy_device device);
sy_status entry_memory_empty_cache(sy_device device);
sy_status entry_memory_set_limit(sy_device device, uint64_t limit_bytes);

}  // namespace sy_vk
