// The tensor layer's side of capture.h: what run_op and the host reads tell an active recording.
#pragma once

#include <initializer_list>

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

}  // namespace detail
}  // namespace switchyard
