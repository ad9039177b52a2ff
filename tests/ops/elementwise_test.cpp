// Elementwise unary, backward and binary golden values on the reference plugin.
#include <cmath>

#include "ops/op_harness.h"

namespace switchyard::op_test {
namespace {

std::vector<double> unary(sy_op op, const std::vector<double>& x) {
  const Shape shape = {static_cast<int64_t>(x.size())};
  DeviceTensor in = make_f32(shape, x);
  DeviceTensor out = make_zeros(SY_DTYPE_F32, shape);
  REQUIRE(run_op(op, {&in}, {&out}).ok());
  return read_values(out);
}

TEST_CASE("relu keeps positives and zeroes the rest", "[ops][unary]") {
  require_values(unary(SY_OP_RELU, {-1.0, 0.0, 2.5, -0.25}), {0.0, 0.0, 2.5, 0.0}, 0);
}

TEST_CASE("sigmoid at known points", "[ops][unary]") {
  // sigmoid(0) = 1/2; sigmoid(ln 3) = 1 / (1 + 1/3) = 3/4; sigmoid(-ln 3) = 1 / (1 + 3) = 1/4.
  require_values(unary(SY_OP_SIGMOID, {0.0, std::log(3.0), -std::log(3.0)}), {0.5, 0.75, 0.25});
}

TEST_CASE("gelu is the exact erf form", "[ops][unary]") {
  // gelu(1) = 0.5 * (1 + erf(1/sqrt 2)) = 0.5 * 1.6826895 = 0.8413447 (tanh form: 0.8411920).
  require_values(unary(SY_OP_GELU, {0.0, 1.0, -1.0}), {0.0, 0.8413447461, -0.1586552539}, 1e-6);
}

TEST_CASE("sign of both zeros is zero", "[ops][unary]") {
  require_values(unary(SY_OP_SIGN, {-3.0, -0.0, 0.0, 0.001}), {-1.0, 0.0, 0.0, 1.0}, 0);
}

TEST_CASE("relu backward passes the gradient where x > 0 only", "[ops][unary][backward]") {
  DeviceTensor grad_out = make_f32({4}, {10, 20, 30, 40});
  DeviceTensor x = make_f32({4}, {-1, 0, 2, 3});
  DeviceTensor grad_in = make_zeros(SY_DTYPE_F32, {4});
  REQUIRE(run_op(SY_OP_RELU_BACKWARD, {&grad_out, &x}, {&grad_in}).ok());
  require_values(read_values(grad_in), {0, 0, 30, 40}, 0);  // gradient 0 at x = 0
}

TEST_CASE("sigmoid backward is grad * y * (1 - y)", "[ops][unary][backward]") {
  // y = 0.5: 2 * 0.25 = 0.5; y = 0.75: 4 * 0.75 * 0.25 = 0.75.
  DeviceTensor grad_out = make_f32({2}, {2, 4});
  DeviceTensor y = make_f32({2}, {0.5, 0.75});
  DeviceTensor grad_in = make_zeros(SY_DTYPE_F32, {2});
  REQUIRE(run_op(SY_OP_SIGMOID_BACKWARD, {&grad_out, &y}, {&grad_in}).ok());
  require_values(read_values(grad_in), {0.5, 0.75}, 0);
}

TEST_CASE("add broadcasts [2, 1] with [3]", "[ops][binary]") {
  // [[1], [2]] + [10, 20, 30] = [[11, 21, 31], [12, 22, 32]]
  DeviceTensor a = make_f32({2, 1}, {1, 2});
  DeviceTensor b = make_f32({3}, {10, 20, 30});
  DeviceTensor out = make_zeros(SY_DTYPE_F32, {2, 3});
  REQUIRE(run_op(SY_OP_ADD, {&a, &b}, {&out}).ok());
  require_values(read_values(out), {11, 21, 31, 12, 22, 32}, 0);
}

TEST_CASE("sub with use_scalar subtracts the scalar", "[ops][binary]") {
  DeviceTensor a = make_f32({3}, {1, 2, 3});
  DeviceTensor out = make_zeros(SY_DTYPE_F32, {3});
  sy_op_params params = zero_params();
  params.binary.use_scalar = 1;
  params.binary.scalar = 0.5;
  REQUIRE(run_op(SY_OP_SUB, {&a}, {&out}, params).ok());
  require_values(read_values(out), {0.5, 1.5, 2.5}, 0);
}

TEST_CASE("cmp_gt and cmp_eq give 1 or 0", "[ops][binary]") {
  DeviceTensor a = make_f32({3}, {1, 2, 3});
  DeviceTensor b = make_f32({3}, {2, 2, 2});
  DeviceTensor gt = make_zeros(SY_DTYPE_F32, {3});
  DeviceTensor eq = make_zeros(SY_DTYPE_F32, {3});
  REQUIRE(run_op(SY_OP_CMP_GT, {&a, &b}, {&gt}).ok());
  REQUIRE(run_op(SY_OP_CMP_EQ, {&a, &b}, {&eq}).ok());
  require_values(read_values(gt), {0, 0, 1}, 0);
  require_values(read_values(eq), {0, 1, 0}, 0);
}

TEST_CASE("pow and div at known points", "[ops][binary]") {
  DeviceTensor a = make_f32({3}, {2, 9, 1});
  DeviceTensor b = make_f32({3}, {3, 0.5, -2});
  DeviceTensor power = make_zeros(SY_DTYPE_F32, {3});
  DeviceTensor quotient = make_zeros(SY_DTYPE_F32, {3});
  REQUIRE(run_op(SY_OP_POW, {&a, &b}, {&power}).ok());
  REQUIRE(run_op(SY_OP_DIV, {&a, &b}, {&quotient}).ok());
  require_values(read_values(power), {8, 3, 1});  // 2^3, 9^0.5, 1^-2
  require_values(read_values(quotient), {2.0 / 3.0, 18, -0.5});
}

TEST_CASE("add of shapes that do not broadcast is INVALID_ARGUMENT naming both shapes",
          "[ops][binary][errors]") {
  DeviceTensor a = make_f32({2, 3}, {1, 2, 3, 4, 5, 6});
  DeviceTensor b = make_f32({4}, {1, 2, 3, 4});
  DeviceTensor out = make_zeros(SY_DTYPE_F32, {2, 4});
  const Status status = run_op(SY_OP_ADD, {&a, &b}, {&out});
  REQUIRE(status.code() == StatusCode::kInvalidArgument);
  INFO(status.message());
  CHECK(status.message().find("[2, 3]") != std::string::npos);
  CHECK(status.message().find("[4]") != std::string::npos);
}

}  // namespace
}  // namespace switchyard::op_test
