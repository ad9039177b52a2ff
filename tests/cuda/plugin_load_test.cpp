// The cuda plugin loads and describes itself on any machine, and without the NVIDIA driver it
// reports UNAVAILABLE with the dynamic linker's reason instead of failing to load.
#include <catch2/catch.hpp>

#include "backend_support.h"
#include "cuda_test_support.h"

namespace switchyard::cuda_test {
namespace {

TEST_CASE("cuda plugin loads through the runtime and describes itself", "[cuda]") {
  if (!plugin_built()) {
    testing::skip_backend("cuda", plugin_path() +
                                      " was not built here (nvcc or cuda.h missing at configure "
                                      "time)");
    return;
  }
  auto plugin = cuda_plugin();
  CHECK(plugin->name() == "cuda");
  CHECK((plugin->capabilities() & SY_CAP_ASYNC) != 0);
  CHECK((plugin->capabilities() & SY_CAP_DEVICE_TIMING) != 0);
  CHECK((plugin->capabilities() & SY_CAP_HOST_MEMORY) == 0);
  const sy_plugin_functions& f = plugin->functions();
  CHECK(f.buffer_host_address == nullptr);
  CHECK(f.event_elapsed_ms != nullptr);
  CHECK(f.memory_set_limit != nullptr);
  CHECK(std::string(f.last_error_message()).empty());
}

TEST_CASE("cuda device_count says why the driver is unusable", "[cuda]") {
  if (!plugin_built()) return;
  auto plugin = cuda_plugin();
  auto count = plugin->device_count();
  if (driver_present()) {
    // A machine with the driver: either devices, or a cuInit error naming its CUDA_ERROR code.
    if (count.ok()) {
      CHECK(count.value() >= 1);
    } else {
      CHECK(count.status().code() == StatusCode::kUnavailable);
      CHECK_THAT(count.status().message(), Catch::Contains("CUDA_ERROR_"));
    }
    return;
  }
  REQUIRE_FALSE(count.ok());
  CHECK(count.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(count.status().message(), Catch::Contains("libcuda.so.1"));
  CHECK_THAT(count.status().message(), Catch::Contains("cannot open shared object file"));
  CHECK_THAT(count.status().message(), Catch::Contains("NVIDIA driver is not installed"));
  // Every device entry point gives the same reason.
  auto info = plugin->device_info(0);
  REQUIRE_FALSE(info.ok());
  CHECK(info.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(info.status().message(), Catch::Contains("libcuda.so.1"));
  auto device = Device::create(plugin, 0);
  REQUIRE_FALSE(device.ok());
  CHECK_THAT(device.status().message(), Catch::Contains("libcuda.so.1"));
}

TEST_CASE("cuda device options are checked before the driver is needed", "[cuda]") {
  if (!plugin_built()) return;
  const sy_plugin_functions& f = cuda_plugin()->functions();
  sy_device device = nullptr;
  const sy_option unknown[] = {{"threads", "2"}};
  CHECK(f.device_create(0, unknown, 1, &device) == SY_STATUS_INVALID_ARGUMENT);
  CHECK_THAT(f.last_error_message(), Catch::Contains("unknown cuda option 'threads'"));
  CHECK_THAT(f.last_error_message(), Catch::Contains("tf32, memory_limit_bytes, memory_fraction"));
  const sy_option bad_bool[] = {{"tf32", "maybe"}};
  CHECK(f.device_create(0, bad_bool, 1, &device) == SY_STATUS_INVALID_ARGUMENT);
  CHECK_THAT(f.last_error_message(), Catch::Contains("'maybe' is not a boolean"));
  const sy_option bad_fraction[] = {{"memory_fraction", "1.5"}};
  CHECK(f.device_create(0, bad_fraction, 1, &device) == SY_STATUS_INVALID_ARGUMENT);
  CHECK_THAT(f.last_error_message(), Catch::Contains("not a number in (0, 1]"));
  const sy_option bad_bytes[] = {{"memory_limit_bytes", "-5"}};
  CHECK(f.device_create(0, bad_bytes, 1, &device) == SY_STATUS_INVALID_ARGUMENT);
  const sy_option bad_deterministic[] = {{"deterministic", "maybe"}};
  CHECK(f.device_create(0, bad_deterministic, 1, &device) == SY_STATUS_INVALID_ARGUMENT);
  CHECK_THAT(f.last_error_message(), Catch::Contains("deterministic: 'maybe'"));
  const sy_option bad_path[] = {{"matmul", "cublas"}};
  CHECK(f.device_create(0, bad_path, 1, &device) == SY_STATUS_INVALID_ARGUMENT);
  CHECK_THAT(f.last_error_message(),
             Catch::Contains("cuda option matmul: 'cublas' is not auto, cublaslt or kernel"));
  CHECK(device == nullptr);
  // The ABI's standard option is accepted: without a driver the call gets as far as the driver.
  if (!driver_present()) {
    const sy_option deterministic[] = {{"deterministic", "true"}, {"tf32", "true"}};
    CHECK(f.device_create(0, deterministic, 2, &device) == SY_STATUS_UNAVAILABLE);
    CHECK(device == nullptr);
  }
  CHECK(f.device_settings != nullptr);
}

TEST_CASE(
    "cuda supports every op but GRU_SEQUENCE, attention (and LSTM_SEQUENCE outside f32) in floats, "
    "the data ops in integers",
    "[cuda]") {
  if (!plugin_built()) return;
  const sy_plugin_functions& f = cuda_plugin()->functions();
  for (uint32_t op = 0; op < SY_OP_COUNT; ++op) {
    INFO("op " << op);
    // docs/ops.md section 17: the core composes GRU_SEQUENCE on cuda, and LSTM_SEQUENCE in f16
    // and bf16 (the plugin runs it in f32).
    // Section 18: attention is not written for cuda yet; the core composes it. Nor are the LSTM's
    // and GRU's backward ops (section 17): training composes the sequence.
    const bool composed = op == SY_OP_LSTM_SEQUENCE || op == SY_OP_GRU_SEQUENCE ||
                          op == SY_OP_SCALED_DOT_PRODUCT_ATTENTION ||
                          op == SY_OP_SCALED_DOT_PRODUCT_ATTENTION_BACKWARD ||
                          op == SY_OP_LSTM_SEQUENCE_BACKWARD || op == SY_OP_GRU_SEQUENCE_BACKWARD;
    const int floats = composed ? 0 : 1;
    CHECK(f.supports_op(nullptr, op, SY_DTYPE_F32) == (op == SY_OP_LSTM_SEQUENCE ? 1 : floats));
    CHECK(f.supports_op(nullptr, op, SY_DTYPE_F16) == floats);
    CHECK(f.supports_op(nullptr, op, SY_DTYPE_BF16) == floats);
    const bool integer_op =
        op == SY_OP_GATHER || op == SY_OP_SCATTER_ADD || op == SY_OP_COPY || op == SY_OP_FILL;
    CHECK(f.supports_op(nullptr, op, SY_DTYPE_I32) == (integer_op ? 1 : 0));
    CHECK(f.supports_op(nullptr, op, SY_DTYPE_I64) == (integer_op ? 1 : 0));
  }
  CHECK(f.supports_op(nullptr, SY_OP_COUNT, SY_DTYPE_F32) == 0);
  CHECK(f.supports_op(nullptr, SY_OP_ADD, SY_DTYPE_COUNT) == 0);
}

}  // namespace
}  // namespace switchyard::cuda_test
