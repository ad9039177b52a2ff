// The onednn plugin's device, options, memory pool and op support matrix.
#include "onednn/onednn_test_support.h"
#include "switchyard/buffer.h"

namespace switchyard::onednn_test {
namespace {

TEST_CASE("onednn reports one CPU device with its ISA and memory", "[onednn][device]") {
  auto plugin = onednn_plugin();
  REQUIRE(plugin->device_count().value() == 1);
  DeviceInfo info = plugin->device_info(0).value();
  CHECK(info.type == DeviceType::kCpu);
  CHECK_FALSE(info.name.empty());
  CHECK(info.details.find("ISA ") != std::string::npos);
  CHECK(info.driver_version.rfind("oneDNN ", 0) == 0);
  CHECK(info.memory_total_bytes > info.memory_free_bytes);
  CHECK(info.memory_free_bytes > 0);
  CHECK(info.compute_units >= 1);
  CHECK((plugin->capabilities() & SY_CAP_HOST_MEMORY) != 0);
  CHECK_FALSE(plugin->device_info(1).ok());
}

TEST_CASE("onednn rejects unknown and malformed options by name", "[onednn][device]") {
  auto unknown = make_onednn({{"tf32", "1"}});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().code() == StatusCode::kInvalidArgument);
  CHECK(unknown.status().message().find("'tf32'") != std::string::npos);

  auto bad_threads = make_onednn({{"threads", "two"}});
  REQUIRE_FALSE(bad_threads.ok());
  CHECK(bad_threads.status().message().find("threads") != std::string::npos);

  auto zero_threads = make_onednn({{"threads", "0"}});
  CHECK_FALSE(zero_threads.ok());

  auto bad_fraction = make_onednn({{"memory_fraction", "1.5"}});
  REQUIRE_FALSE(bad_fraction.ok());
  CHECK(bad_fraction.status().message().find("memory_fraction") != std::string::npos);

  auto bad_adaptive = make_onednn({{"adaptive_threads", "maybe"}});
  REQUIRE_FALSE(bad_adaptive.ok());
  CHECK(bad_adaptive.status().message().find("adaptive_threads") != std::string::npos);

  CHECK(make_onednn({{"threads", "1"}, {"memory_limit_bytes", "1000000"}}).ok());
  CHECK(make_onednn({{"threads", "2"}, {"adaptive_threads", "false"}}).ok());
}

TEST_CASE("onednn reports its settings; deterministic turns adaptive threading off",
          "[onednn][device]") {
  auto plain = make_onednn({{"threads", "2"}}).value();
  CHECK(plain->settings() == "threads=2 adaptive_threads=on deterministic=off fpmath=strict");
  // Asked for adaptive threading too: deterministic wins, and the line says so.
  auto deterministic = make_onednn({{"threads", "2"},
                                    {"adaptive_threads", "true"},
                                    {"deterministic", "true"},
                                    {"fpmath", "bf16"}})
                           .value();
  CHECK(deterministic->settings() == "threads=2 adaptive_threads=off deterministic=on fpmath=bf16");
  CHECK(make_onednn({{"fpmath", "any"}}).value()->settings().find("fpmath=any") !=
        std::string::npos);

  auto bad_fpmath = make_onednn({{"fpmath", "tf32"}});
  REQUIRE_FALSE(bad_fpmath.ok());
  CHECK(bad_fpmath.status().message().find("'fpmath' must be strict, bf16, f16 or any, got "
                                           "'tf32'") != std::string::npos);
  auto bad_deterministic = make_onednn({{"deterministic", "maybe"}});
  REQUIRE_FALSE(bad_deterministic.ok());
  CHECK(bad_deterministic.status().message().find("deterministic") != std::string::npos);
}

TEST_CASE("onednn memory_limit_bytes caps allocations with a message naming the sizes",
          "[onednn][memory]") {
  auto device = make_onednn({{"memory_limit_bytes", "1000000"}}).value();
  CHECK(device->memory_stats().value().limit_bytes == 1000000);
  auto first = device->allocate(600000);
  REQUIRE(first.ok());
  auto second = device->allocate(600000);
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == StatusCode::kResourceExhausted);
  const std::string message = second.status().message();
  CHECK(message.find("600000") != std::string::npos);   // requested
  CHECK(message.find("1000000") != std::string::npos);  // cap
  CHECK(message.find("in use") != std::string::npos);
  first.value().reset();
  // The freed block is cached, and a request of the same size reuses it under the cap.
  CHECK(device->allocate(600000).ok());
}

