// Host <-> device copies and timing events. The host waits only in buffer_read (and in
// queue_finish / event_synchronize, which exist to wait).
#include "transfer.h"

#include <string>

namespace sy_cuda {
namespace {

Status check_range(const char* what, const CudaBuffer* buffer, uint64_t offset, uint64_t size) {
  if (buffer == nullptr) return invalid_argument(std::string(what) + ": null buffer");
  if (offset > buffer->size_bytes || size > buffer->size_bytes - offset) {
    return invalid_argument(std::string(what) + ": bytes [" + std::to_string(offset) + ", " +
                            std::to_string(offset + size) + ") are outside the buffer of " +
                            std::to_string(buffer->size_bytes) + " bytes");
  }
  return ok_status();
}

// Page-locked or device memory: the asynchronous copy reads it later, so the caller's memory
// may be reused only after the stream has passed the copy. cuPointerGetAttributes (plural) answers
// memory type 0 for ordinary pageable memory where the singular call fails with
// CUDA_ERROR_INVALID_VALUE, an API error that compute-sanitizer reports on every transfer.
bool is_registered(const DriverApi& api, const void* host) {
  unsigned int type = 0;
  CUpointer_attribute attribute = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
  void* values[] = {&type};
  return api.cuPointerGetAttributes(1, &attribute, values, reinterpret_cast<CUdeviceptr>(host)) ==
             CUDA_SUCCESS &&
         type != 0;
}

}  // namespace

Status write_buffer(CudaDevice& device, CudaQueue& queue, CudaBuffer* dst, uint64_t offset,
                    const void* src, uint64_t size) {
  SY_CUDA_RETURN_IF_ERROR(check_range("buffer_write", dst, offset, size));
  if (size == 0) return ok_status();
  if (src == nullptr) return invalid_argument("buffer_write: null source");
  const DriverApi& api = *device.api;
  SY_CUDA_RETURN_IF_ERROR(device.allocator->use_on(dst, queue.stream));
  // From pageable memory the driver stages the bytes before it returns, so `src` may be reused.
  SY_CUDA_RETURN_IF_ERROR(
      cu_check(api, api.cuMemcpyHtoDAsync_v2(dst->ptr + offset, src, size, queue.stream),
               "buffer_write: cuMemcpyHtoDAsync(" + format_bytes(size) + ")"));
  if (!is_registered(api, src)) return ok_status();
  return cu_check(api, api.cuStreamSynchronize(queue.stream), "buffer_write: cuStreamSynchronize");
}

Status read_buffer(CudaDevice& device, CudaQueue& queue, CudaBuffer* src, uint64_t offset,
                   void* dst, uint64_t size) {
  SY_CUDA_RETURN_IF_ERROR(check_range("buffer_read", src, offset, size));
  if (size == 0) return ok_status();
  if (dst == nullptr) return invalid_argument("buffer_read: null destination");
  const DriverApi& api = *device.api;
  SY_CUDA_RETURN_IF_ERROR(device.allocator->use_on(src, queue.stream));
  SY_CUDA_RETURN_IF_ERROR(
      cu_check(api, api.cuMemcpyDtoHAsync_v2(dst, src->ptr + offset, size, queue.stream),
               "buffer_read: cuMemcpyDtoHAsync(" + format_bytes(size) + ")"));
  // The stream also reports here any failure of earlier kernels on this queue.
  return cu_check(api, api.cuStreamSynchronize(queue.stream), "buffer_read: cuStreamSynchronize");
}

Status finish_queue(CudaDevice& device, CudaQueue& queue) {
  return cu_check(*device.api, device.api->cuStreamSynchronize(queue.stream),
                  "queue_finish: cuStreamSynchronize");
}

Status create_event(CudaDevice& device, CudaEvent** out) {
  auto event = std::make_unique<CudaEvent>();
  SY_CUDA_RETURN_IF_ERROR(cu_check(*device.api,
                                   device.api->cuEventCreate(&event->event, CU_EVENT_DEFAULT),
                                   "event_create: cuEventCreate"));
  *out = event.release();
  return ok_status();
}

void destroy_event(CudaDevice& device, CudaEvent* event) {
  if (event == nullptr) return;
  (void)device.api->cuEventDestroy_v2(event->event);
  delete event;
}

Status record_event(CudaDevice& device, CudaQueue& queue, CudaEvent& event) {
  return cu_check(*device.api, device.api->cuEventRecord(event.event, queue.stream),
                  "event_record: cuEventRecord");
}

Status synchronize_event(CudaDevice& device, CudaEvent& event) {
  return cu_check(*device.api, device.api->cuEventSynchronize(event.event),
                  "event_synchronize: cuEventSynchronize");
}

Status elapsed_ms(CudaDevice& device, CudaEvent& start, CudaEvent& end, double* out_ms) {
  float ms = 0.0f;
  SY_CUDA_RETURN_IF_ERROR(cu_check(*device.api,
                                   device.api->cuEventElapsedTime_v2(&ms, start.event, end.event),
                                   "event_elapsed_ms: cuEventElapsedTime"));
  *out_ms = static_cast<double>(ms);
  return ok_status();
}

}  // namespace sy_cuda
