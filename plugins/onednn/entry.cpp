// The plugin's ABI face: the function table and the one exported entry symbol. Every function
// adapts one C call to the C++ objects in device.h and converts failures with guarded().
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>

#include "cpu_info.h"
#include "device.h"
#include "dispatch.h"
#include "error.h"

namespace sy_onednn {
namespace {

void copy_text(char* dst, size_t capacity, const std::string& text) {
  size_t count = std::min(capacity - 1, text.size());
  std::memcpy(dst, text.data(), count);
  dst[count] = '\0';
}

void check_index(const char* what, uint32_t index) {
  if (index != 0) {
    fail(SY_STATUS_NOT_FOUND, cat("onednn ", what, ": no device ", index, " (there is 1 device)"));
  }
}

const char* last_error() {
  return last_error_message();
}

sy_status device_count(uint32_t* count) {
  return guarded("device_count", [&] { *count = 1; });
}

sy_status device_properties(uint32_t index, sy_device_properties* props) {
  return guarded("device_properties", [&] {
    check_index("device_properties", index);
    if (props == nullptr || props->struct_size < sizeof(sy_device_properties)) {
      fail_invalid("onednn device_properties: struct_size is smaller than this plugin's");
    }
    CpuInfo cpu = read_cpu_info();
    uint32_t struct_size = props->struct_size;
    std::memset(props, 0, sizeof(*props));
    props->struct_size = struct_size;
    props->type = SY_DEVICE_TYPE_CPU;
    copy_text(props->name, sizeof(props->name), cpu.model_name);
    copy_text(props->vendor, sizeof(props->vendor), cpu.vendor);
    copy_text(props->driver_version, sizeof(props->driver_version), onednn_version_string());
    copy_text(props->runtime_version, sizeof(props->runtime_version),
              cat("OpenMP ", _OPENMP, " (", default_thread_count(), " threads)"));
    props->memory_total_bytes = cpu.memory_total_bytes;
    props->memory_free_bytes = cpu.memory_free_bytes;
    props->compute_units = cpu.cores;
    copy_text(props->details, sizeof(props->details),
              cat("ISA ", effective_isa_name(), "; ", cpu.cores, " cores; ",
                  onednn_version_string(), " (OpenMP); ",
                  // oneDNN 2.6's bf16 kernels need an AVX-512 ISA; below it bf16 goes through
                  // f32 copies (README: Dtypes).
                  cpu_has_avx512f() ? "f32 bf16 native, f16 computed in f32"
                                    : "f32 native, bf16 and f16 computed in f32"));
  });
}

sy_status device_create(uint32_t index, const sy_option* options, size_t option_count,
                        sy_device* out_device) {
  return guarded("device_create", [&] {
    check_index("device_create", index);
    CpuInfo cpu = read_cpu_info();
    DeviceOptions parsed = parse_device_options(options, option_count, cpu.memory_total_bytes);
    *out_device = new sy_device_s(cpu, parsed);
  });
}

void device_destroy(sy_device device) {
  delete device;
}

sy_status buffer_allocate(sy_device device, uint64_t size_bytes, sy_buffer* out_buffer) {
  return guarded("buffer_allocate", [&] {
    static std::atomic<uint64_t> next_id{1};
    auto buffer = std::make_unique<sy_buffer_s>();
    buffer->id = next_id.fetch_add(1, std::memory_order_relaxed);
    buffer->data = device->pool.allocate_or_throw(size_bytes, &buffer->block_bytes);
    buffer->size_bytes = size_bytes;
    *out_buffer = buffer.release();
  });
}

void buffer_release(sy_device device, sy_buffer buffer) {
  if (buffer == nullptr) return;
  device->weights.forget(buffer->id);
  device->pool.release(buffer->data);
  delete buffer;
}

void* buffer_host_address(sy_device, sy_buffer buffer) {
  return buffer ? buffer->data : nullptr;
}

sy_status queue_create(sy_device device, sy_queue* out_queue) {
  return guarded("queue_create", [&] { *out_queue = new sy_queue_s(device); });
}

void queue_destroy(sy_device, sy_queue queue) {
  delete queue;
}

// Every call completes before dispatch returns, so there is nothing to wait for.
sy_status queue_finish(sy_device, sy_queue) {
  return SY_STATUS_OK;
}

void check_range(const char* what, sy_buffer buffer, uint64_t offset, uint64_t size_bytes) {
  if (offset > buffer->size_bytes || size_bytes > buffer->size_bytes - offset) {
    fail_invalid(cat("onednn ", what, ": ", size_bytes, " bytes at offset ", offset,
                     " exceed the buffer of ", buffer->size_bytes, " bytes"));
  }
}

sy_status buffer_write(sy_device, sy_queue, sy_buffer dst, uint64_t dst_offset, const void* src,
                       uint64_t size_bytes) {
  return guarded("buffer_write", [&] {
    check_range("buffer_write", dst, dst_offset, size_bytes);
    if (size_bytes > 0) std::memcpy(static_cast<char*>(dst->data) + dst_offset, src, size_bytes);
  });
}

sy_status buffer_read(sy_device, sy_queue, sy_buffer src, uint64_t src_offset, void* dst,
                      uint64_t size_bytes) {
  return guarded("buffer_read", [&] {
    check_range("buffer_read", src, src_offset, size_bytes);
    if (size_bytes > 0)
      std::memcpy(dst, static_cast<const char*>(src->data) + src_offset, size_bytes);
  });
}

sy_status event_create(sy_device, sy_event* out_event) {
  return guarded("event_create", [&] { *out_event = new sy_event_s(); });
}

void event_destroy(sy_device, sy_event event) {
  delete event;
}

sy_status event_record(sy_device, sy_queue, sy_event event) {
  event->time = std::chrono::steady_clock::now();
  event->recorded = true;
  return SY_STATUS_OK;
}

sy_status event_synchronize(sy_device, sy_event) {
  return SY_STATUS_OK;
}

sy_status event_elapsed_ms(sy_device, sy_event start, sy_event end, double* out_ms) {
  return guarded("event_elapsed_ms", [&] {
    if (!start->recorded || !end->recorded) {
      fail(SY_STATUS_FAILED_PRECONDITION, "onednn event_elapsed_ms: an event was never recorded");
    }
    *out_ms = std::chrono::duration<double, std::milli>(end->time - start->time).count();
  });
}

int supports_op(sy_device, uint32_t op, uint32_t dtype) {
  return supports_op_dtype(op, dtype);
}

sy_status dispatch(sy_device device, sy_queue queue, const sy_op_call* call) {
  return guarded("dispatch", [&] {
    if (device == nullptr || queue == nullptr || call == nullptr) {
      fail_invalid("onednn dispatch: null device, queue or call");
    }
    dispatch_call(*device, *queue, *call);
  });
}

sy_status memory_stats(sy_device device, sy_memory_stats* out_stats) {
  return guarded("memory_stats", [&] { *out_stats = device->pool.stats(); });
}

sy_status memory_reset_peak(sy_device device) {
  return guarded("memory_reset_peak", [&] { device->pool.reset_peak(); });
}

sy_status memory_empty_cache(sy_device device) {
  return guarded("memory_empty_cache", [&] { device->pool.empty_cache(); });
}

sy_status memory_set_limit(sy_device device, uint64_t limit_bytes) {
  return guarded("memory_set_limit", [&] { device->pool.set_limit(limit_bytes); });
}

sy_status device_settings(sy_device device, char* buffer, size_t size) {
  return guarded("device_settings", [&] {
    if (buffer == nullptr || size == 0) fail_invalid("onednn device_settings: no buffer");
    copy_text(buffer, size, settings_line(*device));
  });
}

const sy_plugin_functions kFunctions = {
    .last_error_message = last_error,
    .device_count = device_count,
    .device_properties = device_properties,
    .device_create = device_create,
    .device_destroy = device_destroy,
    .buffer_allocate = buffer_allocate,
    .buffer_release = buffer_release,
    .buffer_host_address = buffer_host_address,
    .queue_create = queue_create,
    .queue_destroy = queue_destroy,
    .queue_finish = queue_finish,
    .buffer_write = buffer_write,
    .buffer_read = buffer_read,
    .event_create = event_create,
    .event_destroy = event_destroy,
    .event_record = event_record,
    .event_synchronize = event_synchronize,
    .event_elapsed_ms = event_elapsed_ms,
    .supports_op = supports_op,
    .dispatch = dispatch,
    .memory_stats = memory_stats,
    .memory_reset_peak = memory_reset_peak,
    .memory_empty_cache = memory_empty_cache,
    .memory_set_limit = memory_set_limit,
    .device_settings = device_settings,
    // No native capture: a replay re-dispatches (each op runs synchronously on the host anyway).
    .queue_capture_begin = nullptr,
    .queue_capture_end = nullptr,
    .graph_launch = nullptr,
    .graph_destroy = nullptr,
    .graph_update = nullptr,
    .reserved_slots = {},
};

const sy_plugin_descriptor kDescriptor = {
    .abi_version = SY_ABI_VERSION,
    .struct_size = sizeof(sy_plugin_descriptor),
    .name = "onednn",
    .plugin_version = "0.1.0",
    .description =
        "CPU backend on oneDNN (matmul, convolution, pooling, softmax, eltwise) with "
        "vectorised loops for the rest",
    .capabilities = SY_CAP_HOST_MEMORY | SY_CAP_DEVICE_TIMING | SY_CAP_CHANNELS_LAST,
    .reserved = {},
    .functions = &kFunctions,
};

}  // namespace
}  // namespace sy_onednn

extern "C" {
SY_DEFINE_PLUGIN_ENTRY(sy_onednn::kDescriptor)
}
