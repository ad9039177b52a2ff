// Profiling: every op the tensor layer dispatches, timed on the host and, where the backend can,
// on the device; written as a Chrome trace-event file (Perfetto, chrome://tracing) and summed per
// op.
//
// A Profiler is an OpObserver (dispatch.h). A ProfileScope installs it for a block of code and puts
// back whatever observer was there before. For each op it keeps the name, the input and output
// shapes and dtypes, the device, whether the op fell back to another device, the host interval
// around the dispatch call, and the device time. Device time comes from the plugin's events when
// the plugin claims SY_CAP_DEVICE_TIMING: an event is recorded on the op's queue before and after
// the op, and the pairs are resolved lazily (a bounded number stay outstanding, so the event pool
// stays small). On host-synchronous backends the op has finished when dispatch returns, so device
// time is the host time. Named spans ("epoch 3", "train_step") show the structure of a run around
// the ops.
//
// Ownership: the caller owns the Profiler; it must outlive every ProfileScope and ProfileSpan made
// from it. It holds a reference to each Device it has seen events on, so the events can be
// destroyed after the ops' tensors are gone.
//
// Threads: a Profiler may be shared. Installed by a ProfileScope it observes the ops of every
// thread (each thread's spans and ops get a track of their own), and its recording, spans,
// summary() and trace writes take its lock; the ProfileScope itself belongs to the thread that made
// it and should end after the other threads' ops (tests/threads).
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "switchyard/dispatch.h"
#include "switchyard/plugin_abi.h"
#include "switchyard/status.h"

namespace switchyard {

// Where an op's device time comes from.
enum class DeviceTiming {
  kAuto,       // events where the plugin claims SY_CAP_DEVICE_TIMING, host time elsewhere
  kHostOnly,   // never record events: the lowest overhead, device time = host time
  kAnyEvents,  // events wherever the plugin has the event functions, capability or not
};

struct ProfilerOptions {
  DeviceTiming device_timing = DeviceTiming::kAuto;
  // Ops past this many are still counted in the summary (calls and host time, and device time on
  // host-synchronous devices) but are left out of op_records() and the trace, so that a long run
  // neither exhausts memory nor writes a trace no viewer can open.
  uint64_t max_recorded_ops = 2'000'000;
};

// One input or output of a profiled op.
struct ProfiledTensor {
  std::string dtype;           // "f32"
  std::vector<int64_t> shape;  // empty for a scalar
};

// One profiled op. Times are microseconds on the profiler's clock (zero when it started).
struct OpRecord {
  sy_op op = SY_OP_COUNT;
  std::string name;     // op_name(op): "matmul"
  std::string device;   // "cuda:0"
  std::string backend;  // "cuda"
  bool fallback = false;
  uint32_t thread = 0;  // 0 for the first thread seen, then 1, 2, ...
  double host_begin_us = 0;
  double host_end_us = 0;
  double device_time_us = 0;
  // True when device_time_us came from device events; false when it is the host time.
  bool device_time_measured = false;
  // Start on the device, mapped onto the profiler's clock through the first event of the device
  // (valid only when device_time_measured).
  double device_begin_us = 0;
  std::vector<ProfiledTensor> inputs;
  std::vector<ProfiledTensor> outputs;

