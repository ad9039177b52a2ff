// Queues of one device used by many threads at once (queue.h, device.h "Threads"): each thread has
// a queue of its own and runs chains of ops whose temporaries it releases while the ops that read
// them are still queued. The ABI puts no order between queues, so the memory a thread releases
// goes back to the device's pool and may be handed to another thread's queue at once; the plugin
// must keep the first queue's queued work reading what it was given (plugin_abi.h, buffer_release).
// Every thread must get the values one thread gets, on every backend built here. Vulkan got this
// wrong until 2026-11-29: the later queue's batch could run first and overwrite the block.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "backend_support.h"
#include "device_tensor.h"
#include "switchyard/buffer.h"
#include "switchyard/device.h"
#include "switchyard/queue.h"
#include "tensor/tensor_test_support.h"
#include "threads/thread_calls.h"

namespace switchyard {
namespace {

using testing::optional_device;

constexpr int kThreads = 4;
// A few sizes only, so that blocks one thread releases are the size another thread asks for.
constexpr int64_t kSizes[] = {256, 4096, 20000};

sy_op_call unary(sy_op op, const Buffer& in, const Buffer& out, int64_t count,
                 const sy_op_params& params = testing::zero_params()) {
  return testing::op_call(op, {testing::vector_desc(in, SY_DTYPE_F32, count)},
                          {testing::vector_desc(out, SY_DTYPE_F32, count)}, params);
}

sy_op_params scalar(double value) {
  sy_op_params params = testing::zero_params();
  params.binary.use_scalar = 1;
  params.binary.scalar = value;
  return params;
}

// One chain: x (thread- and call-dependent integers), 2x, 2x + 1, -(2x + 1), each step into a
// buffer of its own, each buffer released as soon as the next op is queued. Exact in f32, so
// every backend gives -(2x + 1) bit for bit. Returns "" or what went wrong.
std::string run_chain(Device& device, Queue& queue, int thread, int call) {
  const int64_t count = kSizes[(thread + call) % 3];
  std::vector<float> x(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    x[static_cast<size_t>(i)] = static_cast<float>((i * 7 + thread * 131 + call * 17) % 1001 - 500);
  }
  const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(float);
  std::shared_ptr<Buffer> input = value_or_throw(device.allocate(bytes));
  throw_if_error(queue.write(*input, 0, x.data(), bytes));
  std::shared_ptr<Buffer> doubled = value_or_throw(device.allocate(bytes));
  throw_if_error(queue.dispatch(unary(SY_OP_MUL, *input, *doubled, count, scalar(2.0))));
  input.reset();
  std::shared_ptr<Buffer> plus_one = value_or_throw(device.allocate(bytes));
  throw_if_error(queue.dispatch(unary(SY_OP_ADD, *doubled, *plus_one, count, scalar(1.0))));
  doubled.reset();
  std::shared_ptr<Buffer> negated = value_or_throw(device.allocate(bytes));
  throw_if_error(queue.dispatch(unary(SY_OP_NEG, *plus_one, *negated, count)));
  plus_one.reset();
  std::vector<float> result(static_cast<size_t>(count));
  throw_if_error(queue.read(*negated, 0, result.data(), bytes));
  for (int64_t i = 0; i < count; ++i) {
    const float expected = -(2.0f * x[static_cast<size_t>(i)] + 1.0f);
    if (result[static_cast<size_t>(i)] != expected) {
      return "thread " + std::to_string(thread) + " call " + std::to_string(call) + " element " +
             std::to_string(i) + " of " + std::to_string(count) + ": " +
             std::to_string(result[static_cast<size_t>(i)]) + ", expected " +
             std::to_string(expected);
    }
  }
  return "";
}

std::vector<std::string> run_threads(const std::shared_ptr<Device>& device) {
  const int calls = testing::thread_calls(4, 4);
  return testing::problems_on_threads(kThreads, [&](int t) -> std::string {
    std::shared_ptr<Queue> queue = value_or_throw(device->create_queue());
    for (int call = 0; call < calls; ++call) {
      std::string problem = run_chain(*device, *queue, t, call);
      if (!problem.empty()) return problem;
    }
    return "";
  });
}

TEST_CASE(
    "threads with a queue each release memory their queued ops still read, and each gets "
    "the one-thread values",
    "[threads][queues]") {
  {
    INFO("reference");
    CHECK(run_threads(testing::test_device()) == std::vector<std::string>{});
  }
  for (const std::string backend : {"onednn", "vulkan", "cuda"}) {
    if (!testing::plugin_built(backend) && !testing::backend_required(backend)) continue;
    const std::shared_ptr<Device> device = optional_device(backend);
    if (device == nullptr) continue;
    INFO(backend);
    CHECK(run_threads(device) == std::vector<std::string>{});
  }
}

}  // namespace
}  // namespace switchyard
