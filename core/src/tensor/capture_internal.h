// The tensor layer's side of capture.h: what run_op and the host reads tell an active recording.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>

#include "switchyard/plugin_abi.h"
#include "switchyard/tensor.h"

namespace switchyard {

class Device;

namespace detail {

// An op about to be dispatched on `device` with these tensors (`call` as the plugin gets it).
void capture_note_op(const Device& device, const sy_op_call& call,
                     std::initializer_list<Tensor> inputs, std::initializer_list<Tensor> outputs);
// An op that leaves `device` for its fallback device.
void capture_note_fallback(sy_op op, const Device& device);
// A host read of `device`'s data.
void capture_note_host_read(const Device& device);
// A host write into `buffer` of `device`: a recording keeps that buffer its own (its contents come
// from the host, not from a recorded call).
void capture_note_host_write(const Device& device, sy_buffer buffer);

// For code above the tensor layer (a module's host-side state). Whether a recording is active on
// this thread.
bool capture_active();
// Makes the recording active on this thread unreplayable, with the reason (a value the pass bakes
// into its calls that the next pass would change); nothing when none is active.
void capture_refuse(const std::string& why);
// Runs `hook` before every replay of the recording active on this thread, outside any recording:
// a module's host-side state that each pass advances (BatchNorm's batch count) advances there,
// and the hook writes its new value where the recorded calls read it. Nothing when none is
// active.
void capture_before_replay(std::function<void()> hook);

}  // namespace detail
}  // namespace switchyard
