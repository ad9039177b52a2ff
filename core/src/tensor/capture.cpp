// OpRecording (capture.h): a thread-local recorder that run_op and the host reads report to.
#include "switchyard/capture.h"

#include <algorithm>
#include <map>
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
  std::set<sy_buffer> host_written;                  // buffers the host wrote during the pass
  // The recording's private pool: one buffer holding the pass's intermediates (pool_intermediates).
  std::shared_ptr<Buffer> arena;
  uint64_t pooled_bytes = 0;  // what those intermediates took in buffers of their own
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

  void check_replayable() const {
    if (!reason.empty()) {
      throw_error(
          failed_precondition("OpRecording::replay: the recording is not replayable: " + reason));
    }
  }

  void pool_intermediates();

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

// Offsets in the arena are multiples of this (Vulkan's largest minStorageBufferOffsetAlignment).
constexpr uint64_t kArenaAlignment = 256;

// One buffer of the recorded pass, as pool_intermediates sees it.
struct BufferUse {
  std::shared_ptr<Buffer> storage;
  size_t first = SIZE_MAX;  // the first and last call naming it
  size_t last = 0;
  bool pinned = false;  // kept as it is: seen outside the recording, or read before written
  uint64_t offset = 0;  // in the arena
};

}  // namespace

// The intermediates of the pass (buffers only the recorded calls name, first written by a call)
// move into one arena where two whose uses do not overlap in call order share memory, as a
// caching allocator's reuse does within an eager pass: the recording then holds about the pass's
// peak instead of the sum of its intermediates. A buffer stays its own when anything outside the
// recording holds a tensor on it (the pass's inputs and outputs, parameters, optimizer state,
// gradients, a module's cache), when the host wrote it during the pass, or when its first call
// reads it (SCATTER_ADD accumulates into its output, so that counts as a read).
void OpRecording::Impl::pool_intermediates() {
  std::map<sy_buffer, BufferUse> uses;
  // `held` has one detached impl of its own per entry, so a buffer is referenced from outside
  // exactly when more impls hold it than `held` has on it (plus `use.storage` itself).
  std::map<const Buffer*, long> held_impls;
  for (const Tensor& t : held) {
    BufferUse& use = uses[t.impl()->storage->handle()];
    use.storage = t.impl()->storage;
    ++held_impls[use.storage.get()];
  }
  for (auto& [handle, use] : uses) {
    if (use.storage.use_count() > held_impls[use.storage.get()] + 1) use.pinned = true;
    if (host_written.count(handle) != 0) use.pinned = true;
  }
  for (size_t i = 0; i < calls.size(); ++i) {
    const sy_op_call& call = calls[i];
    const auto note = [&](const sy_tensor_desc& desc, bool read) {
      auto found = uses.find(desc.buffer);
      if (found == uses.end()) return;
      BufferUse& use = found->second;
      if (use.first == SIZE_MAX && read) use.pinned = true;
      if (use.first == SIZE_MAX) use.first = i;
      use.last = i;
    };
    for (uint32_t k = 0; k < call.num_inputs; ++k) note(call.inputs[k], true);
    for (uint32_t k = 0; k < call.num_outputs; ++k) {
      note(call.outputs[k], call.op == SY_OP_SCATTER_ADD);
    }
    // A weight promised constant (SY_CALL_CONSTANT_WEIGHTS) keeps its own buffer: in the arena
    // another intermediate would rewrite its bytes under the same buffer, and a plugin that
    // keeps converted weights by buffer would replay the old ones (a 3-D Conv's per-tap weights,
    // each computed from the initializer, shared one slot and all ran as the first tap).
    if ((call.flags & SY_CALL_CONSTANT_WEIGHTS) != 0) {
      uint32_t first = 0;
      uint32_t count = 0;
      sy_constant_weight_inputs(call.op, &first, &count);
      for (uint32_t k = first; k < first + count && k < call.num_inputs; ++k) {
        const auto found = uses.find(call.inputs[k].buffer);
        if (found != uses.end()) found->second.pinned = true;
      }
    }
  }
  // Largest first, each at the lowest offset free over its span of calls.
  std::vector<BufferUse*> pooled;
  for (auto& [handle, use] : uses) {
    if (!use.pinned && use.first != SIZE_MAX) pooled.push_back(&use);
  }
  std::sort(pooled.begin(), pooled.end(), [](const BufferUse* a, const BufferUse* b) {
    return a->storage->size_bytes() > b->storage->size_bytes();
  });
  const auto rounded = [](uint64_t bytes) {
    return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  };
  uint64_t arena_bytes = 0;
  uint64_t separate_bytes = 0;
  std::vector<const BufferUse*> placed;
  for (BufferUse* use : pooled) {
    const uint64_t size = rounded(use->storage->size_bytes());
    separate_bytes += use->storage->size_bytes();
    std::vector<std::pair<uint64_t, uint64_t>> busy;  // [begin, end) of overlapping lives
    for (const BufferUse* other : placed) {
      if (other->first <= use->last && use->first <= other->last) {
        busy.emplace_back(other->offset, other->offset + rounded(other->storage->size_bytes()));
      }
    }
    std::sort(busy.begin(), busy.end());
    uint64_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + size <= begin) break;
      offset = std::max(offset, end);
    }
    use->offset = offset;
    arena_bytes = std::max(arena_bytes, offset + size);
    placed.push_back(use);
  }
  if (pooled.size() < 2 || arena_bytes >= separate_bytes) return;  // nothing shared
  Result<std::shared_ptr<Buffer>> allocated = device->allocate(arena_bytes);
  if (!allocated.ok()) return;  // the intermediates keep their own buffers
  arena = std::move(*allocated);
  for (sy_op_call& call : calls) {
    const auto move = [&](sy_tensor_desc& desc) {
      auto found = uses.find(desc.buffer);
      if (found == uses.end() || found->second.pinned) return;
      desc.buffer = arena->handle();
      desc.offset_bytes += found->second.offset;
    };
    for (uint32_t k = 0; k < call.num_inputs; ++k) move(call.inputs[k]);
    for (uint32_t k = 0; k < call.num_outputs; ++k) move(call.outputs[k]);
  }
  // The intermediates' own buffers go back to the device's pool.
  std::erase_if(held, [&](const Tensor& t) {
    const auto found = uses.find(t.impl()->storage->handle());
    return found != uses.end() && !found->second.pinned && found->second.first != SIZE_MAX;
  });
  pooled_bytes = separate_bytes;
}

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
  // Detached: the recording keeps the buffers, not the pass's autograd graph (which would keep
  // every saved tensor referenced from outside the recording, and out of its pool).
  for (const auto* list : {&inputs, &outputs}) {
    for (const Tensor& t : *list) {
      if (t.defined()) r->held.push_back(t.detach());
    }
  }
}

