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
#include <string>

#include "switchyard/status.h"

namespace switchyard {

class Device;

// predict.capture (and, later, train.capture): off runs every pass eagerly; on records a pass the
// second time its input shapes are seen and replays it from the third; auto does what on does
// where the device's plugin replays natively (its capture entries: vulkan) and what off does
// elsewhere.
enum class CaptureMode { kAuto, kOn, kOff };

Result<CaptureMode> parse_capture_mode(const std::string& text);  // "auto", "on" or "off"
const char* capture_mode_name(CaptureMode mode);

class OpRecording {
 public:
  // Runs `pass` on this thread and records every op it dispatches on `device` (they also run, so
  // the pass's results are real). An exception from `pass` propagates; nothing is kept.
  static std::unique_ptr<OpRecording> record(const std::shared_ptr<Device>& device,
                                             const std::function<void()>& pass);
  ~OpRecording();
  OpRecording(const OpRecording&) = delete;
  OpRecording& operator=(const OpRecording&) = delete;

  bool replayable() const;
  const std::string& reason() const;  // why not replayable; "" when it is
  uint64_t op_count() const;
  uint64_t held_bytes() const;  // storage the recorded tensors keep alive
  // Runs every recorded op again, in order, on the device's default queue: as one submission of a
  // graph the plugin captured (native(): a Vulkan command buffer recorded once) where the plugin
  // can, else by dispatching each call again. Throws Error (FAILED_PRECONDITION with the reason)
  // when the recording is not replayable. A native replay shows as no ops in a profile.
  void replay() const;
  bool native() const;
  // Why a replayable recording is not native ("the cuda plugin has no native capture"); "" when
  // it is.
  const std::string& native_note() const;

  struct Impl;

 private:
  explicit OpRecording(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace switchyard

#pragma GCC visibility pop
