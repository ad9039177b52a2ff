// The per-op summary, the public record form of an op, and the compact tensor encoding.
#include <algorithm>
#include <cstdio>

#include "profile/profiler_impl.h"
#include "switchyard/dtype.h"

namespace switchyard {

namespace profile_detail {

void encode_tensors(const sy_op_call& call, std::vector<int64_t>& words) {
  auto encode = [&](const sy_tensor_desc& t) {
    const uint32_t rank = std::min<uint32_t>(t.rank, SY_MAX_RANK);
    words.push_back(static_cast<int64_t>(t.dtype & 0xffu) | static_cast<int64_t>(rank) << 8);
    for (uint32_t i = 0; i < rank; ++i) words.push_back(t.shape[i]);
  };
  for (uint32_t i = 0; i < call.num_inputs && i < SY_MAX_OP_INPUTS; ++i) encode(call.inputs[i]);
  for (uint32_t i = 0; i < call.num_outputs && i < SY_MAX_OP_OUTPUTS; ++i) encode(call.outputs[i]);
}

uint64_t decode_tensors(const std::vector<int64_t>& words, uint64_t offset, uint32_t count,
                        std::vector<ProfiledTensor>& out) {
  for (uint32_t i = 0; i < count; ++i) {
    const int64_t head = words[offset++];
    ProfiledTensor t;
    t.dtype = dtype_text(static_cast<uint32_t>(head & 0xff));
    const auto rank = static_cast<uint32_t>(head >> 8);
    t.shape.assign(words.begin() + static_cast<std::ptrdiff_t>(offset),
                   words.begin() + static_cast<std::ptrdiff_t>(offset + rank));
    offset += rank;
    out.push_back(std::move(t));
  }
  return offset;
}

const char* dtype_text(uint32_t dtype) {
  return dtype < SY_DTYPE_COUNT ? dtype_name(static_cast<DType>(dtype)) : "unknown";
}

}  // namespace profile_detail

OpRecord Profiler::Impl::to_record(const profile_detail::RawOp& op) const {
  const profile_detail::DeviceSlot& device = devices[op.device];
  OpRecord r;
  r.op = static_cast<sy_op>(op.op);
  r.name = op_name(r.op);
  r.device = device.id;
  r.backend = device.backend;
  r.fallback = op.fallback;
  r.thread = op.thread;
  r.host_begin_us = static_cast<double>(op.begin_ns) / 1e3;
  r.host_end_us = static_cast<double>(op.end_ns) / 1e3;
  r.device_time_us = op.device_us;
  r.device_time_measured = op.measured;
  r.device_begin_us = op.measured ? op.device_begin_us : r.host_begin_us;
  const uint64_t next =
      profile_detail::decode_tensors(tensor_words, op.tensor_offset, op.num_inputs, r.inputs);
  profile_detail::decode_tensors(tensor_words, next, op.num_outputs, r.outputs);
  return r;
}

namespace {

struct Totals {
  uint64_t count = 0;
  double host_us = 0;
  double device_us = 0;
};

std::string key_name(size_t key) {
  const auto op = static_cast<sy_op>(key / 2);
  std::string name = op_name(op);
  return key % 2 == 1 ? name + " (fallback)" : name;
}

}  // namespace

ProfileSummary Profiler::Impl::make_summary() const {
  std::array<Totals, profile_detail::kOpKeys> totals{};
  for (const auto& op : ops) {
    Totals& t = totals[profile_detail::op_key(op.op, op.fallback)];
    ++t.count;
    t.host_us += static_cast<double>(op.end_ns - op.begin_ns) / 1e3;
    t.device_us += op.device_us;
  }
  ProfileSummary summary;
  bool overflow_on_event_device = false;
  for (size_t key = 0; key < totals.size(); ++key) {
    const profile_detail::OverflowStats& extra = overflow[key];
    Totals& t = totals[key];
    t.count += extra.count;
    t.host_us += static_cast<double>(extra.host_ns) / 1e3;
    t.device_us += static_cast<double>(extra.host_ns) / 1e3;
    summary.unrecorded_ops += extra.count;
    overflow_on_event_device = overflow_on_event_device || extra.on_event_device;
    if (t.count == 0) continue;
    OpStats stats;
    stats.name = key_name(key);
    stats.count = t.count;
    stats.host_total_ms = t.host_us / 1e3;
    stats.device_total_ms = t.device_us / 1e3;
    stats.mean_host_us = t.host_us / static_cast<double>(t.count);
    stats.mean_device_us = t.device_us / static_cast<double>(t.count);
    summary.ops.push_back(std::move(stats));
    summary.total_count += t.count;
    summary.host_total_ms += t.host_us / 1e3;
    summary.device_total_ms += t.device_us / 1e3;
  }
  for (OpStats& stats : summary.ops) {
    stats.percent_of_device_total =
        summary.device_total_ms > 0 ? 100.0 * stats.device_total_ms / summary.device_total_ms : 0;
  }
  std::stable_sort(summary.ops.begin(), summary.ops.end(), [](const OpStats& a, const OpStats& b) {
    return a.device_total_ms > b.device_total_ms;
  });
  summary.wall_ms = static_cast<double>(now_ns()) / 1e6;
  for (const auto& d : devices) {
    summary.device_timing.push_back(d.id + ": " + (d.events ? "device events" : "host time"));
    summary.device_events_created += d.created_events.size();
  }
  summary.warnings = warnings;
  if (overflow_on_event_device) {
    summary.warnings.push_back(std::to_string(summary.unrecorded_ops) +
                               " ops past max_recorded_ops count their host time as device time");
  }
  return summary;
}

std::string Profiler::summary_table() {
  const ProfileSummary s = summary();
  std::string out;
  char line[256];
  std::snprintf(line, sizeof(line), "%-28s %9s %12s %12s %11s %7s\n", "op", "calls", "host ms",
                "device ms", "mean us", "%");
  out += line;
  for (const OpStats& op : s.ops) {
    std::snprintf(line, sizeof(line), "%-28s %9llu %12.3f %12.3f %11.2f %6.1f%%\n", op.name.c_str(),
                  static_cast<unsigned long long>(op.count), op.host_total_ms, op.device_total_ms,
                  op.mean_device_us, op.percent_of_device_total);
    out += line;
  }
  const double mean_us =
      s.total_count > 0 ? s.device_total_ms * 1e3 / static_cast<double>(s.total_count) : 0.0;
  std::snprintf(line, sizeof(line), "%-28s %9llu %12.3f %12.3f %11.2f %6.1f%%\n", "total",
                static_cast<unsigned long long>(s.total_count), s.host_total_ms, s.device_total_ms,
                mean_us, s.total_count > 0 ? 100.0 : 0.0);
  out += line;
  std::snprintf(line, sizeof(line), "ops took %.1f%% of %.3f ms wall time on the host\n",
                s.wall_ms > 0 ? 100.0 * s.host_total_ms / s.wall_ms : 0.0, s.wall_ms);
  out += line;
  for (const auto& timing : s.device_timing) out += "device time: " + timing + "\n";
  if (s.unrecorded_ops > 0) {
    out += std::to_string(s.unrecorded_ops) + " ops counted but left out of the trace\n";
  }
  for (const auto& warning : s.warnings) out += "warning: " + warning + "\n";
  return out;
}

}  // namespace switchyard
