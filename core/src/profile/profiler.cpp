// Profiler: the observer hooks that record each op, named spans, and the accessors.
#include <atomic>

#include "profile/profiler_impl.h"
#include "switchyard/queue.h"

namespace switchyard {

using profile_detail::RawOp;
using profile_detail::RawSpan;

namespace {

std::atomic<uint64_t> g_next_serial{1};

// An op between on_op_begin and on_op_end on this thread. Ops do not nest, but a stack keeps two
// profilers (or a profiler installed mid-op) from pairing the wrong begin and end.
struct PendingOp {
  uint64_t serial = 0;
  uint64_t generation = 0;
  const sy_op_call* call = nullptr;
  int64_t begin_ns = 0;
  uint16_t slot = 0;
  sy_event start_event = nullptr;
};

thread_local std::vector<PendingOp> t_pending;
constexpr size_t kMaxPendingPerThread = 64;

// Takes the newest pending op of this profiler for `call` off the stack; false if there is none
// (the op began before the profiler was installed).
bool pop_pending(uint64_t serial, const sy_op_call* call, PendingOp& out) {
  for (size_t i = t_pending.size(); i-- > 0;) {
    if (t_pending[i].serial == serial && t_pending[i].call == call) {
      out = t_pending[i];
      t_pending.erase(t_pending.begin() + static_cast<std::ptrdiff_t>(i));
      return true;
    }
  }
  return false;
}

}  // namespace

Profiler::Impl::Impl(ProfilerOptions profiler_options)
    : options(profiler_options), serial(g_next_serial.fetch_add(1)), start_ns(steady_ns()) {}

uint32_t Profiler::Impl::thread_index() {
  const std::thread::id id = std::this_thread::get_id();
  for (size_t i = 0; i < threads.size(); ++i) {
    if (threads[i] == id) return static_cast<uint32_t>(i);
  }
  threads.push_back(id);
  track_names.emplace_back();
  return static_cast<uint32_t>(threads.size() - 1);
}

uint32_t Profiler::Impl::track_index(const std::string& name) {
  for (size_t i = 0; i < track_names.size(); ++i) {
    if (track_names[i] == name) return static_cast<uint32_t>(i);
  }
  threads.emplace_back();  // the default id: no running thread has it
  track_names.push_back(name);
  return static_cast<uint32_t>(threads.size() - 1);
}

void Profiler::Impl::add_op(const OpEvent& event, int64_t begin_ns, int64_t end_ns, uint16_t slot,
                            sy_event start_event, sy_event end_event) {
  RawOp op;
  op.begin_ns = begin_ns;
  op.end_ns = end_ns;
  op.device_us = static_cast<double>(end_ns - begin_ns) / 1e3;
  op.start_event = start_event;
  op.end_event = end_event;
  op.tensor_offset = tensor_words.size();
  op.thread = thread_index();
  op.op = static_cast<uint16_t>(event.call->op);
  op.device = slot;
  op.num_inputs = static_cast<uint8_t>(event.call->num_inputs);
  op.num_outputs = static_cast<uint8_t>(event.call->num_outputs);
  op.fallback = event.fallback;
  profile_detail::encode_tensors(*event.call, tensor_words);
  if (start_event != nullptr) unresolved.push_back(ops.size());
  ops.push_back(op);
  if (unresolved.size() - unresolved_head > profile_detail::kMaxOutstandingPairs) {
    resolve_oldest(profile_detail::kMaxOutstandingPairs / 2);
  }
}

void Profiler::Impl::add_overflow(const OpEvent& event, int64_t host_ns, uint16_t slot) {
  auto& stats = overflow[profile_detail::op_key(event.call->op, event.fallback)];
  ++stats.count;
  stats.host_ns += host_ns;
  if (devices[slot].events) stats.on_event_device = true;
}

Profiler::Profiler(ProfilerOptions options) : impl_(std::make_unique<Impl>(options)) {}

Profiler::~Profiler() {
  // A profiler destroyed while installed would leave a dangling observer behind.
  if (op_observer() == this) set_op_observer(nullptr);
}

void Profiler::on_op_begin(const OpEvent& event) {
  Impl& s = *impl_;
  PendingOp pending;
  pending.serial = s.serial;
  pending.call = event.call;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    pending.generation = s.generation;
    pending.slot = s.device_slot(*event.device);
    const bool recorded = s.ops.size() < s.options.max_recorded_ops;
    if (recorded && s.devices[pending.slot].events && event.queue != nullptr) {
      pending.start_event = s.record_event(pending.slot, event.queue->handle());
    }
    // Taken last, so that the host interval covers the dispatch and not the event recording.
    pending.begin_ns = s.now_ns();
  }
  // Entries whose end went to another observer (the profiler was removed mid-op) are never
  // popped; a bound keeps them from piling up.
  if (t_pending.size() >= kMaxPendingPerThread) t_pending.erase(t_pending.begin());
  t_pending.push_back(pending);
}

