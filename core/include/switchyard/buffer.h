// Buffer: a block of device memory.
//
// Ownership: created by Device::allocate, held by shared_ptr; the destructor returns the memory to
// the plugin's pool. A Buffer holds its Device, so the device (and plugin) outlive it.
//
// Threads: a Buffer may be shared; releasing it (the last shared_ptr) runs under its device's lock
// (device.h). Writing one buffer from two threads at once gives no defined contents.
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstdint>
#include <memory>

#include "switchyard/plugin_abi.h"

namespace switchyard {

class Device;

class Buffer {
 public:
  Buffer(std::shared_ptr<Device> device, sy_buffer handle, uint64_t size_bytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  uint64_t size_bytes() const { return size_bytes_; }
  sy_buffer handle() const { return handle_; }
  const std::shared_ptr<Device>& device() const { return device_; }
  // The bytes in host memory, or nullptr where the device memory is not host-addressable.
  void* host_address() const { return host_address_; }

 private:
  std::shared_ptr<Device> device_;
  sy_buffer handle_;
  uint64_t size_bytes_;
  void* host_address_;
};

}  // namespace switchyard

#pragma GCC visibility pop
