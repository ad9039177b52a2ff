#include "allocator.h"

#include <algorithm>

namespace sy_cuda {
namespace {

constexpr uint64_t kRoundingBytes = 512;

uint64_t round_up(uint64_t size) {
  const uint64_t n = std::max<uint64_t>(size, 1);
  return (n + kRoundingBytes - 1) / kRoundingBytes * kRoundingBytes;
}

// A cached block serves a request when it wastes at most a quarter of the request.
bool good_fit(uint64_t block, uint64_t request) {
  return block - request <= request / 4;
}

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
  for (auto& [bytes, block] : free_blocks_) (void)api_.cuMemFree_v2(block.ptr);
  if (ordering_event_ != nullptr) (void)api_.cuEventDestroy_v2(ordering_event_);
}

std::string CachingAllocator::usage_text() const {
  return format_bytes(allocated_bytes_) + " in use, " + format_bytes(reserved_bytes_) + " reserved";
}

Status CachingAllocator::allocate(uint64_t size_bytes, CudaBuffer** out) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t rounded = round_up(size_bytes);
  if (limit_bytes_ != 0 && allocated_bytes_ + rounded > limit_bytes_) {
    return resource_exhausted("CUDA buffer_allocate: requested " + format_bytes(size_bytes) +
                              " with " + format_bytes(allocated_bytes_) +
                              " in use would exceed the memory cap of " +
                              format_bytes(limit_bytes_));
  }
  auto* buffer = new CudaBuffer();
  buffer->size_bytes = size_bytes;
  auto it = free_blocks_.lower_bound(rounded);
  if (it != free_blocks_.end() && good_fit(it->first, rounded)) {
    buffer->ptr = it->second.ptr;
    buffer->block_bytes = it->first;
    buffer->inherited = std::move(it->second.pending);
    free_blocks_.erase(it);
  } else {
    const Status status = allocate_block(rounded, &buffer->ptr);
    if (!status.ok()) {
      delete buffer;
      return status;
    }
    buffer->block_bytes = rounded;
    reserved_bytes_ += rounded;
  }
  allocated_bytes_ += buffer->block_bytes;
  peak_allocated_bytes_ = std::max(peak_allocated_bytes_, allocated_bytes_);
  live_.insert(buffer);
  *out = buffer;
  return ok_status();
}

Status CachingAllocator::allocate_block(uint64_t rounded, CUdeviceptr* ptr) {
  if (limit_bytes_ != 0 && reserved_bytes_ + rounded > limit_bytes_) {
    free_cached_until(limit_bytes_ - std::min(limit_bytes_, rounded));
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
  return Status(failed.code(), "CUDA buffer_allocate: requested " + format_bytes(rounded) +
                                   " with " + usage_text() + "; the device has " +
                                   format_bytes(free_bytes) + " free of " +
                                   format_bytes(device_total_bytes_) + ": " + failed.message());
}

void CachingAllocator::release(CudaBuffer* buffer) {
  if (buffer == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<CUstream> pending = std::move(buffer->inherited);
  for (CUstream stream : buffer->used_on) add_unique(&pending, stream);
  allocated_bytes_ -= buffer->block_bytes;
  free_blocks_.emplace(buffer->block_bytes, FreeBlock{buffer->ptr, std::move(pending)});
  live_.erase(buffer);
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
  for (auto& [bytes, block] : free_blocks_) std::erase(block.pending, stream);
}

void CachingAllocator::free_cached_until(uint64_t reserved_target) {
  while (reserved_bytes_ > reserved_target && !free_blocks_.empty()) {
    auto largest = std::prev(free_blocks_.end());
    // cuMemFree must not pull memory from under queued work: wait for it first.
    for (CUstream stream : largest->second.pending) (void)api_.cuStreamSynchronize(stream);
    (void)api_.cuMemFree_v2(largest->second.ptr);
    reserved_bytes_ -= largest->first;
    free_blocks_.erase(largest);
  }
}

Status CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  free_cached_until(0);
  return ok_status();
}

sy_memory_stats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  sy_memory_stats stats{};
  stats.allocated_bytes = allocated_bytes_;
  stats.reserved_bytes = reserved_bytes_;
  stats.peak_allocated_bytes = peak_allocated_bytes_;
  stats.limit_bytes = limit_bytes_;
  stats.allocation_count = live_.size();
  return stats;
}

void CachingAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  peak_allocated_bytes_ = allocated_bytes_;
}

void CachingAllocator::set_limit(uint64_t limit_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  limit_bytes_ = limit_bytes;
}

}  // namespace sy_cuda
