// ProfileScope and the active profiler that library code reaches through profile_span().
#include <atomic>

#include "switchyard/profile.h"

namespace switchyard {

namespace {

std::atomic<Profiler*> g_active_profiler{nullptr};

}  // namespace

ProfileScope::ProfileScope(Profiler& profiler)
    : previous_observer_(op_observer()),
      previous_active_(g_active_profiler.load(std::memory_order_acquire)) {
  set_op_observer(&profiler);
  g_active_profiler.store(&profiler, std::memory_order_release);
}

ProfileScope::~ProfileScope() {
  set_op_observer(previous_observer_);
  g_active_profiler.store(previous_active_, std::memory_order_release);
}

Profiler* active_profiler() {
  return g_active_profiler.load(std::memory_order_acquire);
}

ProfileSpan profile_span(std::string_view name) {
  Profiler* profiler = active_profiler();
  if (profiler == nullptr) return {};
  return profiler->span(std::string(name));
}

ProfileSpan profile_track_span(std::string_view name, std::string_view track) {
  Profiler* profiler = active_profiler();
  if (profiler == nullptr) return {};
  return profiler->span_on_track(std::string(name), std::string(track));
}

}  // namespace switchyard
