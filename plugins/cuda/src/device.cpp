#include "device.h"

#include <cerrno>
#include <cstdlib>
#include <string>

#include "cublaslt_matmul.h"

namespace sy_cuda {
namespace {

Status parse_bool(const std::string& key, const std::string& value, bool* out) {
  if (value == "true" || value == "1" || value == "yes" || value == "on") {
    *out = true;
  } else if (value == "false" || value == "0" || value == "no" || value == "off") {
    *out = false;
  } else {
    return invalid_argument("cuda option " + key + ": '" + value +
                            "' is not a boolean (true/false)");
  }
  return ok_status();
}

Status parse_uint64(const std::string& key, const std::string& value, uint64_t* out) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(value.c_str(), &end, 10);
  if (value.empty() || value[0] == '-' || *end != '\0' || errno != 0) {
    return invalid_argument("cuda option " + key + ": '" + value +
                            "' is not a non-negative integer number of bytes");
  }
  *out = v;
  return ok_status();
}

Status parse_fraction(const std::string& key, const std::string& value, double* out) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || errno != 0 || !(v > 0.0 && v <= 1.0)) {
    return invalid_argument("cuda option " + key + ": '" + value + "' is not a number in (0, 1]");
  }
  *out = v;
  return ok_status();
}

}  // namespace

Status parse_options(const sy_option* options, size_t count, DeviceOptions* out) {
  for (size_t i = 0; i < count; ++i) {
    const std::string key = options[i].key != nullptr ? options[i].key : "";
    const std::string value = options[i].value != nullptr ? options[i].value : "";
    if (key == "tf32") {
      SY_CUDA_RETURN_IF_ERROR(parse_bool(key, value, &out->tf32));
    } else if (key == "memory_limit_bytes") {
      SY_CUDA_RETURN_IF_ERROR(parse_uint64(key, value, &out->memory_limit_bytes));
    } else if (key == "memory_fraction") {
      SY_CUDA_RETURN_IF_ERROR(parse_fraction(key, value, &out->memory_fraction));
    } else if (key == "deterministic") {
      SY_CUDA_RETURN_IF_ERROR(parse_bool(key, value, &out->deterministic));
    } else if (key == "matmul") {
      if (value == "auto") {
        out->matmul = MatmulPath::kAuto;
      } else if (value == "cublaslt") {
        out->matmul = MatmulPath::kCublaslt;
      } else if (value == "kernel") {
        out->matmul = MatmulPath::kKernel;
      } else {
        return invalid_argument("cuda option matmul: '" + value +
                                "' is not auto, cublaslt or kernel");
      }
    } else if (key == "conv") {
      if (value != "auto" && value != "direct") {
        return invalid_argument("cuda option conv: '" + value + "' is not auto or direct");
      }
      out->conv_gemm = value == "auto";
    } else {
      return invalid_argument(
          "unknown cuda option '" + key +
          "' (known: tf32, memory_limit_bytes, memory_fraction, deterministic, matmul, conv)");
    }
  }
  // TF32 rounds f32 operands to 10 mantissa bits: a deterministic run promises the f32 maths the
  // reference defines, so it wins over tf32 (and the settings line says so).
  if (out->deterministic) out->tf32 = false;
  return ok_status();
}

std::string settings_line(const DeviceOptions& options) {
  static const char* const paths[] = {"auto", "cublaslt", "kernel"};
  return std::string("tf32=") + (options.tf32 ? "on" : "off") +
         " deterministic=" + (options.deterministic ? "on" : "off") +
         " matmul=" + paths[static_cast<int>(options.matmul)] +
         " conv=" + (options.conv_gemm ? "auto" : "direct");
}

Status get_cu_device(uint32_t index, const DriverApi** api, CUdevice* device_out) {
  SY_CUDA_RETURN_IF_ERROR(load_driver(api));
  int count = 0;
  SY_CUDA_RETURN_IF_ERROR(cu_check(**api, (*api)->cuDeviceGetCount(&count), "cuDeviceGetCount"));
  if (index >= static_cast<uint32_t>(count)) {
    return out_of_range("cuda device " + std::to_string(index) + " does not exist (" +
                        std::to_string(count) + " visible)");
  }
  return cu_check(**api, (*api)->cuDeviceGet(device_out, static_cast<int>(index)), "cuDeviceGet");
}

