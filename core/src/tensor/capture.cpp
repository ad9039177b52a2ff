// OpRecording (capture.h): a thread-local recorder that run_op and the host reads report to.
#include "switchyard/capture.h"

#include <set>
#include <sstream>
#include <vector>

#include "switchyard/buffer.h"
#include "switchyard/device.h"
#include "switchyard/dispatch.h"
#include "switchyard/queue.h"
#include "tensor/capture_internal.h"
#include "tensor/dispatch_internal.h"
#include "tensor/fallback_internal.h"
#include "tensor/tensor_impl.h"

namespace switchyard {

struct OpRecording::Impl {
  std::shared_ptr<Device> device;
  std::vector<sy_op_call> calls;
  std::vector<Tensor> held;  // every tensor of every call: their buffers stay what the calls name
  std::string reason;        // the first thing a replay could not repeat
  std::vector<std::function<void()>> before_replay;  // capture_before_replay's hooks, in order
  bool patches_random = false;                       // Options::patches_random
  // Native replay: the graph the plugin captured from `calls` on a queue of its own (kept alive
  // as long as the graph), or null with the reason in `native_note`.
  std::shared_ptr<Queue> capture_queue;
  sy_graph graph = nullptr;
  std::string native_note = "not tried";

  ~Impl() { drop_graph(""); }

  // Stops replaying natively (the re-dispatch takes over), saying why.
  void drop_graph(const std::string& why) {
    if (graph != nullptr) {
      device->locked([&] { device->functions().graph_destroy(device->handle(), graph); });
    }
    graph = nullptr;
    capture_queue.reset();
    native_note = why;
  }

  // Gives the native graph the patched parameters; drops it where the plugin cannot.
  void update_graph(std::span<const CallPatch> patches) {
    const sy_plugin_functions& f = device->functions();
    if (f.graph_update == nullptr) {
      drop_graph("the " + device->backend() +
                 " plugin cannot change a captured graph's parameters, and they change between "
                 "replays");
      return;
    }
    for (const CallPatch& patch : patches) {
      const sy_op_call& call = calls[patch.index];
      const Status status = device->check(device->locked([&] {
        return f.graph_update(device->handle(), graph, patch.index, &call);
      }),
                                          "graph_update");
      if (!status.ok()) {
        drop_graph(status.message());
        return;
      }
    }
  }

  void refuse(const std::string& why) {
    if (reason.empty()) reason = why;
  }

