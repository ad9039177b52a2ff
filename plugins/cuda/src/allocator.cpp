#include "allocator.h"

#include <algorithm>
#include <memory>

namespace sy_cuda {
namespace {

constexpr const char* kPoolName = "cuda";

void add_unique(std::vector<CUstream>* streams, CUstream stream) {
  if (std::find(streams->begin(), streams->end(), stream) == streams->end()) {
    streams->push_back(stream);
  }
}

}  // namespace

CachingAllocator::CachingAllocator(const DriverApi& api, uint64_t device_total_bytes)
    : api_(api), device_total_bytes_(device_total_bytes) {}

// The device synchronises its context before destroying the allocator, so nothing still runs.
CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (CudaBuffer* buffer : live_) {
    (void)api_.cuMemFree_v2(buffer->ptr);
    delete buffer;
  }
  free_blocks_.drain([&](uint64_t, const FreeBlock& block) { (void)api_.cuMemFree_v2(block.ptr); });
  if (ordering_event_ != nullptr) (void)api_.cuEventDestroy_v2(ordering_event_);
}

Status CachingAllocator::allocate(uint64_t size_bytes, CudaBuffer** out) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t rounded = sy_support::size_class(size_bytes);
  auto buffer = std::make_unique<CudaBuffer>();
  buffer->size_bytes = size_bytes;
  // A cached block serves a request when it wastes at most a quarter of the size class.
  if (auto cached = free_blocks_.take(rounded, rounded + rounded / 4)) {
    buffer->ptr = cached->block.ptr;
    buffer->block_bytes = cached->bytes;
    buffer->inherited = std::move(cached->block.pending);
  } else {
    SY_CUDA_RETURN_IF_ERROR(allocate_block(size_bytes, rounded, &buffer->ptr));
    buffer->block_bytes = rounded;
    accounting_.on_reserve(rounded);
  }
  accounting_.on_allocate(buffer->block_bytes);
  live_.insert(buffer.get());
  *out = buffer.release();
  return ok_status();
}

Status CachingAllocator::allocate_block(uint64_t size_bytes, uint64_t rounded, CUdeviceptr* ptr) {
  const auto give_back_enough = [&] {
    const uint64_t limit = accounting_.limit_bytes();
    free_cached_until(limit - std::min(limit, rounded));
  };
  if (!accounting_.make_room(rounded, give_back_enough)) {
    return resource_exhausted(accounting_.over_cap_message(kPoolName, size_bytes, rounded));
  }
  CUresult result = api_.cuMemAlloc_v2(ptr, rounded);
  if (result == CUDA_ERROR_OUT_OF_MEMORY && !free_blocks_.empty()) {
    free_cached_until(0);
    result = api_.cuMemAlloc_v2(ptr, rounded);
  }
  if (result == CUDA_SUCCESS) return ok_status();
  size_t free_bytes = 0, total_bytes = 0;
  (void)api_.cuMemGetInfo_v2(&free_bytes, &total_bytes);
  const Status failed = cu_check(api_, result, "cuMemAlloc(" + format_bytes(rounded) + ")");
  return Status(
      failed.code(),
      accounting_.refused_message(kPoolName, size_bytes, rounded,
                                  "the device has " + format_bytes(free_bytes) + " free of " +
                                      format_bytes(device_total_bytes_) + ": " + failed.message()));
}

void CachingAllocator::release(CudaBuffer* buffer) {
  if (buffer == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  // A buffer this pool does not hold (released twice, or another device's) is ignored, as on the
  // reference backend, instead of corrupting the cache.
  if (live_.erase(buffer) == 0) return;
  std::vector<CUstream> pending = std::move(buffer->inherited);
  for (CUstream stream : buffer->used_on) add_unique(&pending, stream);
  accounting_.on_release(buffer->block_bytes);
  free_blocks_.put(buffer->block_bytes, FreeBlock{buffer->ptr, std::move(pending)});
  delete buffer;
}

// Everything enqueued on `earlier` so far (which includes the earlier owners' work) happens
// before anything `stream` runs from now on.
Status CachingAllocator::order_after(CUstream stream, CUstream earlier) {
  if (ordering_event_ == nullptr) {
    SY_CUDA_RETURN_IF_ERROR(cu_check(
        api_, api_.cuEventCreate(&ordering_event_, CU_EVENT_DISABLE_TIMING), "cuEventCreate"));
  }
  SY_CUDA_RETURN_IF_ERROR(
      cu_check(api_, api_.cuEventRecord(ordering_event_, earlier), "cuEventRecord"));
  // The wait takes the event's state now, so the event may be recorded again at once.
  return cu_check(api_, api_.cuStreamWaitEvent(stream, ordering_event_, 0), "cuStreamWaitEvent");
}

Status CachingAllocator::use_on(CudaBuffer* buffer, CUstream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto& after = buffer->ordered_after;
  if (!buffer->inherited.empty() && std::find(after.begin(), after.end(), stream) == after.end()) {
    for (CUstream earlier : buffer->inherited) {
      if (earlier != stream) SY_CUDA_RETURN_IF_ERROR(order_after(stream, earlier));
    }
    buffer->ordered_after.push_back(stream);
  }
  add_unique(&buffer->used_on, stream);
  return ok_status();
}

void CachingAllocator::forget_stream(CUstream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (CudaBuffer* buffer : live_) {
    std::erase(buffer->used_on, stream);
    std::erase(buffer->inherited, stream);
    std::erase(buffer->ordered_after, stream);
  }
  free_blocks_.for_each([&](uint64_t, FreeBlock& block) { std::erase(block.pending, stream); });
}

void CachingAllocator::free_cached_until(uint64_t reserved_target) {
  while (accounting_.reserved_bytes() > reserved_target) {
    const auto largest = free_blocks_.take_largest();
    if (!largest) break;
    // cuMemFree must not pull memory from under queued work: wait for it first.
    for (CUstream stream : largest->block.pending) (void)api_.cuStreamSynchronize(stream);
    (void)api_.cuMemFree_v2(largest->block.ptr);
    accounting_.on_unreserve(largest->bytes);
  }
}

Status CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  free_cached_until(0);
  return ok_status();
}

sy_memory_stats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return accounting_.stats();
}

void CachingAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  accounting_.reset_peak();
}

void CachingAllocator::set_limit(uint64_t limit_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  accounting_.set_limit(limit_bytes);
}

}  // namespace sy_cuda
