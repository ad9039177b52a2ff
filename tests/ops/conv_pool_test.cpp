// CONV2D (forward and both backward ops) and pooling golden values on the reference plugin.
#include "ops/op_harness.h"

namespace switchyard::op_test {
namespace {

// x (1x1x3x3) = [[1, 2, 3], [4, 5, 6], [7, 8, 9]], w (1x1x2x2) = [[1, 2], [3, 4]].
const std::vector<double> kX = {1, 2, 3, 4, 5, 6, 7, 8, 9};
const std::vector<double> kW = {1, 2, 3, 4};

sy_op_params conv_params(int32_t pad, bool bias) {
  sy_op_params params = zero_params();
  params.conv2d.stride_h = params.conv2d.stride_w = 1;
  params.conv2d.pad_h = params.conv2d.pad_w = pad;
  params.conv2d.dilation_h = params.conv2d.dilation_w = 1;
  params.conv2d.has_bias = bias ? 1u : 0u;
  return params;
}

TEST_CASE("conv2d 3x3 input, 2x2 kernel, stride 1, padding 0, with bias", "[ops][conv2d]") {
  // y[i, j] = x[i, j]*1 + x[i, j+1]*2 + x[i+1, j]*3 + x[i+1, j+1]*4 (+ 0.5):
  // (0,0) 1 + 4 + 12 + 20 = 37; (0,1) 2 + 6 + 15 + 24 = 47; (1,0) 4 + 10 + 21 + 32 = 67;
  // (1,1) 5 + 12 + 24 + 36 = 77.
  DeviceTensor x = make_f32({1, 1, 3, 3}, kX);
  DeviceTensor w = make_f32({1, 1, 2, 2}, kW);
  DeviceTensor bias = make_f32({1}, {0.5});
  DeviceTensor y = make_zeros(SY_DTYPE_F32, {1, 1, 2, 2});
  REQUIRE(run_op(SY_OP_CONV2D, {&x, &w, &bias}, {&y}, conv_params(0, true)).ok());
  require_values(read_values(y), {37.5, 47.5, 67.5, 77.5}, 0);
}

TEST_CASE("conv2d with padding 1 gives a 4x4 output", "[ops][conv2d]") {
  // With a zero border, y[i, j] = P[i, j]*1 + P[i, j+1]*2 + P[i+1, j]*3 + P[i+1, j+1]*4 where P is
  // x padded to 5x5. Row 0 sees only x's first row through the kernel's bottom taps: (0,0) 4*1 = 4,
  // (0,1) 3*1 + 4*2 = 11, (0,2) 3*2 + 4*3 = 18, (0,3) 3*3 = 9. The other rows follow the same way.
  // Check: every x element meets all four taps, so the total is (1+2+3+4) * 45 = 450.
  DeviceTensor x = make_f32({1, 1, 3, 3}, kX);
  DeviceTensor w = make_f32({1, 1, 2, 2}, kW);
  DeviceTensor y = make_zeros(SY_DTYPE_F32, {1, 1, 4, 4});
  REQUIRE(run_op(SY_OP_CONV2D, {&x, &w}, {&y}, conv_params(1, false)).ok());
  require_values(read_values(y), {4, 11, 18, 9, 18, 37, 47, 21, 36, 67, 77, 33, 14, 23, 26, 9}, 0);
}

TEST_CASE("conv2d backward data spreads grad_y through the kernel", "[ops][conv2d][backward]") {
  // grad_y = ones(2x2): grad_x[h, w] = sum of the kernel taps that touch (h, w):
  // corners get one tap (1, 2, 3, 4), edges two (1+2, 1+3, 2+4, 3+4), the centre all four (10).
  DeviceTensor grad_y = make_f32({1, 1, 2, 2}, {1, 1, 1, 1});
  DeviceTensor w = make_f32({1, 1, 2, 2}, kW);
  DeviceTensor grad_x = make_zeros(SY_DTYPE_F32, {1, 1, 3, 3});
  REQUIRE(run_op(SY_OP_CONV2D_BACKWARD_DATA, {&grad_y, &w}, {&grad_x}, conv_params(0, false)).ok());
  require_values(read_values(grad_x), {1, 3, 2, 4, 10, 6, 3, 7, 4}, 0);
}

TEST_CASE("conv2d backward weight sums x windows, and grad_bias sums grad_y",
          "[ops][conv2d][backward]") {
  // grad_y = ones(2x2): grad_w[kh, kw] = sum of the 2x2 window of x starting at (kh, kw):
  // (0,0) 1+2+4+5 = 12, (0,1) 2+3+5+6 = 16, (1,0) 4+5+7+8 = 24, (1,1) 5+6+8+9 = 28; grad_bias = 4.
  DeviceTensor grad_y = make_f32({1, 1, 2, 2}, {1, 1, 1, 1});
  DeviceTensor x = make_f32({1, 1, 3, 3}, kX);
  DeviceTensor grad_w = make_zeros(SY_DTYPE_F32, {1, 1, 2, 2});
  DeviceTensor grad_bias = make_zeros(SY_DTYPE_F32, {1});
  REQUIRE(run_op(SY_OP_CONV2D_BACKWARD_WEIGHT, {&grad_y, &x}, {&grad_w, &grad_bias},
                 conv_params(0, true))
              .ok());
  require_values(read_values(grad_w), {12, 16, 24, 28}, 0);
  require_values(read_values(grad_bias), {4}, 0);
}

// x (1x1x4x4) = [[1, 2, 5, 3], [4, 0, 1, 1], [7, 8, 2, 9], [6, 5, 3, 4]].
const std::vector<double> kPoolX = {1, 2, 5, 3, 4, 0, 1, 1, 7, 8, 2, 9, 6, 5, 3, 4};

sy_op_params pool_params(int32_t kernel, int32_t stride, int32_t pad, bool include_pad) {
  sy_op_params params = zero_params();
  params.pool2d.kernel_h = params.pool2d.kernel_w = kernel;
  params.pool2d.stride_h = params.pool2d.stride_w = stride;
  params.pool2d.pad_h = params.pool2d.pad_w = pad;
  params.pool2d.count_include_pad = include_pad ? 1u : 0u;
  return params;
}

TEST_CASE("max pool 2x2 stride 2 and its backward", "[ops][pool]") {
  // Windows: [1 2 4 0] -> 4, [5 3 1 1] -> 5, [7 8 6 5] -> 8, [2 9 3 4] -> 9.
  DeviceTensor x = make_f32({1, 1, 4, 4}, kPoolX);
  DeviceTensor y = make_zeros(SY_DTYPE_F32, {1, 1, 2, 2});
  REQUIRE(run_op(SY_OP_MAX_POOL2D, {&x}, {&y}, pool_params(2, 2, 0, false)).ok());
  require_values(read_values(y), {4, 5, 8, 9}, 0);
  // Each gradient lands on its window's maximum: 4 at (1,0), 5 at (0,2), 8 at (2,1), 9 at (2,3).
  DeviceTensor grad_y = make_f32({1, 1, 2, 2}, {10, 20, 30, 40});
  DeviceTensor grad_x = make_zeros(SY_DTYPE_F32, {1, 1, 4, 4});
  REQUIRE(run_op(SY_OP_MAX_POOL2D_BACKWARD, {&grad_y, &x}, {&grad_x}, pool_params(2, 2, 0, false))
              .ok());
  require_values(read_values(grad_x), {0, 0, 20, 0, 10, 0, 0, 0, 0, 30, 0, 40, 0, 0, 0, 0}, 0);
}

TEST_CASE("max pool backward gives a tied window's gradient to its first maximum", "[ops][pool]") {
  // One window [[2, 2], [1, 2]]: the first 2 in row-major order, (0,0), gets everything.
  DeviceTensor x = make_f32({1, 1, 2, 2}, {2, 2, 1, 2});
  DeviceTensor grad_y = make_f32({1, 1, 1, 1}, {5});
  DeviceTensor grad_x = make_zeros(SY_DTYPE_F32, {1, 1, 2, 2});
  REQUIRE(run_op(SY_OP_MAX_POOL2D_BACKWARD, {&grad_y, &x}, {&grad_x}, pool_params(2, 2, 0, false))
              .ok());
  require_values(read_values(grad_x), {5, 0, 0, 0}, 0);
}

TEST_CASE("avg pool 2x2 stride 2 and its backward", "[ops][pool]") {
  // (1+2+4+0)/4 = 1.75, (5+3+1+1)/4 = 2.5, (7+8+6+5)/4 = 6.5, (2+9+3+4)/4 = 4.5.
  DeviceTensor x = make_f32({1, 1, 4, 4}, kPoolX);
  DeviceTensor y = make_zeros(SY_DTYPE_F32, {1, 1, 2, 2});
  REQUIRE(run_op(SY_OP_AVG_POOL2D, {&x}, {&y}, pool_params(2, 2, 0, false)).ok());
  require_values(read_values(y), {1.75, 2.5, 6.5, 4.5}, 0);
  // Each window's four positions receive grad / 4.
  DeviceTensor grad_y = make_f32({1, 1, 2, 2}, {4, 8, 12, 16});
  DeviceTensor grad_x = make_zeros(SY_DTYPE_F32, {1, 1, 4, 4});
  REQUIRE(
      run_op(SY_OP_AVG_POOL2D_BACKWARD, {&grad_y}, {&grad_x}, pool_params(2, 2, 0, false)).ok());
  require_values(read_values(grad_x), {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}, 0);
}

TEST_CASE("avg pool with padding: count_include_pad decides the divisor", "[ops][pool]") {
  // 3x3 kernel, stride 1, pad 1 over x = [[1..3], [4..6], [7..9]]. Corner (0,0) covers 1+2+4+5 = 12
  // in 4 real cells; edge (0,1) covers 1+2+3+4+5+6 = 21 in 6; the centre covers all 45 in 9.
  DeviceTensor x = make_f32({1, 1, 3, 3}, kX);
  DeviceTensor y = make_zeros(SY_DTYPE_F32, {1, 1, 3, 3});
  REQUIRE(run_op(SY_OP_AVG_POOL2D, {&x}, {&y}, pool_params(3, 1, 1, false)).ok());
  const std::vector<double> exclude = read_values(y);
  CHECK(exclude[0] == Approx(3.0));  // 12 / 4
  CHECK(exclude[1] == Approx(3.5));  // 21 / 6
  CHECK(exclude[4] == Approx(5.0));  // 45 / 9
  REQUIRE(run_op(SY_OP_AVG_POOL2D, {&x}, {&y}, pool_params(3, 1, 1, true)).ok());
  const std::vector<double> include = read_values(y);
  CHECK(include[0] == Approx(12.0 / 9.0));
  CHECK(include[1] == Approx(21.0 / 9.0));
  CHECK(include[4] == Approx(5.0));
}

}  // namespace
}  // namespace switchyard::op_test