namespace {

Status init_device(CudaDevice* d) {
  const DriverApi& api = *d->api;
  int sms = 0;
  SY_CUDA_RETURN_IF_ERROR(cu_check(
      api, api.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d->device),
      "cuDeviceGetAttribute"));
  SY_CUDA_RETURN_IF_ERROR(
      cu_check(api,
               api.cuDeviceGetAttribute(&d->compute_major,
                                        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->device),
               "cuDeviceGetAttribute"));
  SY_CUDA_RETURN_IF_ERROR(
      cu_check(api,
               api.cuDeviceGetAttribute(&d->compute_minor,
                                        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->device),
               "cuDeviceGetAttribute"));
  size_t total = 0;
  SY_CUDA_RETURN_IF_ERROR(
      cu_check(api, api.cuDeviceTotalMem_v2(&total, d->device), "cuDeviceTotalMem"));
  d->sm_count = static_cast<uint32_t>(sms);
  d->total_memory_bytes = total;
  SY_CUDA_RETURN_IF_ERROR(d->kernels.load(api));
  d->allocator = std::make_unique<CachingAllocator>(api, total);
  uint64_t limit = d->options.memory_limit_bytes;
  if (d->options.memory_fraction > 0.0) {
    const auto by_fraction =
        static_cast<uint64_t>(d->options.memory_fraction * static_cast<double>(total));
    limit = limit == 0 ? by_fraction : std::min(limit, by_fraction);
  }
  d->allocator->set_limit(limit);
  if (d->options.matmul == MatmulPath::kKernel) return ok_status();
  const CublasLtApi* lt_api = nullptr;
  Status lt_status = load_cublaslt(&lt_api);
  if (lt_status.ok()) {
    auto lt = std::make_unique<LtMatmul>(*lt_api);
    lt_status = lt->init();
    if (lt_status.ok()) d->lt = std::move(lt);  // otherwise the tiled kernel takes every matmul
  }
  if (!lt_status.ok() && d->options.matmul == MatmulPath::kCublaslt) {
    return lt_status.with_context("cuda option matmul=cublaslt");
  }
  return ok_status();
}

}  // namespace

Status create_device(uint32_t index, const sy_option* options, size_t option_count,
                     CudaDevice** out) {
  DeviceOptions parsed;
  SY_CUDA_RETURN_IF_ERROR(parse_options(options, option_count, &parsed));
  const DriverApi* api = nullptr;
  CUdevice cu_device = 0;
  SY_CUDA_RETURN_IF_ERROR(get_cu_device(index, &api, &cu_device));
  auto device = std::make_unique<CudaDevice>();
  device->api = api;
  device->index = index;
  device->device = cu_device;
  device->options = parsed;
  SY_CUDA_RETURN_IF_ERROR(
      cu_check(*api, api->cuDevicePrimaryCtxRetain(&device->context, cu_device),
               "cuDevicePrimaryCtxRetain(device " + std::to_string(index) + ")"));
  Status status;
  {
    ContextScope scope(*api, device->context);
    status = scope.status().ok() ? init_device(device.get()) : scope.status();
  }
  if (!status.ok()) {
    destroy_device(device.release());
    return status;
  }
  *out = device.release();
  return ok_status();
}

void destroy_device(CudaDevice* device) {
  if (device == nullptr) return;
  const DriverApi& api = *device->api;
  if (device->context != nullptr) {
    ContextScope scope(api, device->context);
    if (scope.status().ok()) {
      for (CudaQueue* queue : std::vector<CudaQueue*>(device->queues))
        destroy_queue(*device, queue);
      (void)api.cuCtxSynchronize();
      device->lt.reset();
      device->allocator.reset();
      device->kernels.unload();
    }
    (void)api.cuDevicePrimaryCtxRelease_v2(device->device);
  }
  delete device;
}

Status create_queue(CudaDevice& device, CudaQueue** out) {
  auto queue = std::make_unique<CudaQueue>();
  SY_CUDA_RETURN_IF_ERROR(
      cu_check(*device.api, device.api->cuStreamCreate(&queue->stream, CU_STREAM_NON_BLOCKING),
               "cuStreamCreate"));
  std::lock_guard<std::mutex> lock(device.queues_mutex);
  device.queues.push_back(queue.get());
  *out = queue.release();
  return ok_status();
}

void destroy_queue(CudaDevice& device, CudaQueue* queue) {
  if (queue == nullptr) return;
  const DriverApi& api = *device.api;
  if (queue->capture != nullptr) {  // destroyed while capturing: the capture is discarded
    CudaGraph* graph = nullptr;
    (void)end_capture(device, *queue, &graph);
    destroy_graph(device, graph);
  }
  (void)api.cuStreamSynchronize(queue->stream);
  if (queue->lt_workspace != nullptr) device.allocator->release(queue->lt_workspace);
  device.allocator->forget_stream(queue->stream);
  (void)api.cuStreamDestroy_v2(queue->stream);
  {
    std::lock_guard<std::mutex> lock(device.queues_mutex);
    std::erase(device.queues, queue);
  }
  delete queue;
}

}  // namespace sy_cuda
