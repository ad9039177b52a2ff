// For plugins with native capture (plugin_abi.h's graph_update): whether a new op call may take
// the place of a captured one. Only its params may differ: the same op and the same tensors
// (buffer, offset, dtype, shape and strides of every input and output).
#pragma once

#include <string>

#include "switchyard/plugin_abi.h"

namespace sy_support {

inline bool same_tensor(const sy_tensor_desc& a, const sy_tensor_desc& b) {
  if (a.buffer != b.buffer || a.offset_bytes != b.offset_bytes || a.dtype != b.dtype ||
      a.rank != b.rank) {
    return false;
  }
  for (uint32_t d = 0; d < a.rank && d < SY_MAX_RANK; ++d) {
    if (a.shape[d] != b.shape[d] || a.strides[d] != b.strides[d]) return false;
  }
  return true;
}

// Why `call` may not replace `captured` ("" when it may), as the end of a sentence that starts
// "the new call N ...".
inline std::string call_replacement_problem(const sy_op_call& captured, const sy_op_call& call) {
  if (call.op != captured.op) return "is another op than the captured one";
  if (call.num_inputs != captured.num_inputs || call.num_outputs != captured.num_outputs) {
    return "has other input or output counts than the captured one";
  }
  for (uint32_t i = 0; i < call.num_inputs && i < SY_MAX_OP_INPUTS; ++i) {
    if (!same_tensor(call.inputs[i], captured.inputs[i])) {
      return "names another tensor as input " + std::to_string(i);
    }
  }
  for (uint32_t i = 0; i < call.num_outputs && i < SY_MAX_OP_OUTPUTS; ++i) {
    if (!same_tensor(call.outputs[i], captured.outputs[i])) {
      return "names another tensor as output " + std::to_string(i);
    }
  }
  return "";
}

}  // namespace sy_support
