// Hostile ONNX files, built here rather than committed: every size a model declares (its inputs'
// and outputs' extents, its initializers) is checked against the memory budget
// (runtime/memory_budget.h: the host's physical memory, or a device's memory limit) before
// anything of that size is made, and the refusal names the file. Nothing here allocates what the
// files declare: each refusal comes within a second.
#include <catch2/catch.hpp>

#include <chrono>

#include "onnx/onnx_test_support.h"
#include "switchyard/device.h"
#include "switchyard/onnx.h"
#include "switchyard/ops.h"
#include "test_support.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

// Writes `model` to `path` and loads it on `device`; the refusal's status (a load that succeeds
// fails the test). The refusal must come quickly: before anything of the declared size exists.
Status refusal(const std::filesystem::path& path, const onnx::ModelProto& model,
               const std::shared_ptr<Device>& device) {
  write_model(path, model);
  const auto start = std::chrono::steady_clock::now();
  Status status;
  try {
    OnnxModel::load(path, device);
  } catch (const Error& error) {
    status = error.status();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 1.0);
  INFO(status.message());
  CHECK_FALSE(status.ok());
  CHECK_THAT(status.message(), Catch::Contains(path.string()));
  return status;
}

}  // namespace

TEST_CASE("declared extents beyond the memory budget are refused at load, naming the file",
          "[onnx][errors][limits]") {
  const auto device = test_device();
  TempDir dir;
  const auto path = dir / "huge.onnx";
  SECTION("an input extent of 2^40: 4 TiB for one sample") {
    const Status status = refusal(path, identity_model({-1, int64_t{1} << 40}), device);
    CHECK(status.code() == StatusCode::kResourceExhausted);
    CHECK_THAT(status.message(),
               Catch::Contains("4.0 TiB (4398046511104 bytes) for one sample of input 'x' "
                               "(float [batch, 1099511627776] as declared) exceed the memory "
                               "budget of ") &&
                   Catch::Contains("the host's physical memory"));
  }
  SECTION("an input extent of 2^62, whose bytes do not fit 64 bits") {
    const Status status = refusal(path, identity_model({-1, int64_t{1} << 62}), device);
    CHECK(status.code() == StatusCode::kResourceExhausted);
    CHECK_THAT(status.message(),
               Catch::Contains("one sample of input 'x' (float [batch, 4611686018427387904] as "
                               "declared) needs more than 2^64 bytes"));
  }
  SECTION("extents whose product overflows") {
    const int64_t big = int64_t{1} << 31;
    const Status status =
        refusal(path, identity_model({-1, big, big, big}, onnx::TensorProto::INT64), device);
    CHECK(status.code() == StatusCode::kResourceExhausted);
    CHECK_THAT(status.message(), Catch::Contains("needs more than 2^64 bytes"));
  }
  SECTION("an output extent of 2^40") {
    onnx::ModelProto model = identity_model({-1, 3});
    model.mutable_graph()
        ->mutable_output(0)
        ->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->mutable_dim(1)
        ->set_dim_value(int64_t{1} << 40);
    const Status status = refusal(path, model, device);
    CHECK(status.code() == StatusCode::kResourceExhausted);
    CHECK_THAT(status.message(), Catch::Contains("for one sample of output 'y'"));
  }
}

TEST_CASE("a device's memory limit is the budget of the inputs and initializers it will hold",
          "[onnx][errors][limits]") {
  // A device of its own: the limit must not reach the other tests' device.
  auto plugin = value_or_throw(Plugin::load(plugin_file("reference")));
  const auto device = value_or_throw(Device::create(plugin, 0));
  REQUIRE(device->set_memory_limit(uint64_t{1} << 20).ok());
  TempDir dir;
  const auto path = dir / "limited.onnx";
  // 4 MiB for one sample of [batch, 2^20] floats.
  const Status input = refusal(path, identity_model({-1, int64_t{1} << 20}), device);
  CHECK(input.code() == StatusCode::kResourceExhausted);
  CHECK_THAT(input.message(),
             Catch::Contains("for one sample of input 'x'") &&
                 Catch::Contains("exceed the memory budget of 1.0 MiB (1048576 bytes), the "
                                 "memory limit of reference:0"));
  // An initializer of 300000 floats (1.1 MiB) that the file does hold.
  onnx::ModelProto model = identity_model({-1, 3});
  auto* weight = model.mutable_graph()->add_initializer();
  weight->set_name("w");
  weight->set_data_type(onnx::TensorProto::FLOAT);
  weight->add_dims(300000);
  weight->set_raw_data(std::string(300000 * sizeof(float), '\0'));
  const Status initializer = refusal(path, model, device);
  CHECK(initializer.code() == StatusCode::kResourceExhausted);
  CHECK_THAT(initializer.message(),
             Catch::Contains("for initializer 'w' (float [300000]) exceed the memory budget of "
                             "1.0 MiB"));
  // Within the limit the same device loads and runs the model.
  const auto small = dir / "small.onnx";
  write_model(small, identity_model({-1, 3}));
  const auto loaded = OnnxModel::load(small, device);
  CHECK(loaded->run({zeros(Shape{2, 3}, device)})[0].shape() == Shape{2, 3});
}

TEST_CASE("an input of rank over 8 is refused naming the file and the input",
          "[onnx][errors][limits]") {
  TempDir dir;
  std::vector<int64_t> dims(101, 1);
  dims[0] = -1;
  const Status status = refusal(dir / "rank101.onnx", identity_model(dims), test_device());
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(status.message(),
             Catch::Contains("input 'x' has rank 101, more than the 8 axes a switchyard tensor "
                             "has"));
}

TEST_CASE("external data is read only when it is exactly the tensor's size",
          "[onnx][errors][limits]") {
  TempDir dir;
  // 1 MiB of external data for an initializer of one float: refused before it is read.
  write_bytes(dir / "weights.bin", std::vector<uint8_t>(size_t{1} << 20, 0));
  onnx::ModelProto model = identity_model({-1, 3});
  auto* weight = model.mutable_graph()->add_initializer();
  weight->set_name("w");
  weight->set_data_type(onnx::TensorProto::FLOAT);
  weight->add_dims(1);
  weight->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* location = weight->add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  const Status status = refusal(dir / "external.onnx", model, test_device());
  CHECK(status.code() == StatusCode::kDataLoss);
  CHECK_THAT(status.message(),
             Catch::Contains("initializer 'w' needs 4 bytes but its external data in ") &&
                 Catch::Contains("weights.bin holds 1048576"));
}