  // Asks the plugin to capture the recorded calls as one graph; on any failure the recording
  // re-dispatches instead, and native_note says why.
  void capture_native() {
    const sy_plugin_functions& f = device->functions();
    if (!native_capture_available(*device)) {
      native_note = "the " + device->backend() + " plugin has no native capture";
      return;
    }
    Result<std::shared_ptr<Queue>> queue = device->create_queue();
    if (!queue.ok()) {
      native_note = queue.status().message();
      return;
    }
    capture_queue = std::move(*queue);
    const sy_queue q = capture_queue->handle();
    Status status =
        device->check(device->locked([&] { return f.queue_capture_begin(device->handle(), q); }),
                      "queue_capture_begin");
    if (!status.ok()) {
      native_note = status.message();
      return;
    }
    for (const sy_op_call& call : calls) {
      status = capture_queue->dispatch(call);
      if (!status.ok()) break;
    }
    sy_graph made = nullptr;
    const Status ended = device->check(
        device->locked([&] { return f.queue_capture_end(device->handle(), q, &made); }),
        "queue_capture_end");
    if (status.ok() && ended.ok() && made != nullptr) {
      graph = made;
      native_note = "";
      return;
    }
    if (made != nullptr) device->locked([&] { f.graph_destroy(device->handle(), made); });
    native_note = !status.ok() ? status.message() : ended.message();
  }
};

namespace {

thread_local OpRecording::Impl* t_recording = nullptr;

}  // namespace

namespace detail {

void capture_note_op(const Device& device, const sy_op_call& call,
                     std::initializer_list<Tensor> inputs, std::initializer_list<Tensor> outputs) {
  OpRecording::Impl* r = t_recording;
  if (r == nullptr) return;
  const auto op = static_cast<sy_op>(call.op);
  if (&device != r->device.get()) {
    r->refuse(std::string("op ") + op_name(op) + " ran on " + device.id() +
              ", not on the recorded device " + r->device->id());
    return;
  }
  const bool draws = op == SY_OP_RANDOM_UNIFORM || op == SY_OP_RANDOM_NORMAL ||
                     ((op == SY_OP_SCALED_DOT_PRODUCT_ATTENTION ||
                       op == SY_OP_SCALED_DOT_PRODUCT_ATTENTION_BACKWARD) &&
                      call.params.attention.dropout_p > 0.0);
  if (draws && !r->patches_random) {
    r->refuse(std::string("op ") + op_name(op) +
              " draws new numbers each pass; a replay would draw the recorded ones again");
  }
  r->calls.push_back(call);
  r->held.insert(r->held.end(), inputs.begin(), inputs.end());
  r->held.insert(r->held.end(), outputs.begin(), outputs.end());
}

void capture_note_fallback(sy_op op, const Device& device) {
  if (t_recording == nullptr) return;
  t_recording->refuse(std::string("op ") + op_name(op) + " fell back from " + device.id() +
                      " to its fallback device (copies through the host)");
}

void capture_note_host_read(const Device& device) {
  OpRecording::Impl* r = t_recording;
  if (r == nullptr || &device != r->device.get()) return;
  r->refuse("the pass read device data on the host (" + device.id() +
            "), so it depends on values a replay would not read again");
}

bool capture_active() {
  return t_recording != nullptr;
}

void capture_refuse(const std::string& why) {
  if (t_recording != nullptr) t_recording->refuse(why);
}

void capture_before_replay(std::function<void()> hook) {
  if (t_recording != nullptr) t_recording->before_replay.push_back(std::move(hook));
}

}  // namespace detail

Result<CaptureMode> parse_capture_mode(const std::string& text) {
  if (text == "auto") return CaptureMode::kAuto;
  if (text == "on") return CaptureMode::kOn;
  if (text == "off") return CaptureMode::kOff;
  return invalid_argument("capture: '" + text + "' is not auto, on or off");
}

const char* capture_mode_name(CaptureMode mode) {
  switch (mode) {
    case CaptureMode::kOn:
      return "on";
    case CaptureMode::kOff:
      return "off";
    default:
      return "auto";
  }
}

bool native_capture_available(const Device& device) {
  const sy_plugin_functions& f = device.functions();
  return f.queue_capture_begin != nullptr && f.queue_capture_end != nullptr &&
         f.graph_launch != nullptr && f.graph_destroy != nullptr;
}

OpRecording::OpRecording(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OpRecording::~OpRecording() = default;

std::unique_ptr<OpRecording> OpRecording::record(const std::shared_ptr<Device>& device,
                                                 const std::function<void()>& pass) {
  return record(device, pass, Options{});
}

std::unique_ptr<OpRecording> OpRecording::record(const std::shared_ptr<Device>& device,
                                                 const std::function<void()>& pass,
                                                 const Options& options) {
  if (device == nullptr) throw_error(invalid_argument("OpRecording::record: no device given"));
  auto impl = std::make_unique<Impl>();
  impl->device = device;
  impl->patches_random = options.patches_random;
  if (t_recording != nullptr) {
    // Not an error: the outer recording cannot hold a replay of an inner one, so both run eagerly.
    t_recording->refuse("a pass recorded inside another recording");
    impl->refuse("recorded inside another recording");
    pass();
    return std::unique_ptr<OpRecording>(new OpRecording(std::move(impl)));
  }
  struct Active {
    explicit Active(Impl* r) { t_recording = r; }
    ~Active() { t_recording = nullptr; }
  } active(impl.get());
  pass();
  t_recording = nullptr;  // the capture below dispatches the calls again: not part of the pass
  if (impl->reason.empty() && !impl->calls.empty()) impl->capture_native();
  return std::unique_ptr<OpRecording>(new OpRecording(std::move(impl)));
}

bool OpRecording::native() const {
  return impl_->graph != nullptr;
}

const std::string& OpRecording::native_note() const {
  return impl_->native_note;
}

bool OpRecording::replayable() const {
  return impl_->reason.empty();
}
const std::string& OpRecording::reason() const {
  return impl_->reason;
}
uint64_t OpRecording::op_count() const {
  return impl_->calls.size();
}

const std::vector<sy_op_call>& OpRecording::calls() const {
  return impl_->calls;
}

uint64_t OpRecording::held_bytes() const {
  std::set<const Buffer*> seen;
  uint64_t bytes = 0;
  for (const Tensor& t : impl_->held) {
    const TensorImpl& impl = checked_impl(t, "OpRecording");
    if (seen.insert(impl.storage.get()).second) bytes += impl.storage->size_bytes();
  }
  return bytes;
}

std::string OpRecording::describe() const {
  std::ostringstream text;
  text.precision(3);
  text << op_count() << " ops (holding " << static_cast<double>(held_bytes()) / (1024.0 * 1024.0)
       << " MiB; " << (native() ? "captured natively" : "replayed op by op: " + native_note())
       << ")";
  return text.str();
}

void OpRecording::replay() const {
  if (!replayable()) {
    throw_error(failed_precondition("OpRecording::replay: the recording is not replayable: " +
                                    impl_->reason));
  }
  for (const std::function<void()>& hook : impl_->before_replay) hook();
  if (impl_->graph != nullptr) {
    Device& device = *impl_->device;
    const sy_queue queue = device.default_queue().handle();
    throw_if_error(device.check(device.locked([&] {
      return device.functions().graph_launch(device.handle(), queue, impl_->graph);
    }),
                                "graph_launch"));
    return;
  }
  for (const sy_op_call& call : impl_->calls) dispatch_on_device(*impl_->device, call, false);
}

void OpRecording::replay(std::span<const CallPatch> patches) {
  for (const CallPatch& patch : patches) {
    if (patch.index >= impl_->calls.size()) {
      throw_error(invalid_argument("OpRecording::replay: patch of call " +
                                   std::to_string(patch.index) + ", but " +
                                   std::to_string(impl_->calls.size()) + " calls were recorded"));
    }
    impl_->calls[patch.index].params = patch.params;
  }
  if (impl_->graph != nullptr && !patches.empty() && replayable()) impl_->update_graph(patches);
  replay();
}

}  // namespace switchyard
