// The fallback policy and the op observer. A device that lacks ops comes from the "twin" fixture
// plugin, which supports only f32 add and matmul (and computes nothing); its buffers are plain
// host memory, so values moved to it and back can be checked.
#include <catch2/catch.hpp>
#include <filesystem>

#include "switchyard/config.h"
#include "switchyard/dispatch.h"
#include "switchyard/ops.h"
#include "switchyard/optim.h"
#include "switchyard/plugin.h"
#include "switchyard/status.h"
#include "tensor/tensor_test_support.h"

using namespace switchyard;
using switchyard::testing::check_values;
using switchyard::testing::tensor_of;
using switchyard::testing::test_device;

namespace {

std::shared_ptr<Device> limited_device() {
  const std::string path = switchyard::testing::fixture_dir("twin-a") + "/libswitchyard-twin.so";
  if (!std::filesystem::exists(path)) return nullptr;
  return value_or_throw(Device::create(value_or_throw(Plugin::load(path)), 0));
}

// Sets `device`'s fallback for one test and restores the default whatever the test does (the
// reference test device is shared by every test in this executable).
struct FallbackScope {
  FallbackScope(Device& configured, FallbackPolicy policy, std::shared_ptr<Device> fallback)
      : device(configured) {
    device.set_fallback(policy, std::move(fallback));
    device.reset_fallback_counts();
  }
  ~FallbackScope() {
    device.set_fallback(FallbackPolicy::kWarn, nullptr);
    device.reset_fallback_counts();
  }
  Device& device;
};

}  // namespace

TEST_CASE("an op the device lacks runs on the fallback device and is counted", "[dispatch]") {
  const std::shared_ptr<Device> limited = limited_device();
  if (limited == nullptr) {
    FAIL(
        "the twin fixture plugin is not built (target switchyard_fixtures), which every test "
        "build makes: the build is broken");
  }
  REQUIRE_FALSE(limited->supports(SY_OP_RELU, SY_DTYPE_F32));
  FallbackScope scope(*limited, FallbackPolicy::kSilent, test_device());
  const Tensor x = Tensor::from_host({-1, 2, -3, 4}, {4}, limited);
  const Tensor y = relu(x);
  CHECK(y.device() == limited);
  check_values(y, {0, 2, 0, 4});
  const std::vector<FallbackCount> counts = limited->fallback_counts();
  REQUIRE(counts.size() == 1);
  CHECK(counts[0].op == "relu");
  CHECK(counts[0].dtype == "f32");
  CHECK(counts[0].backend == "twin");
  CHECK(counts[0].calls == 1);
  CHECK(counts[0].copies == 2);  // the input there, the output back
  CHECK(counts[0].bytes_copied == 32);
  // A strided view travels with its layout, and an in-place update comes back.
  const Tensor grad = Tensor::from_host({10, 20, 30, 40}, {2, 2}, limited).t();
  check_values(relu(grad), {10, 30, 20, 40});
  Tensor param = Tensor::from_host({1, 2, 3, 4}, {2, 2}, limited).set_requires_grad();
  param.set_grad(grad);
  Sgd sgd({param}, SgdOptions{0.1, 0.5, 0.0, 0.0, false});  // zero buffers: FILL falls back too
  sgd.step();
  check_values(param, {0, -1, 1, 0});
  check_values(sgd.state_dict()[0].second, {10, 30, 20, 40});
  CHECK(limited->fallback_calls() == 4);        // relu, relu, fill, sgd_update
  CHECK(test_device()->fallback_calls() == 0);  // counted on the device that lacked the ops
}

TEST_CASE("fallback policy 'error' names the op, dtype and backend", "[dispatch]") {
  const std::shared_ptr<Device> limited = limited_device();
  if (limited == nullptr) {
    FAIL(
        "the twin fixture plugin is not built (target switchyard_fixtures), which every test "
        "build makes: the build is broken");
  }
  FallbackScope scope(*limited, FallbackPolicy::kError, test_device());
  const Tensor x = Tensor::from_host({1, 2}, {2}, limited);
  CHECK_THROWS_WITH(sigmoid(x), Catch::Contains("'sigmoid'") && Catch::Contains("f32") &&
                                    Catch::Contains("'twin'") && Catch::Contains("'error'"));
  CHECK(limited->fallback_calls() == 0);
}

TEST_CASE("each device has its own fallback policy and counts", "[dispatch]") {
  // Two runs in one process (two embedded trainers, say) must not see each other's policy.
  const std::shared_ptr<Device> strict = limited_device();
  const std::shared_ptr<Device> lenient = limited_device();
  if (strict == nullptr || lenient == nullptr) {
    FAIL(
        "the twin fixture plugin is not built (target switchyard_fixtures), which every test "
        "build makes: the build is broken");
  }
  REQUIRE(strict != lenient);
  FallbackScope strict_scope(*strict, FallbackPolicy::kError, test_device());
  FallbackScope lenient_scope(*lenient, FallbackPolicy::kSilent, test_device());
  CHECK(strict->fallback_policy() == FallbackPolicy::kError);
  CHECK(lenient->fallback_policy() == FallbackPolicy::kSilent);
  CHECK(lenient->fallback_device() == test_device());
  check_values(relu(Tensor::from_host({-1, 2}, {2}, lenient)), {0, 2});
  CHECK_THROWS_WITH(relu(Tensor::from_host({-1, 2}, {2}, strict)), Catch::Contains("'error'"));
  check_values(relu(Tensor::from_host({-3, 4}, {2}, lenient)), {0, 4});
  CHECK(lenient->fallback_calls() == 2);
  CHECK(strict->fallback_calls() == 0);
  lenient->reset_fallback_counts();
  CHECK(lenient->fallback_counts().empty());
}

TEST_CASE("without a fallback device a missing op is an error that says so", "[dispatch]") {
  FallbackScope scope(*test_device(), FallbackPolicy::kWarn, nullptr);
  // The reference backend computes only float dtypes: an i32 add has no implementation.
  const Tensor a = Tensor::from_host(std::vector<int32_t>{1, 2}, {2}, test_device());
  try {
    (void)(a + a);
    FAIL("an i32 add on the reference backend should have thrown");
  } catch (const Error& error) {
    CHECK(error.status().code() == StatusCode::kUnimplemented);
    CHECK_THAT(error.what(), Catch::Contains("'add'") && Catch::Contains("i32") &&
                                 Catch::Contains("'reference'") &&
                                 Catch::Contains("no fallback device"));
  }
}

namespace {

class CountingObserver : public OpObserver {
 public:
  void on_op_begin(const OpEvent& event) override {
    ++begins;
    last_name = event.name;
    last_rank = event.call->outputs[0].rank;
  }
  void on_op_end(const OpEvent&) override { ++ends; }
  int begins = 0;
  int ends = 0;
  std::string last_name;
  uint32_t last_rank = 0;
};

}  // namespace

TEST_CASE("an observer sees every dispatched op with its call", "[dispatch]") {
  CountingObserver observer;
  const Tensor a = tensor_of({1, 2, 3, 4}, {2, 2});
  const uint64_t before = dispatched_op_count();
  set_op_observer(&observer);
  const Tensor b = matmul(a, a);
  set_op_observer(nullptr);
  (void)(a + a);
  CHECK(observer.begins == 1);
  CHECK(observer.ends == 1);
  CHECK(observer.last_name == "matmul");
  CHECK(observer.last_rank == 2);
  CHECK(dispatched_op_count() - before == 2);
  CHECK(std::string(op_name(SY_OP_LAYER_NORM_BACKWARD)) == "layer_norm_backward");
}
