// SGD_UPDATE and ADAM_UPDATE single steps worked out by hand, on the reference plugin.
#include "ops/op_harness.h"

namespace switchyard::op_test {
namespace {

sy_op_params sgd_params(double lr, double momentum, double weight_decay, bool nesterov) {
  sy_op_params params = zero_params();
  params.sgd.lr = lr;
  params.sgd.momentum = momentum;
  params.sgd.weight_decay = weight_decay;
  params.sgd.nesterov = nesterov ? 1u : 0u;
  return params;
}

TEST_CASE("sgd without momentum: param -= lr * grad", "[ops][optimizer][sgd]") {
  // 1 - 0.1 * 0.5 = 0.95; -2 - 0.1 * (-1) = -1.9.
  DeviceTensor param = make_f32({2}, {1.0, -2.0});
  DeviceTensor grad = make_f32({2}, {0.5, -1.0});
  REQUIRE(run_op(SY_OP_SGD_UPDATE, {&param, &grad}, {}, sgd_params(0.1, 0.0, 0.0, false)).ok());
  require_values(read_values(param), {0.95, -1.9});
}

TEST_CASE("sgd with momentum and weight decay, two steps", "[ops][optimizer][sgd]") {
  // Step 1: g = 0.5 + 0.1 * 1 = 0.6; buf = 0.9 * 0 + 0.6 = 0.6; param = 1 - 0.1 * 0.6 = 0.94.
  // Step 2: g = 0.5 + 0.1 * 0.94 = 0.594; buf = 0.9 * 0.6 + 0.594 = 1.134;
  //         param = 0.94 - 0.1 * 1.134 = 0.8266.
  DeviceTensor param = make_f32({1}, {1.0});
  DeviceTensor grad = make_f32({1}, {0.5});
  DeviceTensor buf = make_zeros(SY_DTYPE_F32, {1});
  const sy_op_params params = sgd_params(0.1, 0.9, 0.1, false);
  REQUIRE(run_op(SY_OP_SGD_UPDATE, {&param, &grad, &buf}, {}, params).ok());
  require_values(read_values(param), {0.94});
  require_values(read_values(buf), {0.6});
  REQUIRE(run_op(SY_OP_SGD_UPDATE, {&param, &grad, &buf}, {}, params).ok());
  require_values(read_values(param), {0.8266});
  require_values(read_values(buf), {1.134});
}

TEST_CASE("sgd with nesterov momentum", "[ops][optimizer][sgd]") {
  // g = 0.6 (as above), buf = 0.6, nesterov g = 0.6 + 0.9 * 0.6 = 1.14; param = 1 - 0.114 = 0.886.
  DeviceTensor param = make_f32({1}, {1.0});
  DeviceTensor grad = make_f32({1}, {0.5});
  DeviceTensor buf = make_zeros(SY_DTYPE_F32, {1});
  REQUIRE(
      run_op(SY_OP_SGD_UPDATE, {&param, &grad, &buf}, {}, sgd_params(0.1, 0.9, 0.1, true)).ok());
  require_values(read_values(param), {0.886});
  require_values(read_values(buf), {0.6});
}

TEST_CASE("nesterov without momentum is INVALID_ARGUMENT", "[ops][optimizer][errors]") {
  DeviceTensor param = make_f32({1}, {1.0});
  DeviceTensor grad = make_f32({1}, {0.5});
  CHECK(run_op(SY_OP_SGD_UPDATE, {&param, &grad}, {}, sgd_params(0.1, 0.0, 0.0, true)).code() ==
        StatusCode::kInvalidArgument);
}

sy_op_params adam_params(double weight_decay, bool decoupled, int64_t step) {
  sy_op_params params = zero_params();
  params.adam.lr = 0.1;
  params.adam.beta1 = 0.9;
  params.adam.beta2 = 0.999;
  params.adam.epsilon = 1e-8;
  params.adam.weight_decay = weight_decay;
  params.adam.decoupled_weight_decay = decoupled ? 1u : 0u;
  params.adam.step = step;
  return params;
}

struct AdamState {
  DeviceTensor param = make_f32({1}, {1.0});
  DeviceTensor grad = make_f32({1}, {0.5});
  DeviceTensor m = make_zeros(SY_DTYPE_F32, {1});
  DeviceTensor v = make_zeros(SY_DTYPE_F32, {1});
  Status step(const sy_op_params& params) {
    return run_op(SY_OP_ADAM_UPDATE, {&param, &grad, &m, &v}, {}, params);
  }
};

// The op computes in f32 (docs/ops.md 15), where 1 - f32(0.999) = 0.00099998713 is 1.3e-5 away
// from 0.001 relative, so these checks allow 1e-5 instead of 1e-6.
constexpr double kAdamEpsilon = 1e-5;

TEST_CASE("adam: two steps with bias correction", "[ops][optimizer][adam]") {
  // Step 1: m = 0.1 * 0.5 = 0.05; v = 0.001 * 0.25 = 0.00025; m_hat = 0.05 / 0.1 = 0.5;
  //         v_hat = 0.00025 / 0.001 = 0.25; param = 1 - 0.1 * 0.5 / (0.5 + 1e-8) = 0.9.
  // Step 2: m = 0.045 + 0.05 = 0.095; v = 0.999 * 0.00025 + 0.00025 = 0.00049975;
  //         m_hat = 0.095 / 0.19 = 0.5; v_hat = 0.00049975 / 0.001999 = 0.25; param = 0.8.
  AdamState state;
  REQUIRE(state.step(adam_params(0.0, false, 1)).ok());
  require_values(read_values(state.param), {0.9}, kAdamEpsilon);
  require_values(read_values(state.m), {0.05}, kAdamEpsilon);
  require_values(read_values(state.v), {0.00025}, kAdamEpsilon);
  REQUIRE(state.step(adam_params(0.0, false, 2)).ok());
  require_values(read_values(state.param), {0.8}, kAdamEpsilon);
  require_values(read_values(state.m), {0.095}, kAdamEpsilon);
  require_values(read_values(state.v), {0.00049975}, kAdamEpsilon);
}

TEST_CASE("adam adds weight decay to the gradient, adamw decays the parameter",
          "[ops][optimizer][adam]") {
  // Adam, wd 0.1: g = 0.5 + 0.1 = 0.6; m = 0.06, v = 0.00036; m_hat = 0.6, v_hat = 0.36;
  //               param = 1 - 0.1 * 0.6 / 0.6 = 0.9.
  AdamState adam;
  REQUIRE(adam.step(adam_params(0.1, false, 1)).ok());
  require_values(read_values(adam.param), {0.9}, kAdamEpsilon);
  require_values(read_values(adam.m), {0.06}, kAdamEpsilon);
  require_values(read_values(adam.v), {0.00036}, kAdamEpsilon);
  // AdamW, wd 0.1: param = 1 * (1 - 0.1 * 0.1) = 0.99, then the Adam step of 0.1: 0.89.
  AdamState adamw;
  REQUIRE(adamw.step(adam_params(0.1, true, 1)).ok());
  require_values(read_values(adamw.param), {0.89}, kAdamEpsilon);
  require_values(read_values(adamw.m), {0.05}, kAdamEpsilon);
}

TEST_CASE("adam with step 0 is INVALID_ARGUMENT", "[ops][optimizer][errors]") {
  AdamState state;
  CHECK(state.step(adam_params(0.0, false, 0)).code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace switchyard::op_test
