// The private side of Profiler: compact per-op records, the devices with their event pools, and
// the helpers shared by the recording, summary and trace files.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "switchyard/device.h"
#include "switchyard/profile.h"

namespace switchyard {

namespace profile_detail {

// A device the profiler has seen. The shared_ptr keeps the device (and its plugin) alive while
// the profiler holds events made by it.
struct DeviceSlot {
  std::shared_ptr<Device> device;
  const Device* raw = nullptr;
  std::string id;       // "cuda:0"
  std::string backend;  // "cuda"
  std::string name;     // the device's own name, for the trace's process label
  bool events = false;  // device time from events (false: host time)
  // The first event recorded on the device: zero of its timeline, mapped to anchor_host_ns.
  sy_event anchor = nullptr;
  int64_t anchor_host_ns = 0;
  std::vector<sy_event> free_events;
  std::vector<sy_event> created_events;  // every event made, destroyed with the profiler
  bool any_measured = false;             // some op got a device time from events
};

// One op, as recorded. Shapes live in Impl::tensor_words (see encode_tensors) so that a record is
// a fixed-size value and a million ops cost tens of megabytes, not hundreds.
struct RawOp {
  int64_t begin_ns = 0;  // host, since Impl::start_ns
  int64_t end_ns = 0;
  double device_us = 0;
  double device_begin_us = 0;
  sy_event start_event = nullptr;  // non-null while unresolved
  sy_event end_event = nullptr;
  uint64_t tensor_offset = 0;
  uint32_t thread = 0;
  uint16_t op = 0;
  uint16_t device = 0;  // index into Impl::devices
  uint8_t num_inputs = 0;
  uint8_t num_outputs = 0;
  bool fallback = false;
  bool measured = false;
};

struct RawSpan {
  std::string name;
  uint32_t thread = 0;
  int64_t begin_ns = 0;
  int64_t end_ns = -1;  // -1 while open
};

// Totals of ops past max_recorded_ops, per (op, fallback).
struct OverflowStats {
  uint64_t count = 0;
  int64_t host_ns = 0;
  bool on_event_device = false;
};

// Row of the per-op tables: op (SY_OP_COUNT for an unknown value) times two (fallback or not).
constexpr size_t kOpKeys = (static_cast<size_t>(SY_OP_COUNT) + 1) * 2;
inline size_t op_key(uint32_t op, bool fallback) {
  const size_t index = op < SY_OP_COUNT ? op : static_cast<size_t>(SY_OP_COUNT);
  return index * 2 + (fallback ? 1 : 0);
}

// Outstanding event pairs allowed before the oldest half is resolved. It bounds the event pool
// (twice this many events per device at most) at the price of an occasional wait for ops this far
// behind the host, which an asynchronous device has normally finished long before.
constexpr size_t kMaxOutstandingPairs = 1024;

// Shapes and dtypes of a call's tensors, appended to `words`: per tensor one word
// (dtype | rank << 8) followed by `rank` extents.
void encode_tensors(const sy_op_call& call, std::vector<int64_t>& words);
// Decodes `count` tensors starting at `offset`; returns the offset after them.
uint64_t decode_tensors(const std::vector<int64_t>& words, uint64_t offset, uint32_t count,
                        std::vector<ProfiledTensor>& out);
const char* dtype_text(uint32_t dtype);

}  // namespace profile_detail

struct Profiler::Impl {
  explicit Impl(ProfilerOptions profiler_options);
  ~Impl();

  ProfilerOptions options;
  uint64_t serial = 0;      // unique per profiler in this process, for thread-local caches
  uint64_t generation = 0;  // advanced by clear(), so spans and ops begun before it are dropped
  // steady_clock time of the profiler's zero, in nanoseconds; atomic because ops read it outside
  // the mutex while clear() may move it.
  std::atomic<int64_t> start_ns{0};

  mutable std::mutex mutex;
  std::vector<profile_detail::DeviceSlot> devices;
  std::vector<profile_detail::RawOp> ops;
  std::vector<int64_t> tensor_words;
  std::vector<profile_detail::RawSpan> spans;
  std::vector<size_t> unresolved;  // indices into ops with outstanding events, oldest first
  size_t unresolved_head = 0;
  uint64_t seen_ops = 0;
  std::array<profile_detail::OverflowStats, profile_detail::kOpKeys> overflow{};
  std::vector<std::string> warnings;
  std::vector<std::thread::id> threads;
  // Parallel to `threads`: "" for a host thread, else the name of a track that holds intervals
  // of no thread (an allreduce in flight), whose entry in `threads` is the default id.
  std::vector<std::string> track_names;

  static int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  int64_t now_ns() const { return steady_ns() - start_ns.load(std::memory_order_relaxed); }

  // All of the following expect `mutex` to be held.
  uint32_t thread_index();
  uint32_t track_index(const std::string& name);
  uint16_t device_slot(Device& device);
  // Records an event on `queue` of the device in `slot`; null (and host timing from then on for
  // that device, with a warning) when the plugin fails.
  sy_event record_event(uint16_t slot, sy_queue queue);
  void release_event(uint16_t slot, sy_event event);
  void disable_events(uint16_t slot, const std::string& why);
  void resolve(profile_detail::RawOp& op);
  void resolve_oldest(size_t count);
  void resolve_all() { resolve_oldest(unresolved.size() - unresolved_head); }
  void add_op(const OpEvent& event, int64_t begin_ns, int64_t end_ns, uint16_t slot,
              sy_event start_event, sy_event end_event);
  void add_overflow(const OpEvent& event, int64_t host_ns, uint16_t slot);

  OpRecord to_record(const profile_detail::RawOp& op) const;
  ProfileSummary make_summary() const;
  Status write_trace(const std::filesystem::path& path) const;
};

}  // namespace switchyard
