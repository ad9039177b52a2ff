// Host <-> device copies ordered on a queue, and CUDA events for device-side timing.
#pragma once

#include <memory>

#include "device.h"
#include "status.h"

namespace sy_cuda {

// Returns once `src` may be reused: at once for pageable memory (the driver stages it), after the
// copy for page-locked memory.
Status write_buffer(CudaDevice& device, CudaQueue& queue, CudaBuffer* dst, uint64_t offset,
                    const void* src, uint64_t size);
// Returns once `dst` holds the bytes, i.e. after every earlier call on the queue has completed.
Status read_buffer(CudaDevice& device, CudaQueue& queue, CudaBuffer* src, uint64_t offset,
                   void* dst, uint64_t size);
Status finish_queue(CudaDevice& device, CudaQueue& queue);

Status create_event(CudaDevice& device, CudaEvent** out);
void destroy_event(CudaDevice& device, CudaEvent* event);
Status record_event(CudaDevice& device, CudaQueue& queue, CudaEvent& event);
Status synchronize_event(CudaDevice& device, CudaEvent& event);
Status elapsed_ms(CudaDevice& device, CudaEvent& start, CudaEvent& end, double* out_ms);

}  // namespace sy_cuda
