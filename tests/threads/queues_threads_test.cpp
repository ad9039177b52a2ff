// Queues of one device used by many threads at once (queue.h, device.h "Threads"): each thread has
// a queue of its own and runs chains of ops whose temporaries it releases while the ops that read
// them are still queued. The ABI puts no order between queues, so the memory a thread releases
// goes back to the device's pool and may be handed to another thread's queue at once; the plugin
// must keep the first queue's queued work reading what it was given (plugin_abi.h, buffer_release).
// Every thread must get the values one thread gets, on every backend built here. Vulkan got this
// wrong until 2026-11-29: the later queue's batch could run first and overwrite the block.
#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backend_support.h"
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

sy_op_call elementwise(uint32_t op, const Buffer& in, const Buffer& out, int64_t count) {
  sy_op_call call;
  std::memset(&call, 0, sizeof(call));
  call.op = op;
  call.num_inputs = 1;
  call.num_outputs = 1;
  for (sy_tensor_desc* d : {&call.inputs[0], &call.outputs[0]}) {
    d->dtype = SY_DTYPE_F32;
    d->rank = 1;
    d->shape[0] = count;
    d->strides[0] = 1;
  }
  call.inputs[0].buffer = in.handle();
  call.outputs[0].buffer = out.handle();
  return call;
}

sy_op_call with_scalar(uint32_t op, const Buffer& in, const Buffer& out, int64_t count,
                       double scalar) {
  sy_op_call call = elementwise(op, in, out, count);
  call.params.binary.use_scalar = 1;
  call.params.binary.scalar = scalar;
  return call;
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
  throw_if_error(queue.dispatch(with_scalar(SY_OP_MUL, *input, *doubled, count, 2.0)));
  input.reset();
  std::shared_ptr<Buffer> plus_one = value_or_throw(device.allocate(bytes));
  throw_if_error(queue.dispatch(with_scalar(SY_OP_ADD, *doubled, *plus_one, count, 1.0)));
  doubled.reset();
  std::shared_ptr<Buffer> negated = value_or_throw(device.allocate(bytes));
  throw_if_error(queue.dispatch(elementwise(SY_OP_NEG, *plus_one, *negated, count)));
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
  std::vector<std::string> problems(kThreads);
  std::vector<std::thread> threads;
  const int calls = testing::thread_calls(4, 4);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        std::shared_ptr<Queue> queue = value_or_throw(device->create_queue());
        for (int call = 0; call < calls; ++call) {
          std::string problem = run_chain(*device, *queue, t, call);
          if (!problem.empty()) {
            problems[static_cast<size_t>(t)] = problem;
            return;
          }
        }
      } catch (const std::exception& e) {
        problems[static_cast<size_t>(t)] = "thread " + std::to_string(t) + ": " + e.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<std::string> found;
  for (const std::string& p : problems) {
    if (!p.empty()) found.push_back(p);
  }
  return found;
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
