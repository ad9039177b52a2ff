// The reference plugin's ABI surface: the descriptor, the function table, and the boundary that
// turns every C++ failure into a status code plus the calling thread's last-error message.
//
// The reference is the plain-C++ oracle of the op set (docs/ops.md): one CPU device, host memory,
// synchronous queues. Everything here is a thin adapter; the work lives in the other files.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "device.h"
#include "dispatch.h"
#include "error.h"
#include "switchyard/plugin_abi.h"

namespace sy_reference {
namespace {

// Runs `body` and converts whatever it throws into a status; no exception leaves the plugin.
template <class Body>
sy_status guarded(Body&& body) noexcept {
  try {
    body();
    return SY_STATUS_OK;
  } catch (const PluginError& error) {
    set_last_error_message(error.what());
    return error.status();
  } catch (const std::bad_alloc&) {
    set_last_error_message("reference: out of host memory");
    return SY_STATUS_RESOURCE_EXHAUSTED;
  } catch (const std::exception& error) {
    set_last_error_message(std::string("reference: internal error: ") + error.what());
    return SY_STATUS_INTERNAL;
  } catch (...) {
    set_last_error_message("reference: internal error: unknown exception");
    return SY_STATUS_INTERNAL;
  }
}

void require_non_null(const void* pointer, const char* what) {
  if (pointer == nullptr) {
    raise(SY_STATUS_INVALID_ARGUMENT, std::string("reference: ") + what + " is null");
  }
}

void require_device_index(uint32_t index) {
  if (index != 0) {
    raise(SY_STATUS_NOT_FOUND, "reference: device index " + std::to_string(index) +
                                   " does not exist (the reference has exactly 1 device, index 0)");
  }
}

void require_range(const sy_buffer_s* buffer, uint64_t offset, uint64_t size_bytes,
                   const char* what) {
  if (offset > buffer->size_bytes || size_bytes > buffer->size_bytes - offset) {
    raise(SY_STATUS_INVALID_ARGUMENT, std::string("reference: ") + what + " of " +
                                          std::to_string(size_bytes) + " bytes at offset " +
                                          std::to_string(offset) + " exceeds the buffer's " +
                                          std::to_string(buffer->size_bytes) + " bytes");
  }
}

const char* ref_last_error_message() {
  return last_error_message();
}

sy_status ref_device_count(uint32_t* count) {
  return guarded([&] {
    require_non_null(count, "count");
    *count = 1;
  });
}

sy_status ref_device_properties(uint32_t index, sy_device_properties* props) {
  return guarded([&] {
    require_non_null(props, "props");
    require_device_index(index);
    // Fill a full struct and copy as much as the host's (possibly older, smaller) struct holds.
    sy_device_properties full{};
    full.struct_size = sizeof(sy_device_properties);
    fill_device_properties(&full);
    const uint32_t host_size = props->struct_size;
    const size_t copy_bytes = host_size < sizeof(full) ? host_size : sizeof(full);
    std::memcpy(props, &full, copy_bytes);
    props->struct_size = host_size;
  });
}

sy_status ref_device_create(uint32_t index, const sy_option* options, size_t option_count,
                            sy_device* out_device) {
  return guarded([&] {
    require_non_null(out_device, "out_device");
    require_device_index(index);
    if (option_count > 0) require_non_null(options, "options");
    const DeviceOptions parsed = parse_device_options(options, option_count);
    *out_device = new sy_device_s(parsed.memory_limit_bytes, parsed.deterministic);
  });
}

void ref_device_destroy(sy_device device) {
  delete device;
}

sy_status ref_buffer_allocate(sy_device device, uint64_t size_bytes, sy_buffer* out_buffer) {
  return guarded([&] {
    require_non_null(device, "device");
    require_non_null(out_buffer, "out_buffer");
    *out_buffer = device->pool.allocate(size_bytes);
  });
}

void ref_buffer_release(sy_device device, sy_buffer buffer) {
  if (device != nullptr && buffer != nullptr) device->pool.release(buffer);
}

void* ref_buffer_host_address(sy_device device, sy_buffer buffer) {
  (void)device;
  return buffer == nullptr ? nullptr : buffer->data;
}

sy_status ref_queue_create(sy_device device, sy_queue* out_queue) {
  return guarded([&] {
    require_non_null(device, "device");
    require_non_null(out_queue, "out_queue");
    *out_queue = new sy_queue_s{device};
  });
}

void ref_queue_destroy(sy_device device, sy_queue queue) {
  (void)device;
  delete queue;
}

// Every call already ran to completion when it returned.
sy_status ref_queue_finish(sy_device device, sy_queue queue) {
  (void)device;
  (void)queue;
  return SY_STATUS_OK;
}

sy_status ref_buffer_write(sy_device device, sy_queue queue, sy_buffer dst, uint64_t dst_offset,
                           const void* src, uint64_t size_bytes) {
  (void)queue;
  return guarded([&] {
    require_non_null(device, "device");
    require_non_null(dst, "dst buffer");
    require_range(dst, dst_offset, size_bytes, "write");
    if (size_bytes > 0) {
      require_non_null(src, "src");
      std::memcpy(dst->data + dst_offset, src, size_bytes);
    }
  });
}

sy_status ref_buffer_read(sy_device device, sy_queue queue, sy_buffer src, uint64_t src_offset,
                          void* dst, uint64_t size_bytes) {
  (void)queue;
  return guarded([&] {
    require_non_null(device, "device");
    require_non_null(src, "src buffer");
    require_range(src, src_offset, size_bytes, "read");
    if (size_bytes > 0) {
      require_non_null(dst, "dst");
      std::memcpy(dst, src->data + src_offset, size_bytes);
    }
  });
}

sy_status ref_event_create(sy_device device, sy_event* out_event) {
  (void)device;
  return guarded([&] {
    require_non_null(out_event, "out_event");
    *out_event = new sy_event_s{};
  });
}

void ref_event_destroy(sy_device device, sy_event event) {
  (void)device;
  delete event;
}

sy_status ref_event_record(sy_device device, sy_queue queue, sy_event event) {
  (void)device;
  (void)queue;
  return guarded([&] {
    require_non_null(event, "event");
    event->time = std::chrono::steady_clock::now();
    event->recorded = true;
  });
}

sy_status ref_event_synchronize(sy_device device, sy_event event) {
  (void)device;
  return guarded([&] { require_non_null(event, "event"); });
}

sy_status ref_event_elapsed_ms(sy_device device, sy_event start, sy_event end, double* out_ms) {
  (void)device;
  return guarded([&] {
    require_non_null(start, "start event");
    require_non_null(end, "end event");
    require_non_null(out_ms, "out_ms");
    if (!start->recorded || !end->recorded) {
      raise(SY_STATUS_FAILED_PRECONDITION, "reference: event_elapsed_ms needs two recorded events");
    }
    *out_ms = std::chrono::duration<double, std::milli>(end->time - start->time).count();
  });
}

int ref_supports_op(sy_device device, uint32_t op, uint32_t dtype) {
  (void)device;
  return reference_supports_op(op, dtype) ? 1 : 0;
}

sy_status ref_dispatch(sy_device device, sy_queue queue, const sy_op_call* call) {
  (void)queue;
  return guarded([&] {
    require_non_null(device, "device");
    require_non_null(call, "call");
    dispatch_op(device, *call);
  });
}

sy_status ref_memory_stats(sy_device device, sy_memory_stats* out_stats) {
  return guarded([&] {
    require_non_null(device, "device");
    require_non_null(out_stats, "out_stats");
    *out_stats = device->pool.stats();
  });
}

sy_status ref_memory_reset_peak(sy_device device) {
  return guarded([&] {
    require_non_null(device, "device");
    device->pool.reset_peak();
  });
}

sy_status ref_memory_empty_cache(sy_device device) {
  return guarded([&] {
    require_non_null(device, "device");
    device->pool.empty_cache();
  });
}

sy_status ref_memory_set_limit(sy_device device, uint64_t limit_bytes) {
  return guarded([&] {
    require_non_null(device, "device");
    device->pool.set_limit(limit_bytes);
  });
}

// One thread, fixed order: nothing else varies, so the line has nothing else to say.
sy_status ref_device_settings(sy_device device, char* buffer, size_t size) {
  return guarded([&] {
    require_non_null(device, "device");
    require_non_null(buffer, "buffer");
    if (size == 0) raise(SY_STATUS_INVALID_ARGUMENT, "reference: device_settings buffer size is 0");
    std::snprintf(buffer, size, "threads=1 deterministic=%s", device->deterministic ? "on" : "off");
  });
}

const sy_plugin_functions kFunctions = {ref_last_error_message,
                                        ref_device_count,
                                        ref_device_properties,
                                        ref_device_create,
                                        ref_device_destroy,
                                        ref_buffer_allocate,
                                        ref_buffer_release,
                                        ref_buffer_host_address,
                                        ref_queue_create,
                                        ref_queue_destroy,
                                        ref_queue_finish,
                                        ref_buffer_write,
                                        ref_buffer_read,
                                        ref_event_create,
                                        ref_event_destroy,
                                        ref_event_record,
                                        ref_event_synchronize,
                                        ref_event_elapsed_ms,
                                        ref_supports_op,
                                        ref_dispatch,
                                        ref_memory_stats,
                                        ref_memory_reset_peak,
                                        ref_memory_empty_cache,
                                        ref_memory_set_limit,
                                        ref_device_settings,
                                        nullptr,
                                        nullptr,
                                        nullptr,
                                        nullptr,
                                        nullptr,
                                        {}};

}  // namespace
}  // namespace sy_reference

namespace {
const sy_plugin_descriptor kDescriptor = {
    SY_ABI_VERSION,
    sizeof(sy_plugin_descriptor),
    "reference",
    "0.1.0",
    "plain C++ implementation of every op: the oracle other backends are compared with",
    SY_CAP_HOST_MEMORY,
    {},
    &sy_reference::kFunctions};
}  // namespace

extern "C" {
SY_DEFINE_PLUGIN_ENTRY(kDescriptor)
}
