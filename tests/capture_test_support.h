// Native capture at the plugin ABI, for the plugins' own capture tests (tests/vulkan, tests/cuda).
#pragma once

#include <vector>

#include "switchyard/device.h"
#include "switchyard/queue.h"

namespace switchyard::testing {

// `calls` captured on `capture` as one graph (queue_capture_begin, the dispatches,
// queue_capture_end); throws where the plugin refuses any of it.
inline sy_graph capture_graph(Device& device, Queue& capture,
                              const std::vector<sy_op_call>& calls) {
  const sy_plugin_functions& f = device.functions();
  throw_if_error(device.check(f.queue_capture_begin(device.handle(), capture.handle()), "begin"));
  for (const sy_op_call& call : calls) throw_if_error(capture.dispatch(call));
  sy_graph graph = nullptr;
  throw_if_error(
      device.check(f.queue_capture_end(device.handle(), capture.handle(), &graph), "end"));
  return graph;
}

}  // namespace switchyard::testing
