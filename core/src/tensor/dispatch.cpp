// Op dispatch: support checks, the fallback policy, counters and the observer hook.
#include "switchyard/dispatch.h"

#include <array>
#include <atomic>
#include <cctype>
#include <string>

#include "switchyard/device.h"
#include "switchyard/plugin_support/dtype_codec.h"
#include "switchyard/queue.h"
#include "switchyard/status.h"
#include "tensor/capture_internal.h"
#include "tensor/dispatch_internal.h"
#include "tensor/fallback_internal.h"
#include "tensor/tensor_impl.h"

namespace switchyard {

namespace {

std::atomic<OpObserver*> g_observer{nullptr};
std::atomic<uint64_t> g_dispatched{0};

void fill_call(sy_op_call& call, sy_op op, std::initializer_list<Tensor> inputs,
               std::initializer_list<Tensor> outputs, const sy_op_params& params, uint32_t flags) {
  call.op = op;
  call.flags = flags;
  call.num_inputs = static_cast<uint32_t>(inputs.size());
  call.num_outputs = static_cast<uint32_t>(outputs.size());
  uint32_t i = 0;
  for (const Tensor& t : inputs) call.inputs[i++] = t.desc();
  i = 0;
  for (const Tensor& t : outputs) call.outputs[i++] = t.desc();
  call.params = params;
}

// All tensors of one call live on one device; returns it.
const std::shared_ptr<Device>& common_device(sy_op op, std::initializer_list<Tensor> inputs,
                                             std::initializer_list<Tensor> outputs) {
  const std::shared_ptr<Device>* device = nullptr;
  auto check = [&](const Tensor& t) {
    const TensorImpl& impl = checked_impl(t, op_name(op));
    if (device == nullptr) {
      device = &impl.device;
    } else if (impl.device != *device) {
      throw_error(invalid_argument(std::string(op_name(op)) + ": tensors on different devices (" +
                                   (*device)->id() + " and " + impl.device->id() +
                                   "); move them with Tensor::to(device) first"));
    }
  };
  for (const Tensor& t : inputs) check(t);
  for (const Tensor& t : outputs) check(t);
  if (device == nullptr) throw_error(internal_error(std::string(op_name(op)) + " has no tensors"));
  return *device;
}

}  // namespace

const char* op_name(sy_op op) {
  // The ABI's names, lower-cased once: "MATMUL" -> "matmul".
  static const std::array<std::string, SY_OP_COUNT> kLowerNames = [] {
    std::array<std::string, SY_OP_COUNT> lower;
    for (uint32_t i = 0; i < SY_OP_COUNT; ++i) {
      for (const char* c = sy_op_name(i); *c != '\0'; ++c) {
        lower[i] += static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
      }
    }
    return lower;
  }();
  const auto index = static_cast<uint32_t>(op);
  return index < SY_OP_COUNT ? kLowerNames[index].c_str() : "unknown";
}

sy_dtype key_dtype(const sy_op_call& call) {
  if (call.op == SY_OP_COPY) return static_cast<sy_dtype>(call.outputs[0].dtype);
  for (uint32_t i = 0; i < call.num_inputs; ++i) {
    if (sy_support::is_float_dtype(call.inputs[i].dtype))
      return static_cast<sy_dtype>(call.inputs[i].dtype);
  }
  if (call.num_outputs > 0) return static_cast<sy_dtype>(call.outputs[0].dtype);
  return static_cast<sy_dtype>(call.inputs[0].dtype);
}

void dispatch_on_device(Device& device, const sy_op_call& call, bool fallback) {
  OpObserver* observer = g_observer.load(std::memory_order_acquire);
  Queue& queue = device.default_queue();
  const auto op = static_cast<sy_op>(call.op);
  OpEvent event{op, op_name(op), &call, &device, &queue, fallback};
  if (observer != nullptr) observer->on_op_begin(event);
  Status status = queue.dispatch(call);
  if (observer != nullptr) observer->on_op_end(event);
  g_dispatched.fetch_add(1, std::memory_order_relaxed);
  throw_if_error(status);
}

void run_op(sy_op op, std::initializer_list<Tensor> inputs, std::initializer_list<Tensor> outputs,
            const sy_op_params& params, uint32_t flags) {
  const std::shared_ptr<Device>& device = common_device(op, inputs, outputs);
  sy_op_call call{};
  fill_call(call, op, inputs, outputs, params, flags);
  const sy_dtype dtype = key_dtype(call);
  if (device->supports(op, dtype)) {
    detail::capture_note_op(*device, call, inputs, outputs);
    dispatch_on_device(*device, call, false);
    return;
  }
  detail::capture_note_fallback(op, *device);
  run_op_on_fallback(op, dtype, *device, inputs, outputs, params);
}

void set_op_observer(OpObserver* observer) {
  g_observer.store(observer, std::memory_order_release);
}
OpObserver* op_observer() {
  return g_observer.load(std::memory_order_acquire);
}
uint64_t dispatched_op_count() {
  return g_dispatched.load(std::memory_order_relaxed);
}
void reset_dispatched_op_count() {
  g_dispatched.store(0, std::memory_order_relaxed);
}

}  // namespace switchyard
