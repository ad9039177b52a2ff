// Capture and replay (docs/capture.md): the ops one pass dispatches, recorded once and dispatched
// again without the host-side work that produced them (graph walking, shape logic, tensor
// bookkeeping). A recording keeps every tensor its ops touched alive, so a replay writes the same
// buffers: the pass's outputs are overwritten by each replay, and inputs are given by copying into
// the recorded input tensors first.
//
// What a replay cannot repeat makes a recording unreplayable, with the reason: a host read of
// device data during the pass (the pass then depends on values a replay would not read again), an
// op that fell back to another device, a random op (a replay would draw the same numbers again),
// ops on another device, and recording inside a recording.
//
// Thread safety: a pass is recorded on the calling thread only (ops other threads dispatch at the
// same time are not part of it). An OpRecording may be replayed from any thread, one at a time,
// and not while tensors it holds are used elsewhere.
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "switchyard/plugin_abi.h"
#include "switchyard/status.h"

namespace switchyard {

class Device;
class Tensor;

// predict.capture and train.capture: off runs every pass eagerly; on records a pass the second
// time its input shapes are seen and replays it from the third; auto is what passes_captured and
// steps_captured below say.
enum class CaptureMode { kAuto, kOn, kOff };

Result<CaptureMode> parse_capture_mode(const std::string& text);  // "auto", "on" or "off"
const char* capture_mode_name(CaptureMode mode);

// Whether `device`'s plugin captures recordings natively (replays them as one submission): what
// CaptureMode::kAuto turns capture on for.
bool native_capture_available(const Device& device);

// The one rule for each kind of recording. A forward pass (predict.capture) is recorded under on
// and auto: natively where the plugin captures, op by op elsewhere, which still skips the core's
// per-op work. A training step (train.capture) is recorded under on, and under auto only where
// the plugin captures natively (an op-by-op step replay measured no faster on the CPU backends).
bool passes_captured(CaptureMode mode);
bool steps_captured(CaptureMode mode, const Device& device);

// A change to one recorded call for a replay: the call at `index` (record order, from 0) runs
// with `params` from this replay on. Only parameters change: the op and its tensors stay.
struct CallPatch {
  uint64_t index = 0;
  sy_op_params params{};
};

class OpRecording {
 public:
  struct Options {
    // Random ops (RANDOM_UNIFORM, RANDOM_NORMAL, attention with dropout) are refused unless the
    // caller gives each replay their new seeds by CallPatch (the training step does).
    bool patches_random = false;
  };
  // Runs `pass` on this thread and records every op it dispatches on `device` (they also run, so
  // the pass's results are real). An exception from `pass` propagates; nothing is kept.
  static std::unique_ptr<OpRecording> record(const std::shared_ptr<Device>& device,
                                             const std::function<void()>& pass);
  static std::unique_ptr<OpRecording> record(const std::shared_ptr<Device>& device,
                                             const std::function<void()>& pass,
                                             const Options& options);
  ~OpRecording();
  OpRecording(const OpRecording&) = delete;
  OpRecording& operator=(const OpRecording&) = delete;

  bool replayable() const;
  const std::string& reason() const;  // why not replayable; "" when it is
  uint64_t op_count() const;
  // The recorded calls as the plugin received them (their tensors' buffers stay what they name).
  const std::vector<sy_op_call>& calls() const;
  uint64_t held_bytes() const;  // storage the recorded tensors keep alive
  // Runs the hooks the pass's code registered for its host-side state (a module's batch count),
  // then every recorded op again, in order, on the device's default queue: as one submission of a
  // graph the plugin captured (native(): a Vulkan command buffer recorded once) where the plugin
  // can, else by dispatching each call again. Throws Error (FAILED_PRECONDITION with the reason)
  // when the recording is not replayable. A native replay shows as no ops in a profile.
  void replay() const;
  // The same with some calls' parameters changed first (they stay changed for later replays). A
  // native graph is updated in place where the plugin can (its graph_update entry); where it
  // cannot, the recording stops being native (native_note says why) and re-dispatches.
  void replay(std::span<const CallPatch> patches);
  // replay(), with the calls reading given[k] wherever the pass read recorded[k] (a tensor the
  // pass was recorded on, such as its input), so that a new input needs no copy into the recorded
  // one first. Where that cannot be done for an input it is copied into recorded[k] instead, as
  // a caller of replay() would: a native graph (it names its buffers once); a recorded[k] that is
  // not contiguous; a recorded call that writes recorded[k]'s buffer or given[k]'s, reads past
  // recorded[k], or marks it constant (SY_CALL_CONSTANT_WEIGHTS); a given tensor on another
  // device or of another dtype, shape or strides. The calls name the recorded tensors again when
  // this returns (or throws).
  void replay_reading(std::span<const Tensor> recorded, std::span<const Tensor> given) const;
  bool native() const;
  // Why a replayable recording is not native ("the cuda plugin has no native capture"); "" when
  // it is.
  const std::string& native_note() const;
  // "55 ops (holding 31.7 MiB; captured natively)", or "...; replayed op by op: <native_note>)".
  std::string describe() const;

  struct Impl;

 private:
  explicit OpRecording(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace switchyard

#pragma GCC visibility pop
