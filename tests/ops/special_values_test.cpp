// NaN, infinity and empty-tensor rules of docs/ops.md, checked on the reference plugin. The
// conformance suite keeps its inputs finite, so these rules are pinned down here.
#include <cmath>
#include <limits>

#include "ops/op_harness.h"

namespace switchyard::op_test {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

std::vector<double> unary(sy_op op, const std::vector<double>& x) {
  const Shape shape = {static_cast<int64_t>(x.size())};
  DeviceTensor in = make_f32(shape, x);
  DeviceTensor out = make_zeros(SY_DTYPE_F32, shape);
  REQUIRE(run_op(op, {&in}, {&out}).ok());
  return read_values(out);
}

TEST_CASE("unary ops at NaN, zero and negative inputs follow IEEE and docs/ops.md",
          "[ops][special]") {
  CHECK(std::isnan(unary(SY_OP_RELU, {kNaN})[0]));
  CHECK(unary(SY_OP_LOG, {0.0})[0] == -kInf);
  CHECK(std::isnan(unary(SY_OP_LOG, {-1.0})[0]));
  CHECK(std::isnan(unary(SY_OP_SQRT, {-1.0})[0]));
}

TEST_CASE("sign of NaN and of both zeros is +0, as in PyTorch", "[ops][special]") {
  const std::vector<double> out = unary(SY_OP_SIGN, {kNaN, -0.0, 0.0});
  for (double value : out) {
    CHECK(value == 0.0);
    CHECK_FALSE(std::signbit(value));
  }
}

TEST_CASE("comparisons with NaN are false", "[ops][special]") {
  DeviceTensor a = make_f32({2}, {kNaN, 1.0});
  DeviceTensor b = make_f32({2}, {1.0, kNaN});
  DeviceTensor out = make_zeros(SY_DTYPE_F32, {2});
  REQUIRE(run_op(SY_OP_CMP_GT, {&a, &b}, {&out}).ok());
  require_values(read_values(out), {0, 0}, 0);
  REQUIRE(run_op(SY_OP_CMP_EQ, {&a, &a}, {&out}).ok());
  require_values(read_values(out), {0, 1}, 0);  // NaN != NaN
}

TEST_CASE("max pooling propagates NaN and routes its gradient to the first NaN", "[ops][special]") {
  // One 2x2 window [[1, NaN], [NaN, 5]]: y = NaN; the gradient goes to (0, 1).
  DeviceTensor x = make_f32({1, 1, 2, 2}, {1.0, kNaN, kNaN, 5.0});
  DeviceTensor y = make_zeros(SY_DTYPE_F32, {1, 1, 1, 1});
  sy_op_params params = zero_params();
  params.pool2d.kernel_h = params.pool2d.kernel_w = 2;
  params.pool2d.stride_h = params.pool2d.stride_w = 2;
  REQUIRE(run_op(SY_OP_MAX_POOL2D, {&x}, {&y}, params).ok());
  CHECK(std::isnan(read_values(y)[0]));
  DeviceTensor grad_y = make_f32({1, 1, 1, 1}, {3.0});
  DeviceTensor grad_x = make_zeros(SY_DTYPE_F32, {1, 1, 2, 2});
  REQUIRE(run_op(SY_OP_MAX_POOL2D_BACKWARD, {&grad_y, &x}, {&grad_x}, params).ok());
  require_values(read_values(grad_x), {0, 3, 0, 0}, 0);
}

TEST_CASE("binary max/min propagate NaN; div by zero is infinite", "[ops][special]") {
  DeviceTensor a = make_f32({3}, {1.0, kNaN, 0.0});
  DeviceTensor b = make_f32({3}, {kNaN, 2.0, 0.0});
  DeviceTensor out = make_zeros(SY_DTYPE_F32, {3});
  REQUIRE(run_op(SY_OP_MAX, {&a, &b}, {&out}).ok());
  std::vector<double> values = read_values(out);
  CHECK(std::isnan(values[0]));
  CHECK(std::isnan(values[1]));
  CHECK(values[2] == 0.0);
  REQUIRE(run_op(SY_OP_MIN, {&a, &b}, {&out}).ok());
  values = read_values(out);
  CHECK(std::isnan(values[0]));
  CHECK(std::isnan(values[1]));
  DeviceTensor numerator = make_f32({3}, {1.0, -1.0, 0.0});
  DeviceTensor zero = make_f32({3}, {0.0, 0.0, 0.0});
  REQUIRE(run_op(SY_OP_DIV, {&numerator, &zero}, {&out}).ok());
  values = read_values(out);
  CHECK(values[0] == kInf);
  CHECK(values[1] == -kInf);
  CHECK(std::isnan(values[2]));  // 0 / 0
}

TEST_CASE("argmax takes the first NaN as the maximum; reduce_max returns NaN", "[ops][special]") {
  // [1, NaN, 3, NaN]: the NaN at index 1 beats 3 and the later NaN.
  DeviceTensor x = make_f32({4}, {1.0, kNaN, 3.0, kNaN});
  DeviceTensor index = make_zeros(SY_DTYPE_I64, {});
  DeviceTensor maximum = make_zeros(SY_DTYPE_F32, {});
  sy_op_params params = zero_params();
  params.reduce.axes_mask = 1;
  REQUIRE(run_op(SY_OP_ARGMAX, {&x}, {&index}, params).ok());
  CHECK(read_values(index)[0] == 1.0);
  REQUIRE(run_op(SY_OP_REDUCE_MAX, {&x}, {&maximum}, params).ok());
  CHECK(std::isnan(read_values(maximum)[0]));
}

TEST_CASE("sum over an empty extent is 0, mean is NaN, max is INVALID_ARGUMENT", "[ops][special]") {
  DeviceTensor x = make_f32({2, 0}, {});
  DeviceTensor out = make_f32({2}, {7.0, 7.0});
  sy_op_params params = zero_params();
  params.reduce.axes_mask = 0b10;
  REQUIRE(run_op(SY_OP_REDUCE_SUM, {&x}, {&out}, params).ok());
  require_values(read_values(out), {0.0, 0.0}, 0);
  REQUIRE(run_op(SY_OP_REDUCE_MEAN, {&x}, {&out}, params).ok());
  for (double value : read_values(out)) CHECK(std::isnan(value));
  CHECK(run_op(SY_OP_REDUCE_MAX, {&x}, {&out}, params).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("matmul with K = 0 gives the bias", "[ops][special][matmul]") {
  DeviceTensor a = make_f32({2, 0}, {});
  DeviceTensor b = make_f32({0, 3}, {});
  DeviceTensor bias = make_f32({3}, {1.0, 2.0, 3.0});
  DeviceTensor out = make_f32({2, 3}, {9, 9, 9, 9, 9, 9});
  sy_op_params params = zero_params();
  params.matmul.has_bias = 1;
  REQUIRE(run_op(SY_OP_MATMUL, {&a, &b, &bias}, {&out}, params).ok());
  require_values(read_values(out), {1, 2, 3, 1, 2, 3}, 0);
}

TEST_CASE("softmax of a row holding +inf is NaN", "[ops][special][softmax]") {
  DeviceTensor x = make_f32({2}, {kInf, 0.0});
  DeviceTensor out = make_zeros(SY_DTYPE_F32, {2});
  REQUIRE(run_op(SY_OP_SOFTMAX, {&x}, {&out}).ok());
  for (double value : read_values(out)) CHECK(std::isnan(value));
}

}  // namespace
}  // namespace switchyard::op_test
