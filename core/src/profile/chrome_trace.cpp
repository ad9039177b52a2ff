// The Chrome trace-event file: the JSON object form with complete ("X") events for spans and ops on
// the host threads, one track per device with measured device time, and name metadata ("M").
// https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include "profile/json_text.h"
#include "profile/profiler_impl.h"

namespace switchyard {

using profile_detail::append_json_number;
using profile_detail::append_json_string;

namespace {

constexpr int kHostPid = 1;
// Device tracks follow the host: pid kFirstDevicePid + the device's slot.
constexpr int kFirstDevicePid = 2;

void append_metadata(std::string& out, const char* what, int pid, uint32_t tid,
                     const std::string& name) {
  out += ",\n{\"name\": \"";
  out += what;
  out += "\", \"ph\": \"M\", \"pid\": " + std::to_string(pid) +
         ", \"tid\": " + std::to_string(tid) + ", \"args\": {\"name\": ";
  append_json_string(out, name);
  out += "}}";
}

// `"ph": "X", "ts": .., "dur": .., "pid": .., "tid": ..` after the name and category.
void append_complete_event_head(std::string& out, const std::string& name, const char* category,
                                double ts_us, double dur_us, int pid, uint32_t tid) {
  out += ",\n{\"name\": ";
  append_json_string(out, name);
  out += ", \"cat\": \"";
  out += category;
  out += "\", \"ph\": \"X\", \"ts\": ";
  append_json_number(out, ts_us);
  out += ", \"dur\": ";
  append_json_number(out, dur_us < 0 ? 0 : dur_us);
  out += ", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(tid);
}

void append_tensor_lists(std::string& out, const char* prefix,
                         const std::vector<ProfiledTensor>& tensors) {
  std::string shapes = "[";
  std::string dtypes = "[";
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (i > 0) {
      shapes += ", ";
      dtypes += ", ";
    }
    std::string shape = "[";
    for (size_t k = 0; k < tensors[i].shape.size(); ++k) {
      shape += (k > 0 ? ", " : "") + std::to_string(tensors[i].shape[k]);
    }
    append_json_string(shapes, shape + "]");
    append_json_string(dtypes, tensors[i].dtype);
  }
  out += ", \"";
  out += prefix;
  out += "_shapes\": " + shapes + "], \"";
  out += prefix;
  out += "_dtypes\": " + dtypes + "]";
}

void append_op(std::string& out, const OpRecord& op) {
  append_complete_event_head(out, op.name, "op", op.host_begin_us, op.host_time_us(), kHostPid,
                             op.thread);
  out += ", \"args\": {";
  out += "\"backend\": ";
  append_json_string(out, op.backend);
  out += ", \"device\": ";
  append_json_string(out, op.device);
  append_tensor_lists(out, "input", op.inputs);
  append_tensor_lists(out, "output", op.outputs);
  out += ", \"device_time_us\": ";
  append_json_number(out, op.device_time_us);
  out += op.device_time_measured ? ", \"device_time_measured\": true"
                                 : ", \"device_time_measured\": false";
  out += op.fallback ? ", \"fallback\": true}}" : ", \"fallback\": false}}";
}

void append_device_op(std::string& out, const OpRecord& op, int pid) {
  append_complete_event_head(out, op.name, "device", op.device_begin_us, op.device_time_us, pid, 0);
  out += ", \"args\": {\"host_ts\": ";
  append_json_number(out, op.host_begin_us);
  out += op.fallback ? ", \"fallback\": true}}" : ", \"fallback\": false}}";
}

Status errno_status(const std::string& what, const std::filesystem::path& path) {
  return unavailable(what + " " + path.string() + ": " + std::strerror(errno));
}

}  // namespace

Status Profiler::Impl::write_trace(const std::filesystem::path& path) const {
  std::error_code error;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), error);
  if (error) {
    return unavailable("cannot create the folder of trace file " + path.string() + ": " +
                       error.message());
  }
  const std::filesystem::path temp = path.string() + ".tmp-" + std::to_string(::getpid());
  std::ofstream file(temp, std::ios::binary | std::ios::trunc);
  if (!file) return errno_status("cannot create trace file", temp);

  std::string out = "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"generator\": ";
  append_json_string(out, "switchyard profiler");
  out += ", \"unrecorded_ops\": " + std::to_string(seen_ops - ops.size()) + "},\n";
  out +=
      "\"traceEvents\": [\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, "
      "\"args\": {\"name\": \"switchyard host\"}}";
  for (size_t t = 0; t < threads.size(); ++t) {
    append_metadata(out, "thread_name", kHostPid, static_cast<uint32_t>(t),
                    "host thread " + std::to_string(t));
  }
  for (size_t d = 0; d < devices.size(); ++d) {
    if (!devices[d].any_measured) continue;
    const int pid = kFirstDevicePid + static_cast<int>(d);
    append_metadata(out, "process_name", pid, 0,
                    "device " + devices[d].id + " (" + devices[d].name + ")");
    append_metadata(out, "thread_name", pid, 0, "queue");
  }
  const int64_t now = now_ns();
  for (const auto& span : spans) {
    const int64_t end = span.end_ns < 0 ? now : span.end_ns;
    append_complete_event_head(out, span.name, "span", static_cast<double>(span.begin_ns) / 1e3,
                               static_cast<double>(end - span.begin_ns) / 1e3, kHostPid,
                               span.thread);
    out += span.end_ns < 0 ? ", \"args\": {\"open\": true}}" : ", \"args\": {}}";
  }
  for (const auto& raw : ops) {
    const OpRecord op = to_record(raw);
    append_op(out, op);
    if (op.device_time_measured) append_device_op(out, op, kFirstDevicePid + raw.device);
    // Flushed in pieces so that a trace of a million ops never sits in memory whole.
    if (out.size() > (1u << 20)) {
      file.write(out.data(), static_cast<std::streamsize>(out.size()));
      out.clear();
    }
  }
  out += "\n]}\n";
  file.write(out.data(), static_cast<std::streamsize>(out.size()));
  file.close();
  if (!file) {
    const Status status = errno_status("cannot write trace file", temp);
    std::filesystem::remove(temp, error);
    return status;
  }
  std::filesystem::rename(temp, path, error);
  if (error) {
    const std::string reason = error.message();
    std::filesystem::remove(temp, error);
    return unavailable("cannot rename the trace file onto " + path.string() + ": " + reason);
  }
  return ok_status();
}

}  // namespace switchyard