void capture_note_fallback(sy_op op, const Device& device) {
  if (t_recording == nullptr) return;
  t_recording->refuse(std::string("op ") + op_name(op) + " fell back from " + device.id() +
                      " to its fallback device (copies through the host)");
}

void capture_note_host_write(const Device& device, sy_buffer buffer) {
  OpRecording::Impl* r = t_recording;
  if (r != nullptr && &device == r->device.get()) r->host_written.insert(buffer);
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

bool passes_captured(CaptureMode mode) {
  return mode != CaptureMode::kOff;
}

bool steps_captured(CaptureMode mode, const Device& device) {
  return mode == CaptureMode::kOn ||
         (mode == CaptureMode::kAuto && native_capture_available(device));
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
  if (impl->reason.empty() && !impl->calls.empty()) {
    impl->pool_intermediates();
    impl->capture_native();
  }
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
  return bytes + (impl_->arena != nullptr ? impl_->arena->size_bytes() : 0);
}

std::string OpRecording::describe() const {
  std::ostringstream text;
  text.precision(3);
  const auto mib = [](uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); };
  text << op_count() << " ops (holding " << mib(held_bytes()) << " MiB";
  if (impl_->arena != nullptr) {
    text << ", intermediates pooled: " << mib(impl_->pooled_bytes) << " MiB in "
         << mib(impl_->arena->size_bytes()) << " MiB";
  }
  text << "; " << (native() ? "captured natively" : "replayed op by op: " + native_note()) << ")";
  return text.str();
}