void Profiler::on_op_end(const OpEvent& event) {
  Impl& s = *impl_;
  const int64_t end_ns = s.now_ns();
  PendingOp pending;
  if (!pop_pending(s.serial, event.call, pending)) return;
  std::lock_guard<std::mutex> lock(s.mutex);
  if (pending.generation != s.generation) {
    s.release_event(pending.slot, pending.start_event);
    return;
  }
  ++s.seen_ops;
  if (s.ops.size() >= s.options.max_recorded_ops) {
    s.release_event(pending.slot, pending.start_event);
    s.add_overflow(event, end_ns - pending.begin_ns, pending.slot);
    return;
  }
  sy_event end_event = nullptr;
  if (pending.start_event != nullptr) {
    end_event = s.record_event(pending.slot, event.queue->handle());
    if (end_event == nullptr) {
      s.release_event(pending.slot, pending.start_event);
      pending.start_event = nullptr;
    }
  }
  s.add_op(event, pending.begin_ns, end_ns, pending.slot, pending.start_event, end_event);
}

ProfileSpan Profiler::span(std::string name) {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mutex);
  RawSpan span;
  span.name = std::move(name);
  span.thread = s.thread_index();
  span.begin_ns = s.now_ns();
  s.spans.push_back(std::move(span));
  return ProfileSpan(impl_.get(), s.generation, s.spans.size() - 1);
}

ProfileSpan Profiler::span_on_track(std::string name, const std::string& track) {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mutex);
  RawSpan span;
  span.name = std::move(name);
  span.thread = s.track_index(track);
  span.begin_ns = s.now_ns();
  s.spans.push_back(std::move(span));
  return ProfileSpan(impl_.get(), s.generation, s.spans.size() - 1);
}

std::vector<OpRecord> Profiler::op_records() {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mutex);
  s.resolve_all();
  std::vector<OpRecord> records;
  records.reserve(s.ops.size());
  for (const RawOp& op : s.ops) records.push_back(s.to_record(op));
  return records;
}

std::vector<SpanRecord> Profiler::span_records() {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mutex);
  const int64_t now = s.now_ns();
  std::vector<SpanRecord> records;
  for (const RawSpan& span : s.spans) {
    SpanRecord r;
    r.name = span.name;
    r.thread = span.thread;
    r.begin_us = static_cast<double>(span.begin_ns) / 1e3;
    r.open = span.end_ns < 0;
    r.end_us = static_cast<double>(r.open ? now : span.end_ns) / 1e3;
    records.push_back(std::move(r));
  }
  return records;
}

ProfileSummary Profiler::summary() {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mutex);
  s.resolve_all();
  return s.make_summary();
}

Status Profiler::write_chrome_trace(const std::filesystem::path& path) {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mutex);
  s.resolve_all();
  return s.write_trace(path);
}

void Profiler::clear() {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mutex);
  s.resolve_all();  // gives the events back to the pools
  const int64_t new_start_ns = Impl::steady_ns();
  const int64_t shift_ns = new_start_ns - s.start_ns.load(std::memory_order_relaxed);
  for (auto& slot : s.devices) slot.anchor_host_ns -= shift_ns;
  s.start_ns.store(new_start_ns, std::memory_order_relaxed);
  ++s.generation;
  s.ops.clear();
  s.tensor_words.clear();
  s.spans.clear();
  s.unresolved.clear();
  s.unresolved_head = 0;
  s.seen_ops = 0;
  s.overflow = {};
  s.warnings.clear();
}

uint64_t Profiler::op_count() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->seen_ops;
}

// ---- ProfileSpan --------------------------------------------------------------------------------

ProfileSpan::ProfileSpan(ProfileSpan&& other) noexcept
    : impl_(other.impl_), generation_(other.generation_), index_(other.index_) {
  other.impl_ = nullptr;
}

ProfileSpan& ProfileSpan::operator=(ProfileSpan&& other) noexcept {
  if (this != &other) {
    end();
    impl_ = other.impl_;
    generation_ = other.generation_;
    index_ = other.index_;
    other.impl_ = nullptr;
  }
  return *this;
}

ProfileSpan::~ProfileSpan() {
  end();
}

void ProfileSpan::end() {
  if (impl_ == nullptr) return;
  Profiler::Impl& s = *impl_;
  impl_ = nullptr;
  const int64_t now = s.now_ns();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (generation_ == s.generation && index_ < s.spans.size()) s.spans[index_].end_ns = now;
}

}  // namespace switchyard
