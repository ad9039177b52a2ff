// Checks that need a GPU (they return early with "skipped cuda: <reason>" on a machine without one,
// and fail there instead where cuda is required: tests/backend_support.h): device properties, the
// round trip through buffers, ops and queues, bit-exact random numbers, the memory pool's
// statistics and cap, and device-side timing (tests/event_timing.h). The op-by-op comparison with
// the reference backend is `switchyard conformance --backend cuda`.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include "backend_support.h"
#include "capture_test_support.h"
#include "cuda_test_support.h"
#include "dtype_conversion.h"
#include "event_timing.h"
#include "switchyard/buffer.h"
#include "switchyard/plugin_support/philox.h"
#include "switchyard/queue.h"

namespace switchyard::cuda_test {
namespace {

// The cuda device 0, or nullptr where there is none: the test then fails with the reason where cuda
// is required (tools/gpu-check sets SWITCHYARD_REQUIRE_BACKENDS=cuda,vulkan), else it warns
// "skipped cuda: <reason>" and returns.
std::shared_ptr<Device> gpu(const OptionList& options = {}) {
  std::string reason;
  if (!plugin_built()) {
    reason = plugin_path() + " is missing (the plugin is not built)";
  } else if (const std::string driver = driver_error(); !driver.empty()) {
    reason = "no NVIDIA driver here: " + driver;
  } else if (auto device = Device::create(cuda_plugin(), 0, options); !device.ok()) {
    reason = "no usable CUDA device: " + device.status().to_string();
  } else {
    return device.value();
  }
  testing::skip_backend("cuda", reason);
  return nullptr;
}

sy_tensor_desc f32(const Buffer& buffer, uint64_t offset, std::vector<int64_t> shape,
                   uint32_t dtype = SY_DTYPE_F32) {
  sy_tensor_desc t{};
  t.buffer = buffer.handle();
  t.offset_bytes = offset;
  t.dtype = dtype;
  t.rank = static_cast<uint32_t>(shape.size());
  int64_t stride = 1;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    t.shape[d] = shape[d];
    t.strides[d] = stride;
    stride *= shape[d];
  }
  return t;
}

sy_op_call call_of(uint32_t op, std::vector<sy_tensor_desc> inputs,
                   std::vector<sy_tensor_desc> outputs) {
  sy_op_call call;
  std::memset(&call, 0, sizeof(call));
  call.op = op;
  call.num_inputs = static_cast<uint32_t>(inputs.size());
  call.num_outputs = static_cast<uint32_t>(outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) call.inputs[i] = inputs[i];
  for (size_t i = 0; i < outputs.size(); ++i) call.outputs[i] = outputs[i];
  return call;
}

TEST_CASE("cuda device properties describe the GPU", "[cuda][gpu]") {
  auto device = gpu();
  if (!device) return;
  const DeviceInfo& info = device->info();
  CHECK_FALSE(info.name.empty());
  CHECK(info.vendor == "NVIDIA");
  CHECK(info.type == DeviceType::kGpu);
  CHECK(info.uuid.size() == 36);
  CHECK_FALSE(info.bus_id.empty());
  CHECK(info.memory_total_bytes > 0);
  CHECK(info.memory_free_bytes > 0);
  CHECK(info.memory_free_bytes <= info.memory_total_bytes);
  CHECK(info.compute_units > 0);
  CHECK_THAT(info.details, Catch::Contains("compute capability"));
}

TEST_CASE("cuda add and matmul give exact small-integer answers", "[cuda][gpu]") {
  auto device = gpu();
  if (!device) return;
  auto buffer = value_or_throw(device->allocate(24 * sizeof(float)));
  Queue& queue = device->default_queue();
  const float a[6] = {1, 2, 3, 4, 5, 6};
  const float b[6] = {7, 8, 9, 10, 11, 12};
  throw_if_error(queue.write(*buffer, 0, a, sizeof(a)));
  throw_if_error(queue.write(*buffer, 24, b, sizeof(b)));
  throw_if_error(queue.dispatch(
      call_of(SY_OP_ADD, {f32(*buffer, 0, {6}), f32(*buffer, 24, {6})}, {f32(*buffer, 48, {6})})));
  throw_if_error(
      queue.dispatch(call_of(SY_OP_MATMUL, {f32(*buffer, 0, {2, 3}), f32(*buffer, 24, {3, 2})},
                             {f32(*buffer, 72, {2, 2})})));
  float got[10] = {};
  throw_if_error(queue.read(*buffer, 48, got, sizeof(got)));
  const float expected[10] = {8, 10, 12, 14, 16, 18, 58, 64, 139, 154};
  for (int i = 0; i < 10; ++i) CHECK(got[i] == expected[i]);
}

TEST_CASE("the cuda option matmul chooses the path, and the settings line counts each",
          "[cuda][gpu]") {
  for (const std::string path : {"cublaslt", "kernel"}) {
    auto device = gpu({{"matmul", path}});
    if (!device) return;
    auto buffer = value_or_throw(device->allocate(256 * sizeof(float)));
    Queue& queue = device->default_queue();
    std::vector<float> a(64);
    for (int i = 0; i < 64; ++i) a[i] = static_cast<float>(i % 7) - 3.0f;
    throw_if_error(queue.write(*buffer, 0, a.data(), a.size() * sizeof(float)));
    for (int i = 0; i < 3; ++i) {
      throw_if_error(
          queue.dispatch(call_of(SY_OP_MATMUL, {f32(*buffer, 0, {8, 8}), f32(*buffer, 0, {8, 8})},
                                 {f32(*buffer, 512, {8, 8})})));
    }
    std::vector<float> got(64);
    throw_if_error(queue.read(*buffer, 512, got.data(), got.size() * sizeof(float)));
    for (int r = 0; r < 8; ++r) {
      for (int c = 0; c < 8; ++c) {
        float expected = 0;
        for (int k = 0; k < 8; ++k) expected += a[r * 8 + k] * a[k * 8 + c];
        CHECK(got[r * 8 + c] == expected);
      }
    }
    const std::string settings = device->settings();
    INFO(settings);
    CHECK(settings.find("matmul=" + path) != std::string::npos);
    CHECK(settings.find(path == "cublaslt" ? "matmuls_cublaslt=3 matmuls_kernel=0"
                                           : "cublaslt=none matmuls_cublaslt=0 matmuls_kernel=3") !=
          std::string::npos);
  }
}

TEST_CASE("cuda random uniform is bit-identical to the host Philox definition", "[cuda][gpu]") {
  auto device = gpu();
  if (!device) return;
  const int64_t n = 1000;
  auto buffer = value_or_throw(device->allocate(n * sizeof(float)));
  sy_op_call call = call_of(SY_OP_RANDOM_UNIFORM, {}, {f32(*buffer, 0, {10, 100})});
  call.params.random = {1234, 7, -2.0, 3.0};
  Queue& queue = device->default_queue();
  throw_if_error(queue.dispatch(call));
  std::vector<float> got(n);
  throw_if_error(queue.read(*buffer, 0, got.data(), n * sizeof(float)));
  for (int64_t i = 0; i < n; ++i) {
    const SyPhiloxWords w = sy_philox_for_element(1234, 7, static_cast<uint64_t>(i));
    const float expected = sy_uniform_from_unit(-2.0f, 3.0f, sy_unit_float(w.w[0]));
    INFO("element " << i);
    REQUIRE(got[i] == expected);
  }
}

TEST_CASE("cuda memory pool reports, caps and empties", "[cuda][gpu]") {
  auto device = gpu({{"memory_limit_bytes", "16777216"}});  // 16 MiB
  if (!device) return;
  auto stats = value_or_throw(device->memory_stats());
  CHECK(stats.limit_bytes == 16777216u);
  {
    auto one = value_or_throw(device->allocate(4u << 20));
    stats = value_or_throw(device->memory_stats());
    CHECK(stats.allocated_bytes >= (4u << 20));
    CHECK(stats.allocation_count >= 1);
    auto over = device->allocate(13u << 20);
    REQUIRE_FALSE(over.ok());
    CHECK(over.status().code() == StatusCode::kResourceExhausted);
    CHECK_THAT(over.status().message(), Catch::Contains("requested 13.0 MiB"));
    CHECK_THAT(over.status().message(), Catch::Contains("in use"));
    CHECK_THAT(over.status().message(), Catch::Contains("memory cap of 16.0 MiB"));
  }
  stats = value_or_throw(device->memory_stats());
  CHECK(stats.reserved_bytes >= (4u << 20));  // the freed block stays cached
  throw_if_error(device->empty_cache());
  stats = value_or_throw(device->memory_stats());
  CHECK(stats.reserved_bytes == stats.allocated_bytes);
  CHECK(stats.peak_allocated_bytes >= (4u << 20));
}

TEST_CASE("cuda rejects a tensor outside its buffer without touching the GPU", "[cuda][gpu]") {
  auto device = gpu();
  if (!device) return;
  auto buffer = value_or_throw(device->allocate(16));
  const Status status = device->default_queue().dispatch(
      call_of(SY_OP_RELU, {f32(*buffer, 0, {8})}, {f32(*buffer, 0, {4})}));
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(status.message(), Catch::Contains("RELU: input 0 f32 [8]"));
  CHECK_THAT(status.message(), Catch::Contains("its buffer has 16"));
}

TEST_CASE("cuda reuses a freed block on another queue only after the first queue's work",
          "[cuda][gpu]") {
  auto device = gpu();
  if (!device) return;
  const int64_t n = 1 << 20;
  Queue& first = device->default_queue();
  auto second = value_or_throw(device->create_queue());
  {
    auto busy = value_or_throw(device->allocate(n * sizeof(float)));
    std::vector<float> ones(n, 1.0f);
    throw_if_error(first.write(*busy, 0, ones.data(), n * sizeof(float)));
    // Many in-place negations keep the first queue busy after the buffer is released; an odd
    // count leaves -1 where they ran last.
    const sy_tensor_desc t = f32(*busy, 0, {n});
    for (int i = 0; i < 201; ++i) throw_if_error(first.dispatch(call_of(SY_OP_NEG, {t}, {t})));
  }
  const auto reserved = value_or_throw(device->memory_stats()).reserved_bytes;
  auto reused = value_or_throw(device->allocate(n * sizeof(float)));
  CHECK(value_or_throw(device->memory_stats()).reserved_bytes == reserved);  // the cached block
  sy_op_call fill = call_of(SY_OP_FILL, {}, {f32(*reused, 0, {n})});
  fill.params.fill.value = 2.0;
  throw_if_error(second->dispatch(fill));
  std::vector<float> got(n);
  throw_if_error(second->read(*reused, 0, got.data(), n * sizeof(float)));
  int64_t wrong = 0;
  for (float v : got) wrong += v != 2.0f;
  CHECK(wrong == 0);
}

TEST_CASE("a deterministic cuda device turns tf32 off and scatter-adds in index order",
          "[cuda][gpu]") {
  auto device = gpu({{"deterministic", "true"}, {"tf32", "true"}});
  if (!device) return;
  CHECK(device->settings().rfind("tf32=off deterministic=on matmul=auto ", 0) == 0);
  // Many src rows land on the same 3 out rows, with magnitudes far apart, so the f32 sum depends
  // on the order of the additions: only index order gives the host's answer, every time.
  const int64_t rows = 4096, cols = 4, targets = 3;
  std::vector<float> src(rows * cols);
  std::vector<int32_t> indices(rows);
  for (int64_t j = 0; j < rows; ++j) {
    indices[j] = static_cast<int32_t>((j * 7) % targets);
    for (int64_t c = 0; c < cols; ++c) {
      src[j * cols + c] = (j % 97 == 0) ? 1.0e7f : 0.1f * static_cast<float>((j + c) % 13) - 0.6f;
    }
  }
  std::vector<float> expected(targets * cols, 0.5f);
  for (int64_t j = 0; j < rows; ++j) {
    for (int64_t c = 0; c < cols; ++c) expected[indices[j] * cols + c] += src[j * cols + c];
  }
  const uint64_t src_bytes = src.size() * sizeof(float), index_bytes = rows * sizeof(int32_t);
  const uint64_t out_bytes = expected.size() * sizeof(float);
  auto buffer = value_or_throw(device->allocate(src_bytes + index_bytes + out_bytes));
  Queue& queue = device->default_queue();
  throw_if_error(queue.write(*buffer, 0, src.data(), src_bytes));
  throw_if_error(queue.write(*buffer, src_bytes, indices.data(), index_bytes));
  const sy_op_call call =
      call_of(SY_OP_SCATTER_ADD,
              {f32(*buffer, 0, {rows, cols}), f32(*buffer, src_bytes, {rows}, SY_DTYPE_I32)},
              {f32(*buffer, src_bytes + index_bytes, {targets, cols})});
  for (int run = 0; run < 3; ++run) {
    const std::vector<float> initial(expected.size(), 0.5f);
    throw_if_error(queue.write(*buffer, src_bytes + index_bytes, initial.data(), out_bytes));
    throw_if_error(queue.dispatch(call));
    std::vector<float> got(expected.size());
    throw_if_error(queue.read(*buffer, src_bytes + index_bytes, got.data(), out_bytes));
    for (size_t i = 0; i < got.size(); ++i) {
      INFO("run " << run << ", element " << i);
      CHECK(got[i] == expected[i]);
    }
  }
}

// Native capture (CUDA Graphs): x = x * 2 + 1 as two calls on a [3] tensor at the buffer's start.
sy_op_call scalar_call(uint32_t op, const Buffer& x, double value) {
  sy_op_call call = call_of(op, {f32(x, 0, {3})}, {f32(x, 0, {3})});
  call.params.binary.use_scalar = 1;
  call.params.binary.scalar = value;
  return call;
}

std::vector<sy_op_call> double_plus_one(const Buffer& x) {
  return {scalar_call(SY_OP_MUL, x, 2.0), scalar_call(SY_OP_ADD, x, 1.0)};
}

// A new [3] f32 buffer holding `values`.
std::shared_ptr<Buffer> upload3(Device& device, const std::vector<float>& values) {
  auto x = value_or_throw(device.allocate(3 * sizeof(float)));
  throw_if_error(device.default_queue().write(*x, 0, values.data(), 3 * sizeof(float)));
  return x;
}

std::vector<float> read3(Device& device, const Buffer& x) {
  std::vector<float> got(3);
  throw_if_error(device.default_queue().read(x, 0, got.data(), 3 * sizeof(float)));
  return got;
}

TEST_CASE("cuda: a captured graph runs on every launch, in order with the queue's other work",
          "[cuda][gpu][capture]") {
  auto device = gpu();
  if (!device) return;
  const sy_plugin_functions& f = device->functions();
  REQUIRE(f.queue_capture_begin != nullptr);
  const auto x = upload3(*device, {0, 1, 2});
  const std::shared_ptr<Queue> capture = value_or_throw(device->create_queue());
  sy_graph graph = testing::capture_graph(*device, *capture, double_plus_one(*x));
  REQUIRE(graph != nullptr);
  CHECK(read3(*device, *x) == std::vector<float>{0, 1, 2});  // capturing ran nothing
  const sy_queue queue = device->default_queue().handle();
  for (int k = 0; k < 3; ++k) {
    throw_if_error(device->check(f.graph_launch(device->handle(), queue, graph), "launch"));
  }
  throw_if_error(device->default_queue().dispatch(scalar_call(SY_OP_ADD, *x, 100.0)));
  CHECK(read3(*device, *x) == std::vector<float>{107, 115, 123});
  // A launch on another queue runs after the last one.
  throw_if_error(device->check(f.graph_launch(device->handle(), capture->handle(), graph), "on"));
  throw_if_error(capture->finish());
  CHECK(read3(*device, *x) == std::vector<float>{215, 231, 247});
  f.graph_destroy(device->handle(), graph);
}

TEST_CASE("cuda: graph_update gives a captured call new parameters for later launches",
          "[cuda][gpu][capture]") {
  auto device = gpu();
  if (!device) return;
  const sy_plugin_functions& f = device->functions();
  REQUIRE(f.graph_update != nullptr);
  const auto x = upload3(*device, {0, 1, 2});
  const auto other = upload3(*device, {0, 0, 0});
  const std::shared_ptr<Queue> capture = value_or_throw(device->create_queue());
  sy_graph graph = testing::capture_graph(*device, *capture, double_plus_one(*x));
  const sy_queue queue = device->default_queue().handle();
  const auto launch = [&] {
    throw_if_error(device->check(f.graph_launch(device->handle(), queue, graph), "launch"));
  };
  launch();  // x * 2 + 1
  // The second call (ADD) now adds 10; the launch already enqueued keeps adding 1.
  std::vector<sy_op_call> calls = double_plus_one(*x);
  calls[1].params.binary.scalar = 10.0;
  throw_if_error(device->check(f.graph_update(device->handle(), graph, 1, &calls[1]), "update"));
  CHECK(read3(*device, *x) == std::vector<float>{1, 3, 5});
  launch();
  CHECK(read3(*device, *x) == std::vector<float>{12, 16, 20});
  // A call index beyond the graph's, another op, another tensor: refused, the graph unchanged.
  CHECK(f.graph_update(device->handle(), graph, 2, &calls[1]) == SY_STATUS_INVALID_ARGUMENT);
  CHECK_THAT(f.last_error_message(), Catch::Contains("2 calls were captured"));
  CHECK(f.graph_update(device->handle(), graph, 0, &calls[1]) == SY_STATUS_INVALID_ARGUMENT);
  CHECK_THAT(f.last_error_message(), Catch::Contains("is another op than the captured one"));
  sy_op_call elsewhere = calls[1];
  elsewhere.outputs[0] = f32(*other, 0, {3});
  elsewhere.params.binary.scalar = 1000.0;
  CHECK(f.graph_update(device->handle(), graph, 1, &elsewhere) == SY_STATUS_INVALID_ARGUMENT);
  CHECK_THAT(f.last_error_message(), Catch::Contains("names another tensor as output 0"));
  launch();
  CHECK(read3(*device, *x) == std::vector<float>{34, 42, 50});
  CHECK(read3(*device, *other) == std::vector<float>{0, 0, 0});
  f.graph_destroy(device->handle(), graph);
}

TEST_CASE("cuda: a captured cuBLASLt matmul replays, and a read while capturing spoils a capture",
          "[cuda][gpu][capture]") {
  auto device = gpu({{"matmul", "cublaslt"}});
  if (!device) return;
  const sy_plugin_functions& f = device->functions();
  auto buffer = value_or_throw(device->allocate(24 * sizeof(float)));
  const float a[6] = {1, 2, 3, 4, 5, 6};
  const float b[6] = {7, 8, 9, 10, 11, 12};
  const float zeros[4] = {0, 0, 0, 0};
  Queue& queue = device->default_queue();
  throw_if_error(queue.write(*buffer, 0, a, sizeof(a)));
  throw_if_error(queue.write(*buffer, 24, b, sizeof(b)));
  throw_if_error(queue.write(*buffer, 48, zeros, sizeof(zeros)));
  const auto product = [&](Queue& on) {
    float got[4] = {};
    throw_if_error(on.read(*buffer, 48, got, sizeof(got)));
    return std::vector<float>(got, got + 4);
  };
  const sy_op_call matmul =
      call_of(SY_OP_MATMUL, {f32(*buffer, 0, {2, 3}), f32(*buffer, 24, {3, 2})},
              {f32(*buffer, 48, {2, 2})});
  const std::shared_ptr<Queue> capture = value_or_throw(device->create_queue());
  sy_graph graph = testing::capture_graph(*device, *capture, {matmul});
  CHECK(product(queue) == std::vector<float>(4, 0.0f));  // capturing ran nothing
  throw_if_error(device->check(f.graph_launch(device->handle(), queue.handle(), graph), "launch"));
  CHECK(product(queue) == std::vector<float>{58, 64, 139, 154});
  f.graph_destroy(device->handle(), graph);
  throw_if_error(queue.write(*buffer, 48, zeros, sizeof(zeros)));

  throw_if_error(
      device->check(f.queue_capture_begin(device->handle(), capture->handle()), "begin"));
  CHECK(f.queue_capture_begin(device->handle(), capture->handle()) == SY_STATUS_INVALID_ARGUMENT);
  throw_if_error(capture->dispatch(matmul));
  float ignored[4];
  const Status read = capture->read(*buffer, 0, ignored, sizeof(ignored));
  CHECK(read.code() == StatusCode::kUnimplemented);
  CHECK_THAT(read.message(), Catch::Contains("buffer_read while the queue is capturing"));
  sy_graph spoiled = nullptr;
  CHECK(f.queue_capture_end(device->handle(), capture->handle(), &spoiled) ==
        SY_STATUS_UNIMPLEMENTED);
  CHECK(spoiled == nullptr);
  CHECK(product(queue) == std::vector<float>(4, 0.0f));  // the spoiled capture ran nothing either
  // Not capturing any more: the same queue runs ops again.
  throw_if_error(capture->dispatch(matmul));
  CHECK(product(*capture) == std::vector<float>{58, 64, 139, 154});
}

TEST_CASE("cuda events time a known amount of work", "[cuda][gpu]") {
  auto device = gpu();
  if (!device) return;
  testing::check_event_timing(*device);
}

TEST_CASE("cuda converts f32, f16 and bf16 with the plugins' codec, bit for bit", "[cuda][gpu]") {
  auto device = gpu();
  if (!device) return;
  testing::check_dtype_conversions(*device);
}

}  // namespace
}  // namespace switchyard::cuda_test
