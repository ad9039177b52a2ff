// The Chrome trace-event file: the JSON object form with complete ("X") events for spans and ops on
// the host threads, one track per device with measured device time, and name metadata ("M").
// https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <system_error>

#include "profile/profiler_impl.h"
#include "support/json_io.h"
#include "support/temp_path.h"

namespace switchyard {

using detail::Json;
using detail::json_text;

namespace {

constexpr int kHostPid = 1;
// Device tracks follow the host: pid kFirstDevicePid + the device's slot.
constexpr int kFirstDevicePid = 2;

// Microseconds to the nanosecond, which keeps the file small; a NaN or infinite time (a broken
// clock reading) is written as 0, since the viewers need a number in "ts" and "dur".
double trace_us(double us) {
  return std::isfinite(us) ? std::round(us * 1e3) / 1e3 : 0.0;
}

Json metadata_event(const char* what, int pid, uint32_t tid, const std::string& name) {
  return Json{{"name", what}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

// A complete ("X") event; the caller adds "args".
Json complete_event(const std::string& name, const char* category, double ts_us, double dur_us,
                    int pid, uint32_t tid) {
  return Json{{"name", name},
              {"cat", category},
              {"ph", "X"},
              {"ts", trace_us(ts_us)},
              {"dur", trace_us(dur_us < 0 ? 0 : dur_us)},
              {"pid", pid},
              {"tid", tid}};
}

// "<prefix>_shapes": ["[2, 3]", ...] and "<prefix>_dtypes": ["f32", ...]; shapes are text, as
// the trace viewers show args as they are.
void add_tensor_lists(Json& args, const std::string& prefix,
                      const std::vector<ProfiledTensor>& tensors) {
  Json shapes = Json::array();
  Json dtypes = Json::array();
  for (const ProfiledTensor& tensor : tensors) {
    std::string shape = "[";
    for (size_t k = 0; k < tensor.shape.size(); ++k) {
      shape += (k > 0 ? ", " : "") + std::to_string(tensor.shape[k]);
    }
    shapes.push_back(shape + "]");
    dtypes.push_back(tensor.dtype);
  }
  args[prefix + "_shapes"] = std::move(shapes);
  args[prefix + "_dtypes"] = std::move(dtypes);
}

Json op_event(const OpRecord& op) {
  Json event =
      complete_event(op.name, "op", op.host_begin_us, op.host_time_us(), kHostPid, op.thread);
  Json args{{"backend", op.backend}, {"device", op.device}};
  add_tensor_lists(args, "input", op.inputs);
  add_tensor_lists(args, "output", op.outputs);
  args["device_time_us"] = trace_us(op.device_time_us);
  args["device_time_measured"] = op.device_time_measured;
  args["fallback"] = op.fallback;
  event["args"] = std::move(args);
  return event;
}

Json device_op_event(const OpRecord& op, int pid) {
  Json event = complete_event(op.name, "device", op.device_begin_us, op.device_time_us, pid, 0);
  event["args"] = Json{{"host_ts", trace_us(op.host_begin_us)}, {"fallback", op.fallback}};
  return event;
}

// The file's text up to the first event: the whole document with an empty "traceEvents" array,
// cut open before the array's closing "]}" so that the events can be streamed into it.
std::string document_head(uint64_t unrecorded_ops) {
  const Json document{
      {"displayTimeUnit", "ms"},
      {"otherData", {{"generator", "switchyard profiler"}, {"unrecorded_ops", unrecorded_ops}}},
      {"traceEvents", Json::array()}};
  std::string text = json_text(document);
  text.resize(text.size() - 2);  // "]}": traceEvents is the last member
  return text;
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
  const std::filesystem::path temp = detail::temporary_path_for(path);
  std::ofstream file(temp, std::ios::binary | std::ios::trunc);
  if (!file) return errno_status("cannot create trace file", temp);

  std::string out = document_head(seen_ops - ops.size());
  // One event per line, each dumped on its own: the document is never built as one value.
  bool first = true;
  const auto add = [&](const Json& event) {
    out += first ? "\n" : ",\n";
    out += json_text(event);
    first = false;
  };
  add(metadata_event("process_name", kHostPid, 0, "switchyard host"));
  for (size_t t = 0; t < threads.size(); ++t) {
    add(metadata_event(
        "thread_name", kHostPid, static_cast<uint32_t>(t),
        track_names[t].empty() ? "host thread " + std::to_string(t) : track_names[t]));
  }
  for (size_t d = 0; d < devices.size(); ++d) {
    if (!devices[d].any_measured) continue;
    const int pid = kFirstDevicePid + static_cast<int>(d);
    add(metadata_event("process_name", pid, 0,
                       "device " + devices[d].id + " (" + devices[d].name + ")"));
    add(metadata_event("thread_name", pid, 0, "queue"));
  }
  const int64_t now = now_ns();
  for (const auto& span : spans) {
    const int64_t end = span.end_ns < 0 ? now : span.end_ns;
    Json event =
        complete_event(span.name, "span", static_cast<double>(span.begin_ns) / 1e3,
                       static_cast<double>(end - span.begin_ns) / 1e3, kHostPid, span.thread);
    event["args"] = span.end_ns < 0 ? Json{{"open", true}} : Json::object();
    add(event);
  }
  for (const auto& raw : ops) {
    const OpRecord op = to_record(raw);
    add(op_event(op));
    if (op.device_time_measured) add(device_op_event(op, kFirstDevicePid + raw.device));
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
