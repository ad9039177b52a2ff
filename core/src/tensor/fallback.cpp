// The fallback policy: an op the tensor's device lacks runs on the fallback device, with copies.
#include <cstdio>
#include <vector>

#include "switchyard/buffer.h"
#include "switchyard/config.h"
#include "switchyard/device.h"
#include "switchyard/dispatch.h"
#include "switchyard/status.h"
#include "tensor/fallback_internal.h"
#include "tensor/tensor_impl.h"

namespace switchyard {

namespace {

const char* policy_name(FallbackPolicy policy) {
  switch (policy) {
    case FallbackPolicy::kWarn:
      return "warn";
    case FallbackPolicy::kError:
      return "error";
    case FallbackPolicy::kSilent:
      return "silent";
  }
  return "unknown";
}

// Copies the storage span of `tensor` to `target`, keeping shape and strides, so that the moved
// tensor has the same layout relative to its span as the original.
Tensor move_span(const Tensor& tensor, const std::shared_ptr<Device>& target,
                 uint64_t& bytes_copied) {
  const TensorImpl& impl = *tensor.impl();
  const StorageSpan span = storage_span(impl);
  const uint64_t element_bytes = dtype_size_bytes(impl.dtype);
  auto moved = std::make_shared<TensorImpl>();
  moved->device = target;
  moved->storage = value_or_throw(
      target->allocate(std::max<uint64_t>(1, static_cast<uint64_t>(span.count)) * element_bytes));
  moved->shape = impl.shape;
  moved->strides = impl.strides;
  moved->dtype = impl.dtype;
  if (span.count > 0) {
    std::vector<unsigned char> host(static_cast<size_t>(span.count) * element_bytes);
    read_storage(impl, span.first, span.count, host.data());
    write_storage(*moved, 0, span.count, host.data());
    bytes_copied += host.size();
  }
  return Tensor(std::move(moved));
}

// Writes a moved tensor's span back over the original's span.
void write_span_back(const Tensor& original, const Tensor& moved, uint64_t& bytes_copied) {
  const StorageSpan span = storage_span(*original.impl());
  if (span.count == 0) return;
  std::vector<unsigned char> host(static_cast<size_t>(span.count) *
                                  dtype_size_bytes(original.dtype()));
  read_storage(*moved.impl(), 0, span.count, host.data());
  write_storage(*original.impl(), span.first, span.count, host.data());
  bytes_copied += host.size();
}

// Outputs whose old contents the op reads: they must travel to the fallback device too.
bool output_is_read(sy_op op) {
  return op == SY_OP_SCATTER_ADD;
}
// Inputs the op updates in place: they must travel back.
bool input_is_updated(sy_op op, size_t index) {
  if (op == SY_OP_SGD_UPDATE) return index == 0 || index == 2;
  if (op == SY_OP_ADAM_UPDATE) return index != 1;
  return false;
}

void count_fallback(sy_op op, sy_dtype dtype, Device& device, uint64_t copies, uint64_t bytes,
                    FallbackPolicy policy, const Device& fallback) {
  const char* dtype_text = dtype_name(static_cast<DType>(dtype));
  const bool first = device.record_fallback(op_name(op), dtype_text, copies, bytes);
  if (first && policy == FallbackPolicy::kWarn) {
    std::fprintf(stderr,
                 "switchyard: warning: op '%s' with dtype %s is not supported by backend '%s' "
                 "(%s); running it on %s with copies (fallback: warn)\n",
                 op_name(op), dtype_text, device.backend().c_str(), device.id().c_str(),
                 fallback.id().c_str());
  }
}

std::shared_ptr<Device> checked_fallback_device(sy_op op, sy_dtype dtype, Device& device,
                                                FallbackPolicy& policy) {
  policy = device.fallback_policy();
  const std::shared_ptr<Device> fallback = device.fallback_device();
  const std::string what =
      std::string("op '") + op_name(op) + "' with dtype " + dtype_name(static_cast<DType>(dtype)) +
      " is not supported by backend '" + device.backend() + "' (" + device.id() + ")";
  if (policy == FallbackPolicy::kError) {
    throw_error(unimplemented(what + " and the fallback policy is 'error'"));
  }
  if (fallback == nullptr || fallback.get() == &device) {
    throw_error(unimplemented(what + " and no fallback device was set (fallback policy '" +
                              policy_name(policy) + "')"));
  }
  if (!fallback->supports(op, dtype)) {
    throw_error(unimplemented(what + ", nor by the fallback device " + fallback->id()));
  }
  return fallback;
}

}  // namespace

void run_op_on_fallback(sy_op op, sy_dtype dtype, Device& device,
                        std::initializer_list<Tensor> inputs, std::initializer_list<Tensor> outputs,
                        const sy_op_params& params) {
  FallbackPolicy policy = FallbackPolicy::kWarn;
  const std::shared_ptr<Device> fallback = checked_fallback_device(op, dtype, device, policy);
  uint64_t copies = 0;
  uint64_t bytes = 0;
  std::vector<Tensor> moved_inputs;
  std::vector<Tensor> moved_outputs;
  for (const Tensor& t : inputs) {
    moved_inputs.push_back(move_span(t, fallback, bytes));
    ++copies;
  }
  for (const Tensor& t : outputs) {
    if (output_is_read(op) || !t.is_contiguous()) {
      moved_outputs.push_back(move_span(t, fallback, bytes));
      ++copies;
    } else {
      moved_outputs.push_back(Tensor::empty(t.shape(), t.dtype(), fallback));
    }
  }
  sy_op_call call{};
  call.op = op;
  call.num_inputs = static_cast<uint32_t>(moved_inputs.size());
  call.num_outputs = static_cast<uint32_t>(moved_outputs.size());
  for (size_t i = 0; i < moved_inputs.size(); ++i) call.inputs[i] = moved_inputs[i].desc();
  for (size_t i = 0; i < moved_outputs.size(); ++i) call.outputs[i] = moved_outputs[i].desc();
  call.params = params;
  dispatch_on_device(*fallback, call, true);
  size_t index = 0;
  for (const Tensor& t : outputs) {
    write_span_back(t, moved_outputs[index++], bytes);
    ++copies;
  }
  index = 0;
  for (const Tensor& t : inputs) {
    if (input_is_updated(op, index)) {
      write_span_back(t, moved_inputs[index], bytes);
      ++copies;
    }
    ++index;
  }
  count_fallback(op, dtype, device, copies, bytes, policy, *fallback);
}

}  // namespace switchyard
