// The plugin boundary: every exported function runs its body through `guarded`, which turns a
// Status into an sy_status plus the thread's message and any C++ exception into INTERNAL, and
// through `in_context`, which makes the device's context current for the call.
#pragma once

#include <exception>
#include <new>
#include <string>

#include "device.h"
#include "status.h"

namespace sy_cuda {

template <typename F>
sy_status guarded(const char* what, F&& body) noexcept {
  try {
    return report(body());
  } catch (const std::bad_alloc&) {
    return report(resource_exhausted(std::string(what) + ": host memory exhausted"));
  } catch (const std::exception& e) {
    return report(internal_error(std::string(what) + ": " + e.what()));
  } catch (...) {
    return report(internal_error(std::string(what) + ": unknown exception"));
  }
}

template <typename F>
Status in_context(CudaDevice* device, const char* what, F&& body) {
  if (device == nullptr) return invalid_argument(std::string(what) + ": null device");
  ContextScope scope(*device->api, device->context);
  if (!scope.status().ok()) return scope.status();
  return body();
}

inline CudaDevice* device_of(sy_device d) {
  return reinterpret_cast<CudaDevice*>(d);
}
inline CudaQueue* queue_of(sy_queue q) {
  return reinterpret_cast<CudaQueue*>(q);
}
inline CudaBuffer* buffer_of(sy_buffer b) {
  return reinterpret_cast<CudaBuffer*>(b);
}
inline CudaEvent* event_of(sy_event e) {
  return reinterpret_cast<CudaEvent*>(e);
}

}  // namespace sy_cuda
