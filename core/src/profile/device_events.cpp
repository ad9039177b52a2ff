// Device time from plugin events: the per-device event pools, the anchor that maps a device's
// timeline onto the profiler's clock, and the lazy resolution of recorded event pairs.
#include "profile/profiler_impl.h"
#include "switchyard/plugin.h"

namespace switchyard {

using profile_detail::DeviceSlot;
using profile_detail::RawOp;

namespace {

bool has_event_functions(const sy_plugin_functions& f) {
  return f.event_create != nullptr && f.event_destroy != nullptr && f.event_record != nullptr &&
         f.event_synchronize != nullptr && f.event_elapsed_ms != nullptr;
}

bool wants_events(const Device& device, DeviceTiming mode) {
  if (mode == DeviceTiming::kHostOnly || !has_event_functions(device.functions())) return false;
  if (mode == DeviceTiming::kAnyEvents) return true;
  return (device.plugin().capabilities() & SY_CAP_DEVICE_TIMING) != 0;
}

}  // namespace

Profiler::Impl::~Impl() {
  std::lock_guard<std::mutex> lock(mutex);
  // Events still in flight are waited for first: some runtimes must not free a pending event.
  resolve_all();
  for (DeviceSlot& slot : devices) {
    const sy_plugin_functions& f = slot.device->functions();
    const Device::PluginCall plugin_call(*slot.device);
    for (sy_event event : slot.created_events) f.event_destroy(slot.device->handle(), event);
  }
}

uint16_t Profiler::Impl::device_slot(Device& device) {
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices[i].raw == &device) return static_cast<uint16_t>(i);
  }
  DeviceSlot slot;
  slot.device = device.shared_from_this();
  slot.raw = &device;
  slot.id = device.id();
  slot.backend = device.backend();
  slot.name = device.info().name;
  slot.events = wants_events(device, options.device_timing);
  devices.push_back(std::move(slot));
  return static_cast<uint16_t>(devices.size() - 1);
}

void Profiler::Impl::disable_events(uint16_t slot, const std::string& why) {
  DeviceSlot& d = devices[slot];
  if (!d.events) return;
  d.events = false;
  warnings.push_back(d.id + ": device timing off, host time used from now on: " + why);
}

sy_event Profiler::Impl::record_event(uint16_t slot, sy_queue queue) {
  DeviceSlot& d = devices[slot];
  const sy_plugin_functions& f = d.device->functions();
  auto take = [&]() -> sy_event {
    if (!d.free_events.empty()) {
      sy_event event = d.free_events.back();
      d.free_events.pop_back();
      return event;
    }
    sy_event event = nullptr;
    const Status status = d.device->check(
        d.device->locked([&] { return f.event_create(d.device->handle(), &event); }),
        "event_create");
    if (!status.ok()) {
      disable_events(slot, status.message());
      return nullptr;
    }
    d.created_events.push_back(event);
    return event;
  };
  if (d.anchor == nullptr) {
    sy_event anchor = take();
    if (anchor == nullptr) return nullptr;
    // Read before recording: on a host clock the anchor then never maps later than it ran, and on
    // an idle asynchronous device the anchor runs right after it is recorded.
    const int64_t host_ns = now_ns();
    const Status status = d.device->check(
        d.device->locked([&] { return f.event_record(d.device->handle(), queue, anchor); }),
        "event_record");
    if (!status.ok()) {
      d.free_events.push_back(anchor);
      disable_events(slot, status.message());
      return nullptr;
    }
    d.anchor = anchor;
    d.anchor_host_ns = host_ns;
  }
  sy_event event = take();
  if (event == nullptr) return nullptr;
  const Status status = d.device->check(
      d.device->locked([&] { return f.event_record(d.device->handle(), queue, event); }),
      "event_record");
  if (!status.ok()) {
    d.free_events.push_back(event);
    disable_events(slot, status.message());
    return nullptr;
  }
  return event;
}

void Profiler::Impl::release_event(uint16_t slot, sy_event event) {
  if (event != nullptr) devices[slot].free_events.push_back(event);
}

void Profiler::Impl::resolve(RawOp& op) {
  if (op.start_event == nullptr) return;
  DeviceSlot& d = devices[op.device];
  const sy_plugin_functions& f = d.device->functions();
  const sy_device handle = d.device->handle();
  double elapsed_ms = 0;
  double offset_ms = 0;
  Status status =
      d.device->check(d.device->locked([&] { return f.event_synchronize(handle, op.end_event); }),
                      "event_synchronize");
  if (status.ok()) {
    status = d.device->check(d.device->locked([&] {
      return f.event_elapsed_ms(handle, op.start_event, op.end_event, &elapsed_ms);
    }),
                             "event_elapsed_ms");
  }
  if (status.ok()) {
    status = d.device->check(d.device->locked([&] {
      return f.event_elapsed_ms(handle, d.anchor, op.start_event, &offset_ms);
    }),
                             "event_elapsed_ms");
  }
  if (status.ok()) {
    op.device_us = elapsed_ms * 1e3;
    op.device_begin_us = static_cast<double>(d.anchor_host_ns) / 1e3 + offset_ms * 1e3;
    op.measured = true;
    d.any_measured = true;
  } else {
    disable_events(op.device, status.message());
  }
  d.free_events.push_back(op.start_event);
  d.free_events.push_back(op.end_event);
  op.start_event = nullptr;
  op.end_event = nullptr;
}

void Profiler::Impl::resolve_oldest(size_t count) {
  for (size_t i = 0; i < count && unresolved_head < unresolved.size(); ++i) {
    resolve(ops[unresolved[unresolved_head++]]);
  }
  if (unresolved_head == unresolved.size()) {
    unresolved.clear();
    unresolved_head = 0;
  } else if (unresolved_head > profile_detail::kMaxOutstandingPairs) {
    unresolved.erase(unresolved.begin(),
                     unresolved.begin() + static_cast<std::ptrdiff_t>(unresolved_head));
    unresolved_head = 0;
  }
}

}  // namespace switchyard