  double host_time_us() const { return host_end_us - host_begin_us; }
};

// One named span (see Profiler::span).
struct SpanRecord {
  std::string name;
  uint32_t thread = 0;
  double begin_us = 0;
  double end_us = 0;  // the time it was read for a span still open
  bool open = false;
};

// The totals of one op name. A fallen-back op is its own row, named "<op> (fallback)".
struct OpStats {
  std::string name;
  uint64_t count = 0;
  double host_total_ms = 0;
  double device_total_ms = 0;
  double mean_host_us = 0;
  double mean_device_us = 0;
  double percent_of_device_total = 0;  // 0..100
};

struct ProfileSummary {
  std::vector<OpStats> ops;  // sorted by device_total_ms, largest first
  uint64_t total_count = 0;
  double host_total_ms = 0;
  double device_total_ms = 0;
  // From the profiler's start (or last clear()) to this summary.
  double wall_ms = 0;
  // Ops counted here but left out of the trace (see ProfilerOptions::max_recorded_ops).
  uint64_t unrecorded_ops = 0;
  // Events made on all devices so far: the pools are reused, so this stays small however many
  // ops ran (at most about two per outstanding op pair, see the implementation).
  uint64_t device_events_created = 0;
  // "cuda:0: device events", "reference:0: host time" for every device seen.
  std::vector<std::string> device_timing;
  // Problems that made the profiler fall back to host time (e.g. event_record failed).
  std::vector<std::string> warnings;
};

class ProfileSpan;

class Profiler final : public OpObserver {
 public:
  explicit Profiler(ProfilerOptions options = {});
  ~Profiler() override;
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  void on_op_begin(const OpEvent& event) override;
  void on_op_end(const OpEvent& event) override;

  // A named host interval from now until the returned object ends or is destroyed. Spans and the
  // ops inside them nest in the trace.
  ProfileSpan span(std::string name);
  // A span on a named track of its own instead of the calling thread's: for work in flight that
  // no host thread is doing while it lasts (an allreduce between start and completion), so that
  // it may overlap the thread's spans and ops in the trace without nesting.
  ProfileSpan span_on_track(std::string name, const std::string& track);

  // The methods below resolve outstanding device events first, so they wait for the ops already
  // queued on every profiled device.
  std::vector<OpRecord> op_records();
  std::vector<SpanRecord> span_records();
  ProfileSummary summary();
  // The summary as a table: op, calls, host ms, device ms, mean us, percent; then a total line.
  std::string summary_table();
  // Writes the trace-event JSON object ({"traceEvents": [...], "displayTimeUnit": "ms"})
  // atomically: a temporary file in the same folder renamed over `path`. Missing parent folders
  // are created. Errors name the path.
  Status write_chrome_trace(const std::filesystem::path& path);

  // Forgets every record and restarts the clock; devices and their event pools are kept.
  void clear();
  // Ops seen since the start or the last clear(), recorded or not.
  uint64_t op_count() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The end of a span, when it is destroyed or end() is called; an inactive one does nothing.
class ProfileSpan {
 public:
  ProfileSpan() = default;
  ProfileSpan(ProfileSpan&& other) noexcept;
  ProfileSpan& operator=(ProfileSpan&& other) noexcept;
  ProfileSpan(const ProfileSpan&) = delete;
  ProfileSpan& operator=(const ProfileSpan&) = delete;
  ~ProfileSpan();

  void end();
  bool active() const { return impl_ != nullptr; }

 private:
  friend class Profiler;
  ProfileSpan(Profiler::Impl* impl, uint64_t generation, size_t index)
      : impl_(impl), generation_(generation), index_(index) {}

  Profiler::Impl* impl_ = nullptr;
  uint64_t generation_ = 0;
  size_t index_ = 0;
};

// Installs a profiler as the op observer and the active profiler for its lifetime, then puts back
// the observer and active profiler that were there before. Create it on the thread that runs the
// ops, before they start.
class ProfileScope {
 public:
  explicit ProfileScope(Profiler& profiler);
  ~ProfileScope();
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  OpObserver* previous_observer_;
  Profiler* previous_active_;
};

// The profiler of the innermost live ProfileScope, or null.
Profiler* active_profiler();

// A span on the active profiler, or an inactive span when none is active, so library code (the
// trainer, an application) can mark its structure at almost no cost when nobody profiles.
ProfileSpan profile_span(std::string_view name);
// profile_span on a named track (Profiler::span_on_track).
ProfileSpan profile_track_span(std::string_view name, std::string_view track);

}  // namespace switchyard

#pragma GCC visibility pop
