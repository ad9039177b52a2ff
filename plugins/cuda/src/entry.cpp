// The plugin's C ABI: the function table, the descriptor and the one exported entry symbol.
// Every function adapts its arguments and runs the C++ code behind `guarded` (boundary.h).
#include <cstdio>
#include <string>

#include "boundary.h"
#include "dispatch.h"
#include "transfer.h"

namespace sy_cuda {
namespace {

sy_status device_count(uint32_t* count) {
  return guarded("device_count", [&]() -> Status {
    if (count == nullptr) return invalid_argument("device_count: null count");
    *count = 0;
    const DriverApi* api = nullptr;
    SY_CUDA_RETURN_IF_ERROR(load_driver(&api));
    int n = 0;
    SY_CUDA_RETURN_IF_ERROR(cu_check(*api, api->cuDeviceGetCount(&n), "cuDeviceGetCount"));
    *count = static_cast<uint32_t>(n);
    return ok_status();
  });
}

sy_status get_properties(uint32_t index, sy_device_properties* props) {
  return guarded("device_properties", [&] { return device_properties(index, props); });
}

sy_status device_create(uint32_t index, const sy_option* options, size_t count, sy_device* out) {
  return guarded("device_create", [&]() -> Status {
    if (out == nullptr) return invalid_argument("device_create: null out_device");
    CudaDevice* device = nullptr;
    SY_CUDA_RETURN_IF_ERROR(create_device(index, options, count, &device));
    *out = reinterpret_cast<sy_device>(device);
    return ok_status();
  });
}

void device_destroy(sy_device device) {
  (void)guarded("device_destroy", [&] {
    destroy_device(device_of(device));
    return ok_status();
  });
}

sy_status buffer_allocate(sy_device d, uint64_t size, sy_buffer* out) {
  return guarded("buffer_allocate", [&] {
    return in_context(device_of(d), "buffer_allocate", [&]() -> Status {
      if (out == nullptr) return invalid_argument("buffer_allocate: null out_buffer");
      CudaBuffer* buffer = nullptr;
      SY_CUDA_RETURN_IF_ERROR(device_of(d)->allocator->allocate(size, &buffer));
      *out = reinterpret_cast<sy_buffer>(buffer);
      return ok_status();
    });
  });
}

void buffer_release(sy_device d, sy_buffer buffer) {
  (void)guarded("buffer_release", [&] {
    return in_context(device_of(d), "buffer_release", [&] {
      device_of(d)->allocator->release(buffer_of(buffer));
      return ok_status();
    });
  });
}

sy_status queue_create(sy_device d, sy_queue* out) {
  return guarded("queue_create", [&] {
    return in_context(device_of(d), "queue_create", [&]() -> Status {
      if (out == nullptr) return invalid_argument("queue_create: null out_queue");
      CudaQueue* queue = nullptr;
      SY_CUDA_RETURN_IF_ERROR(create_queue(*device_of(d), &queue));
      *out = reinterpret_cast<sy_queue>(queue);
      return ok_status();
    });
  });
}

void queue_destroy(sy_device d, sy_queue queue) {
  (void)guarded("queue_destroy", [&] {
    return in_context(device_of(d), "queue_destroy", [&] {
      destroy_queue(*device_of(d), queue_of(queue));
      return ok_status();
    });
  });
}

sy_status queue_finish(sy_device d, sy_queue queue) {
  return guarded("queue_finish", [&] {
    return in_context(device_of(d), "queue_finish", [&] {
      if (queue_of(queue)->capture != nullptr) {
        return refuse_while_capturing(*queue_of(queue), "queue_finish");
      }
      return finish_queue(*device_of(d), *queue_of(queue));
    });
  });
}

sy_status buffer_write(sy_device d, sy_queue q, sy_buffer dst, uint64_t offset, const void* src,
                       uint64_t size) {
  return guarded("buffer_write", [&] {
    return in_context(device_of(d), "buffer_write", [&] {
      // A captured copy would read `src` again at every launch, after the caller reused it.
      if (queue_of(q)->capture != nullptr)
        return refuse_while_capturing(*queue_of(q), "buffer_write");
      return write_buffer(*device_of(d), *queue_of(q), buffer_of(dst), offset, src, size);
    });
  });
}

sy_status buffer_read(sy_device d, sy_queue q, sy_buffer src, uint64_t offset, void* dst,
                      uint64_t size) {
  return guarded("buffer_read", [&] {
    return in_context(device_of(d), "buffer_read", [&] {
      if (queue_of(q)->capture != nullptr)
        return refuse_while_capturing(*queue_of(q), "buffer_read");
      return read_buffer(*device_of(d), *queue_of(q), buffer_of(src), offset, dst, size);
    });
  });
}

sy_status event_create(sy_device d, sy_event* out) {
  return guarded("event_create", [&] {
    return in_context(device_of(d), "event_create", [&]() -> Status {
      if (out == nullptr) return invalid_argument("event_create: null out_event");
      CudaEvent* event = nullptr;
      SY_CUDA_RETURN_IF_ERROR(create_event(*device_of(d), &event));
      *out = reinterpret_cast<sy_event>(event);
      return ok_status();
    });
  });
}

void event_destroy(sy_device d, sy_event event) {
  (void)guarded("event_destroy", [&] {
    return in_context(device_of(d), "event_destroy", [&] {
      destroy_event(*device_of(d), event_of(event));
      return ok_status();
    });
  });
}

sy_status event_record(sy_device d, sy_queue q, sy_event event) {
  return guarded("event_record", [&] {
    return in_context(device_of(d), "event_record", [&] {
      if (queue_of(q)->capture != nullptr)
        return refuse_while_capturing(*queue_of(q), "event_record");
      return record_event(*device_of(d), *queue_of(q), *event_of(event));
    });
  });
}

sy_status event_synchronize(sy_device d, sy_event event) {
  return guarded("event_synchronize", [&] {
    return in_context(device_of(d), "event_synchronize",
                      [&] { return synchronize_event(*device_of(d), *event_of(event)); });
  });
}

sy_status event_elapsed_ms(sy_device d, sy_event start, sy_event end, double* out_ms) {
  return guarded("event_elapsed_ms", [&] {
    return in_context(device_of(d), "event_elapsed_ms", [&]() -> Status {
      if (out_ms == nullptr) return invalid_argument("event_elapsed_ms: null out_ms");
      return elapsed_ms(*device_of(d), *event_of(start), *event_of(end), out_ms);
    });
  });
}

int supports_op(sy_device, uint32_t op, uint32_t dtype) {
  return supports(op, dtype) ? 1 : 0;
}

sy_status dispatch_op(sy_device d, sy_queue q, const sy_op_call* call) {
  return guarded("dispatch", [&] {
    return in_context(device_of(d), "dispatch", [&]() -> Status {
      if (call == nullptr || q == nullptr) return invalid_argument("dispatch: null call or queue");
      return dispatch(*device_of(d), *queue_of(q), *call);
    });
  });
}

sy_status memory_stats(sy_device d, sy_memory_stats* out) {
  return guarded("memory_stats", [&]() -> Status {
    if (d == nullptr || out == nullptr) return invalid_argument("memory_stats: null argument");
    *out = device_of(d)->allocator->stats();
    return ok_status();
  });
}

sy_status memory_reset_peak(sy_device d) {
  return guarded("memory_reset_peak", [&]() -> Status {
    if (d == nullptr) return invalid_argument("memory_reset_peak: null device");
    device_of(d)->allocator->reset_peak();
    return ok_status();
  });
}

sy_status memory_empty_cache(sy_device d) {
  return guarded("memory_empty_cache", [&] {
    return in_context(device_of(d), "memory_empty_cache",
                      [&] { return device_of(d)->allocator->empty_cache(); });
  });
}

sy_status memory_set_limit(sy_device d, uint64_t limit_bytes) {
  return guarded("memory_set_limit", [&]() -> Status {
    if (d == nullptr) return invalid_argument("memory_set_limit: null device");
    device_of(d)->allocator->set_limit(limit_bytes);
    return ok_status();
  });
}

sy_status device_settings(sy_device d, char* buffer, size_t size) {
  return guarded("device_settings", [&]() -> Status {
    if (d == nullptr || buffer == nullptr || size == 0) {
      return invalid_argument("device_settings: null device or empty buffer");
    }
    const CudaDevice& device = *device_of(d);
    const std::string line = settings_line(device.options) +
                             (device.lt != nullptr ? " cublaslt=loaded" : " cublaslt=none") +
                             " matmuls_cublaslt=" + std::to_string(device.matmuls_cublaslt.load()) +
                             " matmuls_kernel=" + std::to_string(device.matmuls_kernel.load());
    std::snprintf(buffer, size, "%s", line.c_str());
    return ok_status();
  });
}

inline CudaGraph* graph_of(sy_graph g) {
  return reinterpret_cast<CudaGraph*>(g);
}

sy_status queue_capture_begin(sy_device d, sy_queue q) {
  return guarded("queue_capture_begin", [&] {
    return in_context(device_of(d), "queue_capture_begin", [&]() -> Status {
      if (q == nullptr) return invalid_argument("queue_capture_begin: null queue");
      return begin_capture(*device_of(d), *queue_of(q));
    });
  });
}

sy_status queue_capture_end(sy_device d, sy_queue q, sy_graph* out) {
  return guarded("queue_capture_end", [&] {
    return in_context(device_of(d), "queue_capture_end", [&]() -> Status {
      if (q == nullptr || out == nullptr) {
        return invalid_argument("queue_capture_end: null queue or out_graph");
      }
      CudaGraph* graph = nullptr;
      const Status status = end_capture(*device_of(d), *queue_of(q), &graph);
      *out = reinterpret_cast<sy_graph>(graph);
      return status;
    });
  });
}

sy_status graph_launch(sy_device d, sy_queue q, sy_graph g) {
  return guarded("graph_launch", [&] {
    return in_context(device_of(d), "graph_launch", [&]() -> Status {
      if (q == nullptr || g == nullptr)
        return invalid_argument("graph_launch: null queue or graph");
      return launch_graph(*device_of(d), *queue_of(q), *graph_of(g));
    });
  });
}

void graph_destroy(sy_device d, sy_graph g) {
  (void)guarded("graph_destroy", [&] {
    return in_context(device_of(d), "graph_destroy", [&] {
      destroy_graph(*device_of(d), graph_of(g));
      return ok_status();
    });
  });
}

sy_status graph_update(sy_device d, sy_graph g, uint64_t call_index, const sy_op_call* call) {
  return guarded("graph_update", [&] {
    return in_context(device_of(d), "graph_update", [&]() -> Status {
      if (g == nullptr || call == nullptr)
        return invalid_argument("graph_update: null graph or call");
      return update_graph(*device_of(d), *graph_of(g), call_index, *call);
    });
  });
}

const sy_plugin_functions kFunctions = [] {
  sy_plugin_functions f{};
  f.last_error_message = last_error;
  f.device_count = device_count;
  f.device_properties = get_properties;
  f.device_create = device_create;
  f.device_destroy = device_destroy;
  f.buffer_allocate = buffer_allocate;
  f.buffer_release = buffer_release;
  f.buffer_host_address = nullptr;  // device memory is not host-addressable
  f.queue_create = queue_create;
  f.queue_destroy = queue_destroy;
  f.queue_finish = queue_finish;
  f.buffer_write = buffer_write;
  f.buffer_read = buffer_read;
  f.event_create = event_create;
  f.event_destroy = event_destroy;
  f.event_record = event_record;
  f.event_synchronize = event_synchronize;
  f.event_elapsed_ms = event_elapsed_ms;
  f.supports_op = supports_op;
  f.dispatch = dispatch_op;
  f.memory_stats = memory_stats;
  f.memory_reset_peak = memory_reset_peak;
  f.memory_empty_cache = memory_empty_cache;
  f.memory_set_limit = memory_set_limit;
  f.device_settings = device_settings;
  f.queue_capture_begin = queue_capture_begin;
  f.queue_capture_end = queue_capture_end;
  f.graph_launch = graph_launch;
  f.graph_destroy = graph_destroy;
  f.graph_update = graph_update;
  return f;
}();

const sy_plugin_descriptor kDescriptor = {
    SY_ABI_VERSION,
    sizeof(sy_plugin_descriptor),
    "cuda",
    SWITCHYARD_CUDA_PLUGIN_VERSION,
    "NVIDIA GPUs through the CUDA driver API (libcuda.so.1 opened at run time), embedded "
    "kernels, cuBLASLt matmuls when available",
    SY_CAP_ASYNC | SY_CAP_DEVICE_TIMING,
    {},
    &kFunctions};

}  // namespace
}  // namespace sy_cuda

extern "C" {
SY_DEFINE_PLUGIN_ENTRY(sy_cuda::kDescriptor)
}