TEST_CASE("onednn memory_fraction sets a cap below total memory", "[onednn][memory]") {
  auto device = make_onednn({{"memory_fraction", "0.25"}}).value();
  const uint64_t limit = device->memory_stats().value().limit_bytes;
  CHECK(limit > 0);
  CHECK(limit <= device->info().memory_total_bytes / 4 + 1);
}

TEST_CASE("onednn pool statistics track allocations, peak, cache and cap", "[onednn][memory]") {
  auto device = make_onednn({}).value();
  MemoryStats empty = device->memory_stats().value();
  CHECK(empty.allocated_bytes == 0);
  CHECK(empty.allocation_count == 0);
  {
    auto a = device->allocate(100000).value();
    auto b = device->allocate(5000).value();
    MemoryStats live = device->memory_stats().value();
    CHECK(live.allocation_count == 2);
    CHECK(live.allocated_bytes >= 105000);
    CHECK(live.reserved_bytes >= live.allocated_bytes);
    CHECK(live.peak_allocated_bytes == live.allocated_bytes);
    REQUIRE(a->host_address() != nullptr);
    static_cast<char*>(a->host_address())[99999] = 1;  // the whole buffer is addressable
  }
  MemoryStats freed = device->memory_stats().value();
  CHECK(freed.allocated_bytes == 0);
  CHECK(freed.reserved_bytes >= 105000);  // cached
  CHECK(freed.peak_allocated_bytes >= 105000);
  REQUIRE(device->empty_cache().ok());
  CHECK(device->memory_stats().value().reserved_bytes == 0);
  REQUIRE(device->reset_peak_memory().ok());
  CHECK(device->memory_stats().value().peak_allocated_bytes == 0);
  REQUIRE(device->set_memory_limit(4096).ok());
  auto over = device->allocate(8192);
  CHECK(over.status().code() == StatusCode::kResourceExhausted);
  REQUIRE(device->set_memory_limit(0).ok());
  CHECK(device->allocate(8192).ok());
}

TEST_CASE("onednn supports every op in f32, bf16 and f16, and integers where defined",
          "[onednn][device]") {
  Device& device = onednn();
  for (uint32_t op = 0; op < SY_OP_COUNT; ++op) {
    INFO("op " << op);
    for (sy_dtype dtype : kFloatDtypes) CHECK(device.supports(static_cast<sy_op>(op), dtype));
    const bool integer_ok =
        op == SY_OP_COPY || op == SY_OP_FILL || op == SY_OP_GATHER || op == SY_OP_SCATTER_ADD;
    CHECK(device.supports(static_cast<sy_op>(op), SY_DTYPE_I32) == integer_ok);
    CHECK(device.supports(static_cast<sy_op>(op), SY_DTYPE_I64) == integer_ok);
  }
}

TEST_CASE("onednn rejects a tensor that does not fit its buffer, naming the sizes",
          "[onednn][device]") {
  OpCase op_case = conformance::make_op_case(SY_OP_RELU, {random(SY_DTYPE_F32, {4, 4}, 1)},
                                             {conformance::zeros(SY_DTYPE_F32, {4, 4})});
  // The output claims 5 rows over storage for 4.
  op_case.outputs[0].shape = {5, 4};
  op_case.inputs[0].shape = {5, 4};
  Status status = run_onednn(op_case);
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.message().find("RELU") != std::string::npos);
  CHECK(status.message().find("past its buffer") != std::string::npos);
}

}  // namespace
}  // namespace switchyard::onednn_test
