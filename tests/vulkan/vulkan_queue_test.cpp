// The Vulkan plugin's queues: many ops recorded and submitted in batches, host copies ordered
// with the recorded work, several queues, and timestamp events.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <vector>

#include "capture_test_support.h"
#include "vulkan_test_support.h"

namespace switchyard {
namespace {

using vulkan_test::DeviceTensor;
using vulkan_test::download;
using vulkan_test::enqueue;
using vulkan_test::upload;
using vulkan_test::vulkan_device;

// Both ways host copies work: straight into mapped memory where the device allows it (lavapipe),
// and through staging buffers, as on a discrete GPU (device_local_only).
OptionList copy_path_options() {
  const bool staging = GENERATE(false, true);
  OptionList options = vulkan_test::validation_on();
  options.emplace_back("device_local_only", staging ? "true" : "false");
  return options;
}

sy_op_params scalar(double value) {
  sy_op_params params = vulkan_test::zero_params();
  params.binary.use_scalar = 1;
  params.binary.scalar = value;
  return params;
}

TEST_CASE("vulkan: hundreds of queued in-place ops run in order before one read", "[vulkan]") {
  std::shared_ptr<Device> device = vulkan_device(copy_path_options());
  if (device == nullptr) return;
  const DeviceTensor x = upload(*device, SY_DTYPE_F32, {5}, {0, 1, 2, 3, 4});
  // More ops than one command batch holds, so several submissions must stay ordered.
  for (int i = 0; i < 300; ++i) {
    throw_if_error(enqueue(*device, SY_OP_ADD, {&x}, {&x}, scalar(1.0)));
  }
  throw_if_error(enqueue(*device, SY_OP_MUL, {&x}, {&x}, scalar(2.0)));
  CHECK(download(*device, x) == std::vector<double>{600, 602, 604, 606, 608});
}

TEST_CASE("vulkan: a host write lands between the ops queued before and after it", "[vulkan]") {
  std::shared_ptr<Device> device = vulkan_device(copy_path_options());
  if (device == nullptr) return;
  const DeviceTensor a = upload(*device, SY_DTYPE_F32, {4}, {1, 1, 1, 1});
  const DeviceTensor before = vulkan_test::zeros(*device, SY_DTYPE_F32, {4});
  const DeviceTensor after = vulkan_test::zeros(*device, SY_DTYPE_F32, {4});
  throw_if_error(enqueue(*device, SY_OP_COPY, {&a}, {&before}));
  const float twos[4] = {2, 2, 2, 2};
  // Returns before the GPU has run the copy above; the bytes are staged, and `twos` may be reused.
  throw_if_error(device->default_queue().write(*a.buffer, 0, twos, sizeof(twos)));
  throw_if_error(enqueue(*device, SY_OP_COPY, {&a}, {&after}));
  CHECK(download(*device, before) == std::vector<double>{1, 1, 1, 1});
  CHECK(download(*device, after) == std::vector<double>{2, 2, 2, 2});
}

TEST_CASE("vulkan: a second queue runs its own work", "[vulkan]") {
  std::shared_ptr<Device> device = vulkan_device(copy_path_options());
  if (device == nullptr) return;
  std::shared_ptr<Queue> queue = value_or_throw(device->create_queue());
  std::shared_ptr<Buffer> buffer = value_or_throw(device->allocate(16));
  const float values[4] = {1, -2, 3, -4};
  throw_if_error(queue->write(*buffer, 0, values, sizeof(values)));
  sy_op_call call;
  std::memset(&call, 0, sizeof(call));
  call.op = SY_OP_ABS;
  call.num_inputs = 1;
  call.num_outputs = 1;
  sy_tensor_desc& x = call.inputs[0];
  x.buffer = buffer->handle();
  x.dtype = SY_DTYPE_F32;
  x.rank = 1;
  x.shape[0] = 4;
  x.strides[0] = 1;
  call.outputs[0] = x;
  throw_if_error(queue->dispatch(call));
  throw_if_error(queue->finish());
  float result[4] = {};
  throw_if_error(queue->read(*buffer, 0, result, sizeof(result)));
  CHECK(std::vector<float>(result, result + 4) == std::vector<float>{1, 2, 3, 4});
}

TEST_CASE("vulkan: timestamp events measure a non-negative time between two points", "[vulkan]") {
  std::shared_ptr<Device> device = vulkan_device();
  if (device == nullptr) return;
  const sy_plugin_functions& f = device->functions();
  REQUIRE(f.event_create != nullptr);
  sy_event start = nullptr, end = nullptr;
  throw_if_error(device->check(f.event_create(device->handle(), &start), "event_create"));
  throw_if_error(device->check(f.event_create(device->handle(), &end), "event_create"));
  const sy_queue queue = device->default_queue().handle();
  const DeviceTensor a = upload(*device, SY_DTYPE_F32, {64, 64}, vulkan_test::wavy_values(4096, 0));
  const DeviceTensor c = vulkan_test::zeros(*device, SY_DTYPE_F32, {64, 64});
  throw_if_error(device->check(f.event_record(device->handle(), queue, start), "event_record"));
  throw_if_error(enqueue(*device, SY_OP_MATMUL, {&a, &a}, {&c}));
  throw_if_error(device->check(f.event_record(device->handle(), queue, end), "event_record"));
  throw_if_error(device->check(f.event_synchronize(device->handle(), end), "event_synchronize"));
  double elapsed_ms = -1.0;
  throw_if_error(device->check(f.event_elapsed_ms(device->handle(), start, end, &elapsed_ms),
                               "event_elapsed_ms"));
  CHECK(elapsed_ms >= 0.0);
  f.event_destroy(device->handle(), start);
  f.event_destroy(device->handle(), end);
}

TEST_CASE("vulkan: shape errors are INVALID_ARGUMENT naming the op and shapes", "[vulkan]") {
  std::shared_ptr<Device> device = vulkan_device();
  if (device == nullptr) return;
  const DeviceTensor a = vulkan_test::zeros(*device, SY_DTYPE_F32, {4, 3});
  const DeviceTensor b = vulkan_test::zeros(*device, SY_DTYPE_F32, {5, 2});
  const DeviceTensor c = vulkan_test::zeros(*device, SY_DTYPE_F32, {4, 2});
  const Status status = enqueue(*device, SY_OP_MATMUL, {&a, &b}, {&c});
  REQUIRE(status.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(status.message(),
             Catch::Contains("MATMUL") && Catch::Contains("[4, 3]") && Catch::Contains("[5, 2]"));
  // A descriptor reaching past its buffer is refused before anything is recorded.
  DeviceTensor past = a;
  past.desc.shape[0] = 5;
  const Status outside = enqueue(*device, SY_OP_RELU, {&past}, {&past});
  REQUIRE(outside.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(outside.message(), Catch::Contains("RELU") && Catch::Contains("48"));
}

}  // namespace
}  // namespace switchyard

namespace switchyard {
namespace {

// An op call on `x` in place: x = x * 2 + 1 as two calls.
std::vector<sy_op_call> double_plus_one(const vulkan_test::DeviceTensor& x) {
  std::vector<sy_op_call> calls(2);
  for (size_t k = 0; k < 2; ++k) {
    std::memset(&calls[k], 0, sizeof(sy_op_call));
    calls[k].op = k == 0 ? SY_OP_MUL : SY_OP_ADD;
    calls[k].num_inputs = 1;
    calls[k].num_outputs = 1;
    calls[k].inputs[0] = x.desc;
    calls[k].outputs[0] = x.desc;
    calls[k].params = scalar(k == 0 ? 2.0 : 1.0);
  }
  return calls;
}

TEST_CASE("vulkan: a captured graph runs on every launch, in order with the queue's other work",
          "[vulkan][capture]") {
  std::shared_ptr<Device> device = vulkan_device(copy_path_options());
  if (device == nullptr) return;
  const sy_plugin_functions& f = device->functions();
  REQUIRE(f.queue_capture_begin != nullptr);
  const DeviceTensor x = upload(*device, SY_DTYPE_F32, {3}, {0, 1, 2});
  const std::shared_ptr<Queue> capture = value_or_throw(device->create_queue());
  sy_graph graph = testing::capture_graph(*device, *capture, double_plus_one(x));
  REQUIRE(graph != nullptr);
  // Capturing ran nothing.
  CHECK(download(*device, x) == std::vector<double>{0, 1, 2});
  const sy_queue queue = device->default_queue().handle();
  for (int k = 0; k < 3; ++k) {
    throw_if_error(device->check(f.graph_launch(device->handle(), queue, graph), "launch"));
  }
  // An op queued after the launches runs after them.
  throw_if_error(enqueue(*device, SY_OP_ADD, {&x}, {&x}, scalar(100.0)));
  // ((x * 2 + 1) three times) + 100: 0 -> 107, 1 -> 115, 2 -> 123.
  CHECK(download(*device, x) == std::vector<double>{107, 115, 123});
  f.graph_destroy(device->handle(), graph);
}

TEST_CASE("vulkan: graph_update gives a captured call new parameters for later launches",
          "[vulkan][capture]") {
  std::shared_ptr<Device> device = vulkan_device(vulkan_test::validation_on());
  if (device == nullptr) return;
  const sy_plugin_functions& f = device->functions();
  REQUIRE(f.graph_update != nullptr);
  const DeviceTensor x = upload(*device, SY_DTYPE_F32, {3}, {0, 1, 2});
  const DeviceTensor other = upload(*device, SY_DTYPE_F32, {3}, {0, 0, 0});
  const std::shared_ptr<Queue> capture = value_or_throw(device->create_queue());
  sy_graph graph = testing::capture_graph(*device, *capture, double_plus_one(x));
  const sy_queue queue = device->default_queue().handle();
  const auto launch = [&] {
    throw_if_error(device->check(f.graph_launch(device->handle(), queue, graph), "launch"));
  };
  launch();  // x * 2 + 1
  // The second call (ADD) now adds 10; updating while the launch runs waits for it.
  std::vector<sy_op_call> calls = double_plus_one(x);
  calls[1].params = scalar(10.0);
  throw_if_error(device->check(f.graph_update(device->handle(), graph, 1, &calls[1]), "update"));
  CHECK(download(*device, x) == std::vector<double>{1, 3, 5});
  launch();
  CHECK(download(*device, x) == std::vector<double>{12, 16, 20});
  // A call index beyond the graph's, another op, another tensor: refused, the graph unchanged.
  CHECK(f.graph_update(device->handle(), graph, 2, &calls[1]) == SY_STATUS_INVALID_ARGUMENT);
  CHECK_THAT(f.last_error_message(), Catch::Contains("2 calls were captured"));
  CHECK(f.graph_update(device->handle(), graph, 0, &calls[1]) == SY_STATUS_INVALID_ARGUMENT);
  CHECK_THAT(f.last_error_message(), Catch::Contains("is another op than the captured one"));
  sy_op_call elsewhere = calls[1];
  elsewhere.outputs[0] = other.desc;
  elsewhere.params = scalar(1000.0);
  CHECK(f.graph_update(device->handle(), graph, 1, &elsewhere) == SY_STATUS_INVALID_ARGUMENT);
  CHECK_THAT(f.last_error_message(), Catch::Contains("names another tensor as output 0"));
  launch();
  CHECK(download(*device, x) == std::vector<double>{34, 42, 50});
  CHECK(download(*device, other) == std::vector<double>{0, 0, 0});
  f.graph_destroy(device->handle(), graph);
}

TEST_CASE("vulkan: a read while capturing spoils the capture, and the queue works on",
          "[vulkan][capture]") {
  std::shared_ptr<Device> device = vulkan_device(vulkan_test::validation_on());
  if (device == nullptr) return;
  const sy_plugin_functions& f = device->functions();
  const DeviceTensor x = upload(*device, SY_DTYPE_F32, {3}, {0, 1, 2});
  const std::shared_ptr<Queue> capture = value_or_throw(device->create_queue());
  throw_if_error(
      device->check(f.queue_capture_begin(device->handle(), capture->handle()), "begin"));
  CHECK(f.queue_capture_begin(device->handle(), capture->handle()) == SY_STATUS_INVALID_ARGUMENT);
  for (const sy_op_call& call : double_plus_one(x)) throw_if_error(capture->dispatch(call));
  float host[3];
  const Status read = capture->read(*x.buffer, 0, host, sizeof(host));
  CHECK(read.code() == StatusCode::kUnimplemented);
  CHECK_THAT(read.message(), Catch::Contains("buffer_read while the queue is capturing"));
  sy_graph graph = nullptr;
  CHECK(f.queue_capture_end(device->handle(), capture->handle(), &graph) ==
        SY_STATUS_UNIMPLEMENTED);
  CHECK(graph == nullptr);
  // Not capturing any more: the same queue runs ops again.
  for (const sy_op_call& call : double_plus_one(x)) throw_if_error(capture->dispatch(call));
  throw_if_error(capture->finish());
  CHECK(download(*device, x) == std::vector<double>{1, 3, 5});
}

// Memory released while work queued on one queue still reads it goes back to the pool at once and
// may be handed to another queue, which knows nothing of that work (the ABI puts no order between
// queues). The pool's next owner must not overwrite it before the queued work has read it: found
// by hand (2026-11-29) on lavapipe, where the second queue's write ran first and the first queue's
// copy read 2s.
TEST_CASE(
    "vulkan: memory released with work queued on one queue, and taken by another queue, "
    "keeps its contents for that work",
    "[vulkan]") {
  std::shared_ptr<Device> device = vulkan_device(copy_path_options());
  if (device == nullptr) return;
  const bool overwrite_by_op = GENERATE(false, true);
  CAPTURE(overwrite_by_op);
  constexpr int64_t kCount = 4096;
  constexpr uint64_t kBytes = kCount * sizeof(float);
  Queue& first = device->default_queue();
  std::shared_ptr<Queue> second = value_or_throw(device->create_queue());
  const std::vector<float> ones(kCount, 1.0f), twos(kCount, 2.0f);
  std::shared_ptr<Buffer> out = value_or_throw(device->allocate(kBytes));
  std::shared_ptr<Buffer> source = value_or_throw(device->allocate(kBytes));
  throw_if_error(first.write(*source, 0, ones.data(), kBytes));
  throw_if_error(first.finish());  // the ones are in place on the device
  throw_if_error(first.dispatch(
      testing::op_call(SY_OP_COPY, {testing::vector_desc(*source, SY_DTYPE_F32, kCount)},
                       {testing::vector_desc(*out, SY_DTYPE_F32, kCount)})));
  source.reset();  // the copy above is queued, not run
  std::shared_ptr<Buffer> reused = value_or_throw(device->allocate(kBytes));
  if (overwrite_by_op) {
    sy_op_params fill = vulkan_test::zero_params();
    fill.fill.value = 2.0;
    throw_if_error(second->dispatch(testing::op_call(
        SY_OP_FILL, {}, {testing::vector_desc(*reused, SY_DTYPE_F32, kCount)}, fill)));
  } else {
    throw_if_error(second->write(*reused, 0, twos.data(), kBytes));
  }
  throw_if_error(second->finish());
  throw_if_error(first.finish());
  std::vector<float> result(kCount);
  throw_if_error(first.read(*out, 0, result.data(), kBytes));
  CHECK(std::count(result.begin(), result.end(), 1.0f) == kCount);
}

}  // namespace
}  // namespace switchyard
