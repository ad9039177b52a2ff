// Queue: ops and copies run in submission order on one queue.
//
// Ownership: made by Device (each device has a default one); holds its Device.
//
// Threads: a Queue may be shared: every call runs under its device's lock (device.h), so calls
// from different threads are serialised, each in the order its own thread made them.
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstdint>
#include <memory>

#include "switchyard/plugin_abi.h"
#include "switchyard/status.h"

namespace switchyard {

class Device;
class Buffer;

class Queue {
 public:
  Queue(std::shared_ptr<Device> device, sy_queue handle);
  ~Queue();
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;

  sy_queue handle() const { return handle_; }
  Device& device() const { return *device_; }

  Status dispatch(const sy_op_call& call);
  Status write(const Buffer& dst, uint64_t dst_offset, const void* src, uint64_t size_bytes);
  Status read(const Buffer& src, uint64_t src_offset, void* dst, uint64_t size_bytes);
  // Blocks until everything submitted so far has completed.
  Status finish();

 private:
  // A raw pointer would dangle if the device died first; the shared_ptr forbids that. The device's
  // own default queue is the exception: it is owned by the device and holds no reference back
  // (see Device::create), which is why device_ is set through a non-owning alias there.
  std::shared_ptr<Device> device_;
  sy_queue handle_;
};

}  // namespace switchyard

#pragma GCC visibility pop
