#include "conformance/execute.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "support/dtype_codec.h"
#include "switchyard/buffer.h"
#include "switchyard/queue.h"

namespace switchyard::conformance {
namespace {

struct Placed {
  std::shared_ptr<Buffer> buffer;
  sy_tensor_desc desc;
};

// Allocates a buffer for `tensor` and uploads its storage. Empty tensors still get one element's
// worth of memory, so no backend is asked for a zero-byte allocation.
Result<Placed> place(Device& device, const HostTensor& tensor) {
  const uint64_t size_bytes = std::max<uint64_t>(tensor.storage_bytes(), 8);
  SY_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buffer, device.allocate(size_bytes));
  const std::vector<unsigned char> bytes = tensor.encode();
  if (!bytes.empty()) {
    SY_RETURN_IF_ERROR(device.default_queue().write(*buffer, 0, bytes.data(), bytes.size()));
  }
  Placed placed;
  placed.desc = make_desc(tensor, buffer->handle());
  placed.buffer = std::move(buffer);
  return placed;
}

Result<HostTensor> download(Device& device, const Placed& placed, const HostTensor& layout) {
  HostTensor result = layout;
  std::vector<unsigned char> bytes(layout.storage_bytes());
  if (!bytes.empty()) {
    SY_RETURN_IF_ERROR(device.default_queue().read(*placed.buffer, 0, bytes.data(), bytes.size()));
  }
  result.decode(bytes);
  return result;
}

// An output as the op receives it: the case's contents outside the view (the comparison checks
// that they stay), and inside it NaN (integer outputs: -1, an index no op returns), except for
// SCATTER_ADD, which accumulates into its output. Every other op overwrites its outputs
// (docs/ops.md), so an element it leaves unwritten shows up as a NaN or a wrong integer where the
// reference has a number, instead of passing as the zero the case was built with.
HostTensor poisoned(const OpCase& op_case, const HostTensor& output) {
  if (op_case.op == SY_OP_SCATTER_ADD) return output;
  const bool integer = output.dtype == SY_DTYPE_I32 || output.dtype == SY_DTYPE_I64;
  const double poison = integer ? -1.0 : std::numeric_limits<double>::quiet_NaN();
  HostTensor result = output;
  // Cases that test a view past its storage (the op must refuse it) keep what lies beyond.
  for (int64_t at : output.logical_offsets()) {
    if (at >= 0 && static_cast<size_t>(at) < result.storage.size())
      result.storage[static_cast<size_t>(at)] = poison;
  }
  return result;
}

}  // namespace

Result<std::vector<HostTensor>> execute_case(Device& device, const OpCase& op_case) {
  if (op_case.inputs.size() > SY_MAX_OP_INPUTS || op_case.outputs.size() > SY_MAX_OP_OUTPUTS) {
    return internal_error("conformance case has too many tensors for one op call");
  }
  sy_op_call call;
  std::memset(&call, 0, sizeof(call));  // unused descriptors and reserved bytes read as zero
  call.op = static_cast<uint32_t>(op_case.op);
  call.num_inputs = static_cast<uint32_t>(op_case.inputs.size());
  call.num_outputs = static_cast<uint32_t>(op_case.outputs.size());
  call.params = op_case.params;
  std::vector<Placed> inputs;
  std::vector<Placed> outputs;
  for (size_t i = 0; i < op_case.inputs.size(); ++i) {
    SY_ASSIGN_OR_RETURN(Placed placed, place(device, op_case.inputs[i]));
    call.inputs[i] = placed.desc;
    inputs.push_back(std::move(placed));
  }
  for (size_t i = 0; i < op_case.outputs.size(); ++i) {
    SY_ASSIGN_OR_RETURN(Placed placed, place(device, poisoned(op_case, op_case.outputs[i])));
    call.outputs[i] = placed.desc;
    outputs.push_back(std::move(placed));
  }
  Queue& queue = device.default_queue();
  SY_RETURN_IF_ERROR(queue.dispatch(call));
  SY_RETURN_IF_ERROR(queue.finish());
  std::vector<HostTensor> results;
  for (size_t i = 0; i < outputs.size(); ++i) {
    SY_ASSIGN_OR_RETURN(HostTensor tensor, download(device, outputs[i], op_case.outputs[i]));
    results.push_back(std::move(tensor));
  }
  for (size_t index : op_case.updated_inputs) {
    SY_ASSIGN_OR_RETURN(HostTensor tensor,
                        download(device, inputs.at(index), op_case.inputs[index]));
    results.push_back(std::move(tensor));
  }
  return results;
}

}  // namespace switchyard::conformance
