// The one exported symbol: switchyard_plugin_entry returns this plugin's descriptor.
#include "entry_common.h"

namespace {

const sy_plugin_functions kFunctions = [] {
  sy_plugin_functions f{};
  f.last_error_message = sy_vk::entry_last_error_message;
  f.device_count = sy_vk::entry_device_count;
  f.device_properties = sy_vk::entry_device_properties;
  f.device_create = sy_vk::entry_device_create;
  f.device_destroy = sy_vk::entry_device_destroy;
  f.buffer_allocate = sy_vk::entry_buffer_allocate;
  f.buffer_release = sy_vk::entry_buffer_release;
  f.buffer_host_address = nullptr;  // device memory is reached only through the queue
  f.queue_create = sy_vk::entry_queue_create;
  f.queue_destroy = sy_vk::entry_queue_destroy;
  f.queue_finish = sy_vk::entry_queue_finish;
  f.buffer_write = sy_vk::entry_buffer_write;
  f.buffer_read = sy_vk::entry_buffer_read;
  f.event_create = sy_vk::entry_event_create;
  f.event_destroy = sy_vk::entry_event_destroy;
  f.event_record = sy_vk::entry_event_record;
  f.event_synchronize = sy_vk::entry_event_synchronize;
  f.event_elapsed_ms = sy_vk::entry_event_elapsed_ms;
  f.supports_op = sy_vk::entry_supports_op;
  f.dispatch = sy_vk::entry_dispatch;
  f.memory_stats = sy_vk::entry_memory_stats;
  f.memory_reset_peak = sy_vk::entry_memory_reset_peak;
  f.memory_empty_cache = sy_vk::entry_memory_empty_cache;
  f.memory_set_limit = sy_vk::entry_memory_set_limit;
  f.device_settings = sy_vk::entry_device_settings;
  f.queue_capture_begin = sy_vk::entry_queue_capture_begin;
  f.queue_capture_end = sy_vk::entry_queue_capture_end;
  f.graph_launch = sy_vk::entry_graph_launch;
  f.graph_destroy = sy_vk::entry_graph_destroy;
  f.graph_update = sy_vk::entry_graph_update;
  return f;
}();

const sy_plugin_descriptor kDescriptor = {
    SY_ABI_VERSION,
    sizeof(sy_plugin_descriptor),
    "vulkan",
    "0.1.0",
    "Vulkan 1.2 compute through the system loader (dlopen), GLSL shaders compiled at build time",
    SY_CAP_ASYNC | SY_CAP_DEVICE_TIMING,
    {0, 0, 0, 0, 0, 0, 0, 0},
    &kFunctions,
};

}  // namespace

extern "C" {
SY_DEFINE_PLUGIN_ENTRY(kDescriptor)
}
