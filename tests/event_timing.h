// The plugin ABI's events (event_create, event_record, event_synchronize, event_elapsed_ms) time a
// known amount of work on a device: a 128 x 128 f32 matmul dispatched k times and 8k times between
// two events. The elapsed times must be positive, no longer than the host's clock saw from the
// first record to the synchronize (device time is inside that window, so milliseconds reported in
// another unit show), and 8k's median must exceed k's clearly. Used by tests/runtime on every
// backend built here and by tests/cuda on the GPU (tools/gpu-check).
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backend_support.h"
#include "switchyard/buffer.h"
#include "switchyard/device.h"
#include "switchyard/queue.h"

namespace switchyard::testing {

namespace event_timing_detail {

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Two events of one device, destroyed with it.
struct EventPair {
  Device& device;
  sy_event start = nullptr;
  sy_event end = nullptr;
  explicit EventPair(Device& d) : device(d) {}
  ~EventPair() {
    if (start != nullptr) device.functions().event_destroy(device.handle(), start);
    if (end != nullptr) device.functions().event_destroy(device.handle(), end);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
};

struct Timed {
  double device_ms = 0.0;  // event_elapsed_ms between the two events
  double host_ms = 0.0;    // the host's clock from before the first record to after synchronize
};

}  // namespace event_timing_detail

// Times k and 8k matmuls on `device` with its events (see the top of this file). A device whose
// plugin has no events, or whose events cannot be made here, is skipped with the reason, or fails
// where its backend is required (tests/backend_support.h).
inline void check_event_timing(Device& device) {
  using namespace event_timing_detail;
  const std::string backend = device.backend();
  const sy_plugin_functions& f = device.functions();
  if (f.event_create == nullptr || f.event_destroy == nullptr || f.event_record == nullptr ||
      f.event_synchronize == nullptr || f.event_elapsed_ms == nullptr) {
    skip_backend(backend,
                 "the plugin has no event functions (optional in the ABI; the core times on the "
                 "host then)");
    return;
  }
  if (!device.supports(SY_OP_MATMUL, SY_DTYPE_F32)) {
    skip_backend(backend, "no f32 matmul to time");
    return;
  }
  EventPair events(device);
  if (const Status made =
          device.check(f.event_create(device.handle(), &events.start), "event_create");
      !made.ok()) {
    skip_backend(backend, "its events cannot time here: " + made.to_string());
    return;
  }
  throw_if_error(device.check(f.event_create(device.handle(), &events.end), "event_create"));

  // a (128 x 128) @ a -> c, values small enough that nothing overflows however often it runs.
  const int64_t n = 128;
  const uint64_t bytes = static_cast<uint64_t>(n * n) * sizeof(float);
  std::vector<float> values(static_cast<size_t>(n * n));
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.01f * static_cast<float>(i % 7);
  auto buffer = value_or_throw(device.allocate(2 * bytes));
  Queue& queue = device.default_queue();
  throw_if_error(queue.write(*buffer, 0, values.data(), bytes));
  sy_op_call call;
  std::memset(&call, 0, sizeof(call));
  call.op = SY_OP_MATMUL;
  call.num_inputs = 2;
  call.num_outputs = 1;
  sy_tensor_desc desc{};
  desc.buffer = buffer->handle();
  desc.dtype = SY_DTYPE_F32;
  desc.rank = 2;
  desc.shape[0] = desc.shape[1] = n;
  desc.strides[0] = n;
  desc.strides[1] = 1;
  call.inputs[0] = call.inputs[1] = desc;
  desc.offset_bytes = bytes;
  call.outputs[0] = desc;

  const auto run = [&](int dispatches) {
    Timed timed;
    const auto host_start = std::chrono::steady_clock::now();
    throw_if_error(device.check(f.event_record(device.handle(), queue.handle(), events.start),
                                "event_record"));
    for (int i = 0; i < dispatches; ++i) throw_if_error(queue.dispatch(call));
    throw_if_error(
        device.check(f.event_record(device.handle(), queue.handle(), events.end), "event_record"));
    throw_if_error(
        device.check(f.event_synchronize(device.handle(), events.end), "event_synchronize"));
    timed.host_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - host_start)
            .count();
    throw_if_error(device.check(
        f.event_elapsed_ms(device.handle(), events.start, events.end, &timed.device_ms),
        "event_elapsed_ms"));
    return timed;
  };

  // k: enough dispatches for about 8 ms of work on this device by its own events (doubling from 1
  // after a warm-up dispatch; 50 ms on the host's clock also ends it, should the events report
  // nothing), so that 8k runs about 64 ms; a few repetitions stay well under a second per
  // backend, and medians keep a busy 2-core machine's stalls out of the comparison.
  throw_if_error(queue.dispatch(call));
  throw_if_error(queue.finish());
  int k = 1;
  for (Timed timed = run(k); k < 4096 && timed.device_ms < 8.0 && timed.host_ms < 50.0;) {
    k *= 2;
    timed = run(k);
  }

  std::vector<double> small, large;
  for (int repetition = 0; repetition < 5; ++repetition) {
    for (const int dispatches : {k, 8 * k}) {
      const Timed timed = run(dispatches);
      INFO(device.id() << ": " << dispatches << " matmuls: " << timed.device_ms << " ms by events, "
                       << timed.host_ms << " ms on the host");
      CHECK(timed.device_ms > 0.0);
      CHECK(std::isfinite(timed.device_ms));
      // The device's time lies inside the host's window; 10% and 0.5 ms for clock differences.
      CHECK(timed.device_ms <= 1.1 * timed.host_ms + 0.5);
      (dispatches == k ? small : large).push_back(timed.device_ms);
    }
  }
  const double small_ms = median(small), large_ms = median(large);
  WARN(device.id() << ": " << k << " matmuls " << small_ms << " ms, " << 8 * k << " matmuls "
                   << large_ms << " ms (medians of 5, by events)");
  // 8 times the work takes about 8 times as long; 2 leaves room for a noisy machine.
  CHECK(large_ms > small_ms);
  CHECK(large_ms > 2.0 * small_ms);
}

}  // namespace switchyard::testing
