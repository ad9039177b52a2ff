// LAYER_NORM (forward, backward), GATHER and SCATTER_ADD golden values on the reference plugin.
#include <cmath>

#include "ops/op_harness.h"

namespace switchyard::op_test {
namespace {

// x = [1, 2, 3, 4]: mean 2.5, var = (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25,
// rstd = 1 / sqrt(1.25 + 1e-5) = 0.8944236 (1 / sqrt(1.25) = 0.8944272, less 0.5 * 1.25^-1.5 *
// 1e-5).
constexpr double kRstd = 0.8944236;

sy_op_params layer_norm_params() {
  sy_op_params params = zero_params();
  params.layer_norm.normalized_rank = 1;
  params.layer_norm.epsilon = 1e-5;
  return params;
}

TEST_CASE("layer norm of [1, 2, 3, 4] with gamma and beta", "[ops][layer_norm]") {
  DeviceTensor x = make_f32({1, 4}, {1, 2, 3, 4});
  DeviceTensor gamma = make_f32({4}, {1, 1, 2, 2});
  DeviceTensor beta = make_f32({4}, {0, 0, 0, 1});
  DeviceTensor y = make_zeros(SY_DTYPE_F32, {1, 4});
  DeviceTensor mean = make_zeros(SY_DTYPE_F32, {1});
  DeviceTensor rstd = make_zeros(SY_DTYPE_F32, {1});
  REQUIRE(
      run_op(SY_OP_LAYER_NORM, {&x, &gamma, &beta}, {&y, &mean, &rstd}, layer_norm_params()).ok());
  // xhat = [-1.5, -0.5, 0.5, 1.5] * rstd = [-1.3416354, -0.4472118, 0.4472118, 1.3416354];
  // y = xhat * gamma + beta = [-1.3416354, -0.4472118, 0.8944236, 3.6832708].
  require_values(read_values(y), {-1.3416354, -0.4472118, 0.8944236, 3.6832708}, 1e-6);
  require_values(read_values(mean), {2.5}, 0);
  require_values(read_values(rstd), {kRstd}, 1e-6);
}

TEST_CASE("layer norm backward of [1, 2, 3, 4] with grad_y = [1, 0, 0, 0]", "[ops][layer_norm]") {
  // gamma = 1, so g = grad_y; sum(g) = 1; sum(g * xhat) = xhat_0 = -1.5 r.
  // grad_x = r * (g - 1/4 - xhat * (-1.5 r) / 4) = r * (g - 0.25 + 0.375 r^2 (x - 2.5)),
  // with r^2 = 1 / 1.25 (eps is below the tolerance): r * (g - 0.25 + 0.3 (x - 2.5))
  //        = r * [0.3, -0.4, -0.1, 0.2] = [0.2683271, -0.3577694, -0.0894424, 0.1788847].
  DeviceTensor grad_y = make_f32({1, 4}, {1, 0, 0, 0});
  DeviceTensor x = make_f32({1, 4}, {1, 2, 3, 4});
  DeviceTensor mean = make_f32({1}, {2.5});
  DeviceTensor rstd = make_f32({1}, {kRstd});
  DeviceTensor gamma = make_f32({4}, {1, 1, 1, 1});
  DeviceTensor grad_x = make_zeros(SY_DTYPE_F32, {1, 4});
  DeviceTensor grad_gamma = make_zeros(SY_DTYPE_F32, {4});
  DeviceTensor grad_beta = make_zeros(SY_DTYPE_F32, {4});
  REQUIRE(run_op(SY_OP_LAYER_NORM_BACKWARD, {&grad_y, &x, &mean, &rstd, &gamma},
                 {&grad_x, &grad_gamma, &grad_beta}, layer_norm_params())
              .ok());
  require_values(read_values(grad_x), {0.2683271, -0.3577694, -0.0894424, 0.1788847}, 1e-4);
  // grad_gamma = grad_y * xhat = [-1.5 r, 0, 0, 0]; grad_beta = grad_y.
  require_values(read_values(grad_gamma), {-1.3416354, 0, 0, 0}, 1e-6);
  require_values(read_values(grad_beta), {1, 0, 0, 0}, 0);
}

// x = [[1, 2], [3, 4], [5, 6]]
const std::vector<double> kData = {1, 2, 3, 4, 5, 6};

TEST_CASE("gather selects rows with repeats, and columns", "[ops][gather]") {
  DeviceTensor x = make_f32({3, 2}, kData);
  DeviceTensor rows = make_tensor(SY_DTYPE_I64, {3}, {2, 0, 2});
  DeviceTensor out = make_zeros(SY_DTYPE_F32, {3, 2});
  sy_op_params params = zero_params();
  REQUIRE(run_op(SY_OP_GATHER, {&x, &rows}, {&out}, params).ok());
  require_values(read_values(out), {5, 6, 1, 2, 5, 6}, 0);
  DeviceTensor column = make_tensor(SY_DTYPE_I32, {1}, {1});
  DeviceTensor out_column = make_zeros(SY_DTYPE_F32, {3, 1});
  params.index.axis = 1;
  REQUIRE(run_op(SY_OP_GATHER, {&x, &column}, {&out_column}, params).ok());
  require_values(read_values(out_column), {2, 4, 6}, 0);
}

TEST_CASE("scatter_add accumulates into the output, repeated indices add up",
          "[ops][scatter_add]") {
  // out starts as ones; src rows 0 and 2 go to row 2, src row 1 to row 0:
  // out[2] = 1 + [10, 20] + [50, 60] = [61, 81]; out[0] = 1 + [30, 40] = [31, 41]; out[1] stays 1.
  DeviceTensor src = make_f32({3, 2}, {10, 20, 30, 40, 50, 60});
  DeviceTensor indices = make_tensor(SY_DTYPE_I32, {3}, {2, 0, 2});
  DeviceTensor out = make_f32({3, 2}, {1, 1, 1, 1, 1, 1});
  REQUIRE(run_op(SY_OP_SCATTER_ADD, {&src, &indices}, {&out}).ok());
  require_values(read_values(out), {31, 41, 1, 1, 61, 81}, 0);
}

TEST_CASE("scatter_add on integer data", "[ops][scatter_add]") {
  DeviceTensor src = make_tensor(SY_DTYPE_I64, {2}, {5, -7});
  DeviceTensor indices = make_tensor(SY_DTYPE_I64, {2}, {1, 1});
  DeviceTensor out = make_tensor(SY_DTYPE_I64, {3}, {100, 200, 300});
  REQUIRE(run_op(SY_OP_SCATTER_ADD, {&src, &indices}, {&out}).ok());
  require_values(read_values(out), {100, 198, 300}, 0);
}

TEST_CASE("gather with an index out of range is INVALID_ARGUMENT", "[ops][gather][errors]") {
  DeviceTensor x = make_f32({3, 2}, kData);
  DeviceTensor out = make_zeros(SY_DTYPE_F32, {1, 2});
  DeviceTensor too_large = make_tensor(SY_DTYPE_I32, {1}, {3});
  DeviceTensor negative = make_tensor(SY_DTYPE_I64, {1}, {-1});
  const Status status = run_op(SY_OP_GATHER, {&x, &too_large}, {&out});
  REQUIRE(status.code() == StatusCode::kInvalidArgument);
  INFO(status.message());
  CHECK(status.message().find('3') != std::string::npos);
  CHECK(run_op(SY_OP_GATHER, {&x, &negative}, {&out}).code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace switchyard::op_test
