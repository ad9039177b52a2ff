#include "switchyard/device.h"

#include <mutex>

#include "switchyard/buffer.h"
#include "switchyard/plugin.h"
#include "switchyard/queue.h"

namespace switchyard {

const char* device_type_name(DeviceType type) {
  switch (type) {
    case DeviceType::kCpu:
      return "cpu";
    case DeviceType::kGpu:
      return "gpu";
    case DeviceType::kIntegratedGpu:
      return "integrated";
    case DeviceType::kEmulated:
      return "emulated";
    case DeviceType::kOther:
      return "other";
  }
  return "other";
}

struct Device::FallbackRoute {
  mutable std::mutex mutex;
  FallbackPolicy policy = FallbackPolicy::kWarn;
  std::shared_ptr<Device> device;
  // The device is its own fallback (the oracle chosen as the run's device). It then holds no
  // owning pointer to itself: that cycle would keep it and its memory pool alive forever.
  bool is_self = false;
  std::vector<FallbackCount> counts;
};

// The lock of every plugin call for one device (device.h, "Threads").
struct Device::CallLock {
  std::mutex mutex;
};

Device::PluginCall::PluginCall(const Device& device) : device_(device) {
  device_.calls_->mutex.lock();
}

Device::PluginCall::~PluginCall() {
  device_.calls_->mutex.unlock();
}

Device::Device()
    : fallback_(std::make_unique<FallbackRoute>()), calls_(std::make_unique<CallLock>()) {}

Result<std::shared_ptr<Device>> Device::create(std::shared_ptr<const Plugin> plugin, uint32_t index,
                                               const OptionList& options) {
  SY_ASSIGN_OR_RETURN(DeviceInfo info, plugin->device_info(index));
  std::vector<sy_option> raw_options;
  raw_options.reserve(options.size());
  for (const auto& [key, value] : options) raw_options.push_back({key.c_str(), value.c_str()});
  sy_device handle = nullptr;
  SY_RETURN_IF_ERROR(plugin->check(
      plugin->functions().device_create(index, raw_options.data(), raw_options.size(), &handle),
      "device_create(" + info.id() + ")"));
  std::shared_ptr<Device> device(new Device());
  device->plugin_ = std::move(plugin);
  device->handle_ = handle;
  device->info_ = std::move(info);
  sy_queue queue = nullptr;
  const sy_status created =
      device->locked([&] { return device->functions().queue_create(handle, &queue); });
  SY_RETURN_IF_ERROR(device->check(created, "queue_create"));
  // The default queue is owned by the device. It must not hold a strong reference back (that
  // would be a cycle), so it gets an aliasing pointer that shares no ownership.
  device->default_queue_ = std::make_shared<Queue>(
      std::shared_ptr<Device>(std::shared_ptr<Device>(), device.get()), queue);
  return device;
}

Device::~Device() {
  default_queue_.reset();  // destroys the plugin queue while the device handle is still valid
  if (handle_ != nullptr) functions().device_destroy(handle_);
}

const sy_plugin_functions& Device::functions() const {
  return plugin_->functions();
}

Status Device::check(sy_status code, const char* what) const {
  if (code == SY_STATUS_OK) return ok_status();  // no context string on the hot path
  return plugin_->check(code, std::string(what) + " on " + info_.id());
}

Result<std::shared_ptr<Queue>> Device::create_queue() {
  sy_queue queue = nullptr;
  const sy_status created = locked([&] { return functions().queue_create(handle_, &queue); });
  SY_RETURN_IF_ERROR(check(created, "queue_create"));
  return std::make_shared<Queue>(shared_from_this(), queue);
}

Result<std::shared_ptr<Buffer>> Device::allocate(uint64_t size_bytes) {
  sy_buffer buffer = nullptr;
  const sy_status allocated =
      locked([&] { return functions().buffer_allocate(handle_, size_bytes, &buffer); });
  SY_RETURN_IF_ERROR(check(allocated, "buffer_allocate"));
  return std::make_shared<Buffer>(shared_from_this(), buffer, size_bytes);
}

bool Device::supports(sy_op op, sy_dtype dtype) const {
  return locked([&] { return functions().supports_op(handle_, op, dtype); }) != 0;
}

// device_settings came out of reserved_slots: the table must keep its ABI-1 size.
static_assert(sizeof(sy_plugin_functions) == 40 * sizeof(void*),
              "sy_plugin_functions changed size: new slots come out of reserved_slots");

std::string Device::settings() const {
  if (functions().device_settings == nullptr) return "";
  char buffer[512] = {};
  const sy_status status =
      locked([&] { return functions().device_settings(handle_, buffer, sizeof(buffer)); });
  if (status != SY_STATUS_OK) return "";
  buffer[sizeof(buffer) - 1] = '\0';  // even if the plugin filled it without a terminator
  return buffer;
}

Result<MemoryStats> Device::memory_stats() const {
  if (functions().memory_stats == nullptr) {
    return unimplemented(info_.id() + " does not report memory statistics");
  }
  sy_memory_stats raw{};
  const sy_status status = locked([&] { return functions().memory_stats(handle_, &raw); });
  SY_RETURN_IF_ERROR(check(status, "memory_stats"));
  MemoryStats stats;
  stats.allocated_bytes = raw.allocated_bytes;
  stats.reserved_bytes = raw.reserved_bytes;
  stats.peak_allocated_bytes = raw.peak_allocated_bytes;
  stats.limit_bytes = raw.limit_bytes;
  stats.allocation_count = raw.allocation_count;
  return stats;
}

Status Device::reset_peak_memory() {
  if (functions().memory_reset_peak == nullptr) return unimplemented(info_.id() + ": reset_peak");
  return check(locked([&] { return functions().memory_reset_peak(handle_); }), "memory_reset_peak");
}

Status Device::empty_cache() {
  // A device without a cache has nothing to return: that is success, not an error.
  if (functions().memory_empty_cache == nullptr) return ok_status();
  return check(locked([&] { return functions().memory_empty_cache(handle_); }),
               "memory_empty_cache");
}

Status Device::set_memory_limit(uint64_t limit_bytes) {
  if (functions().memory_set_limit == nullptr) {
    return unimplemented(info_.id() + " cannot cap its memory");
  }
  return check(locked([&] { return functions().memory_set_limit(handle_, limit_bytes); }),
               "memory_set_limit");
}

Buffer::Buffer(std::shared_ptr<Device> device, sy_buffer handle, uint64_t size_bytes)
    : device_(std::move(device)), handle_(handle), size_bytes_(size_bytes), host_address_(nullptr) {
  const auto& fns = device_->functions();
  if (fns.buffer_host_address != nullptr) {
    host_address_ =
        device_->locked([&] { return fns.buffer_host_address(device_->handle(), handle_); });
  }
}

Buffer::~Buffer() {
  const Device::PluginCall lock(*device_);
  device_->functions().buffer_release(device_->handle(), handle_);
}

Queue::Queue(std::shared_ptr<Device> device, sy_queue handle)
    : device_(std::move(device)), handle_(handle) {}

Queue::~Queue() {
  const Device::PluginCall lock(*device_);
  device_->functions().queue_destroy(device_->handle(), handle_);
}

Status Queue::dispatch(const sy_op_call& call) {
  const sy_status status = device_->locked(
      [&] { return device_->functions().dispatch(device_->handle(), handle_, &call); });
  return device_->check(status, "dispatch");
}

Status Queue::write(const Buffer& dst, uint64_t dst_offset, const void* src, uint64_t size_bytes) {
  if (dst_offset + size_bytes > dst.size_bytes()) {
    return invalid_argument("write of " + std::to_string(size_bytes) + " bytes at offset " +
                            std::to_string(dst_offset) + " overruns a buffer of " +
                            std::to_string(dst.size_bytes()) + " bytes");
  }
  const sy_status status = device_->locked([&] {
    return device_->functions().buffer_write(device_->handle(), handle_, dst.handle(), dst_offset,
                                             src, size_bytes);
  });
  return device_->check(status, "buffer_write");
}

Status Queue::read(const Buffer& src, uint64_t src_offset, void* dst, uint64_t size_bytes) {
  if (src_offset + size_bytes > src.size_bytes()) {
    return invalid_argument("read of " + std::to_string(size_bytes) + " bytes at offset " +
                            std::to_string(src_offset) + " overruns a buffer of " +
                            std::to_string(src.size_bytes()) + " bytes");
  }
  const sy_status status = device_->locked([&] {
    return device_->functions().buffer_read(device_->handle(), handle_, src.handle(), src_offset,
                                            dst, size_bytes);
  });
  return device_->check(status, "buffer_read");
}

Status Queue::finish() {
  const sy_status status = device_->locked(
      [&] { return device_->functions().queue_finish(device_->handle(), handle_); });
  return device_->check(status, "queue_finish");
}

void Device::set_fallback(FallbackPolicy policy, std::shared_ptr<Device> fallback_device) {
  std::lock_guard<std::mutex> lock(fallback_->mutex);
  fallback_->policy = policy;
  fallback_->is_self = fallback_device.get() == this;
  fallback_->device = fallback_->is_self ? nullptr : std::move(fallback_device);
}

FallbackPolicy Device::fallback_policy() const {
  std::lock_guard<std::mutex> lock(fallback_->mutex);
  return fallback_->policy;
}

std::shared_ptr<Device> Device::fallback_device() const {
  std::lock_guard<std::mutex> lock(fallback_->mutex);
  if (fallback_->is_self) return std::const_pointer_cast<Device>(shared_from_this());
  return fallback_->device;
}

std::vector<FallbackCount> Device::fallback_counts() const {
  std::lock_guard<std::mutex> lock(fallback_->mutex);
  return fallback_->counts;
}

uint64_t Device::fallback_calls() const {
  std::lock_guard<std::mutex> lock(fallback_->mutex);
  uint64_t total = 0;
  for (const FallbackCount& count : fallback_->counts) total += count.calls;
  return total;
}

void Device::reset_fallback_counts() {
  std::lock_guard<std::mutex> lock(fallback_->mutex);
  fallback_->counts.clear();
}

bool Device::record_fallback(const char* op, const char* dtype, uint64_t copies, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(fallback_->mutex);
  for (FallbackCount& count : fallback_->counts) {
    if (count.op == op && count.dtype == dtype) {
      ++count.calls;
      count.copies += copies;
      count.bytes_copied += bytes;
      return false;
    }
  }
  fallback_->counts.push_back({op, dtype, info_.backend, 1, copies, bytes});
  return true;
}

}  // namespace switchyard