void OpRecording::replay() const {
  impl_->check_replayable();
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

namespace {

// The lowest and highest byte a desc's elements occupy, from the start of its buffer; false for
// an empty tensor.
bool byte_range(const sy_tensor_desc& desc, int64_t* first, int64_t* last) {
  int64_t low = 0;
  int64_t high = 0;
  for (uint32_t d = 0; d < desc.rank; ++d) {
    if (desc.shape[d] == 0) return false;
    const int64_t reach = (desc.shape[d] - 1) * desc.strides[d];
    (reach < 0 ? low : high) += reach;
  }
  const auto size = static_cast<int64_t>(dtype_size_bytes(static_cast<DType>(desc.dtype)));
  *first = static_cast<int64_t>(desc.offset_bytes) + low * size;
  *last = static_cast<int64_t>(desc.offset_bytes) + high * size + size - 1;
  return true;
}

bool same_layout(const sy_tensor_desc& a, const sy_tensor_desc& b) {
  if (a.dtype != b.dtype || a.rank != b.rank) return false;
  for (uint32_t d = 0; d < a.rank; ++d) {
    if (a.shape[d] != b.shape[d] || (a.shape[d] != 1 && a.strides[d] != b.strides[d])) return false;
  }
  return true;
}

// One input of one recorded call pointed at a caller's tensor for a replay, and what it named.
struct Rebound {
  sy_tensor_desc* desc;
  sy_buffer buffer;
  uint64_t offset_bytes;
};

void restore(std::vector<Rebound>& rebound, size_t from = 0) {
  for (size_t i = from; i < rebound.size(); ++i) {
    rebound[i].desc->buffer = rebound[i].buffer;
    rebound[i].desc->offset_bytes = rebound[i].offset_bytes;
  }
  rebound.resize(from);
}

// Points every call's reads of `recorded` at `given` (same layout, so a view of one at an offset
// is the same view of the other). False, with nothing changed, where a call writes recorded's
// buffer or given's (a tensor the pass itself writes), reads outside recorded's bytes, or marks
// it a constant weight.
bool rebind(std::vector<sy_op_call>& calls, const sy_tensor_desc& recorded,
            const sy_tensor_desc& given, std::vector<Rebound>& rebound) {
  int64_t first = 0;
  int64_t last = 0;
  if (!byte_range(recorded, &first, &last)) return false;
  const size_t mark = rebound.size();
  for (sy_op_call& call : calls) {
    for (uint32_t k = 0; k < call.num_outputs; ++k) {
      if (call.outputs[k].buffer == recorded.buffer || call.outputs[k].buffer == given.buffer) {
        restore(rebound, mark);
        return false;
      }
    }
    for (uint32_t k = 0; k < call.num_inputs; ++k) {
      sy_tensor_desc& desc = call.inputs[k];
      if (desc.buffer != recorded.buffer) continue;
      int64_t low = 0;
      int64_t high = 0;
      const bool inside = !byte_range(desc, &low, &high) || (low >= first && high <= last);
      if (!inside || (call.flags & SY_CALL_CONSTANT_WEIGHTS) != 0) {
        restore(rebound, mark);
        return false;
      }
      rebound.push_back({&desc, desc.buffer, desc.offset_bytes});
      desc.buffer = given.buffer;
      desc.offset_bytes = desc.offset_bytes - recorded.offset_bytes + given.offset_bytes;
    }
  }
  return true;
}

}  // namespace

void OpRecording::replay_reading(std::span<const Tensor> recorded,
                                 std::span<const Tensor> given) const {
  if (recorded.size() != given.size()) {
    throw_error(invalid_argument("OpRecording::replay_reading: " + std::to_string(recorded.size()) +
                                 " recorded tensors but " + std::to_string(given.size()) +
                                 " given"));
  }
  impl_->check_replayable();
  std::vector<Rebound> rebound;
  try {
    for (size_t k = 0; k < recorded.size(); ++k) {
      const sy_tensor_desc at = recorded[k].desc();
      const sy_tensor_desc from = given[k].desc();
      // Contiguous recorded: no gap inside its bytes where another tensor's elements could lie.
      const bool rebindable = impl_->graph == nullptr && recorded[k].is_contiguous() &&
                              given[k].device().get() == impl_->device.get() &&
                              same_layout(at, from) && rebind(impl_->calls, at, from, rebound);
      if (!rebindable) Tensor(recorded[k]).copy_(given[k]);
    }
    replay();
  } catch (...) {
    restore(rebound);
    throw;
  }
  restore(rebound);
}

void OpRecording::replay(std::span<const CallPatch> patches) {
  impl_->check_replayable();  // before anything is patched
  for (const CallPatch& patch : patches) {
    if (patch.index >= impl_->calls.size()) {
      throw_error(invalid_argument("OpRecording::replay: patch of call " +
                                   std::to_string(patch.index) + ", but " +
                                   std::to_string(impl_->calls.size()) + " calls were recorded"));
    }
  }
  for (const CallPatch& patch : patches) impl_->calls[patch.index].params = patch.params;
  if (impl_->graph != nullptr && !patches.empty()) impl_->update_graph(patches);
  replay();
}

}  // namespace switchyard
