// Reductions, argmax and the softmax family: golden values on the reference plugin.
#include <cmath>

#include "ops/op_harness.h"

namespace switchyard::op_test {
namespace {

// x = [[1, 2, 3], [4, 5, 6]]
const std::vector<double> kX = {1, 2, 3, 4, 5, 6};

std::vector<double> reduce(sy_op op, uint32_t axes_mask, bool keep_dims, const Shape& out_shape,
                           sy_dtype out_dtype = SY_DTYPE_F32, const std::vector<double>& x = kX) {
  DeviceTensor in = make_f32({2, 3}, x);
  DeviceTensor out = make_zeros(out_dtype, out_shape);
  sy_op_params params = zero_params();
  params.reduce.axes_mask = axes_mask;
  params.reduce.keep_dims = keep_dims ? 1u : 0u;
  REQUIRE(run_op(op, {&in}, {&out}, params).ok());
  return read_values(out);
}

TEST_CASE("reduce_sum over one axis, with keep_dims, and over all axes", "[ops][reduce]") {
  require_values(reduce(SY_OP_REDUCE_SUM, 0b01, false, {3}), {5, 7, 9}, 0);  // column sums
  require_values(reduce(SY_OP_REDUCE_SUM, 0b10, true, {2, 1}), {6, 15}, 0);  // row sums
  require_values(reduce(SY_OP_REDUCE_SUM, 0b11, false, {}), {21}, 0);        // rank 0
}

TEST_CASE("reduce_mean divides by the number of reduced elements", "[ops][reduce]") {
  require_values(reduce(SY_OP_REDUCE_MEAN, 0b10, false, {2}), {2, 5}, 0);  // 6/3, 15/3
  require_values(reduce(SY_OP_REDUCE_MEAN, 0b11, false, {}), {3.5}, 0);    // 21/6
}

TEST_CASE("reduce_max picks the largest element", "[ops][reduce]") {
  require_values(reduce(SY_OP_REDUCE_MAX, 0b01, false, {3}), {4, 5, 6}, 0);
  require_values(reduce(SY_OP_REDUCE_MAX, 0b10, false, {2}, SY_DTYPE_F32, {3, -1, 2, -4, -2, -3}),
                 {3, -2}, 0);
}

TEST_CASE("argmax returns the smallest index among ties", "[ops][reduce][argmax]") {
  // Row 0 = [3, 1, 3]: the maximum 3 sits at 0 and 2 -> 0. Row 1 = [2, 7, 7] -> 1.
  const std::vector<double> ties = {3, 1, 3, 2, 7, 7};
  require_values(reduce(SY_OP_ARGMAX, 0b10, false, {2}, SY_DTYPE_I64, ties), {0, 1}, 0);
  require_values(reduce(SY_OP_ARGMAX, 0b10, true, {2, 1}, SY_DTYPE_I32, ties), {0, 1}, 0);
  // Columns: [3, 2] -> 0, [1, 7] -> 1, [3, 7] -> 1.
  require_values(reduce(SY_OP_ARGMAX, 0b01, false, {3}, SY_DTYPE_I32, ties), {0, 1, 1}, 0);
}

std::vector<double> softmax_family(sy_op op, const std::vector<DeviceTensor*>& inputs) {
  DeviceTensor out = make_zeros(SY_DTYPE_F32, {2});
  std::vector<const DeviceTensor*> const_inputs(inputs.begin(), inputs.end());
  REQUIRE(run_op(op, const_inputs, {&out}, zero_params()).ok());  // axis 0
  return read_values(out);
}

TEST_CASE("softmax and log_softmax of [0, ln 2]", "[ops][softmax]") {
  // exp([0, ln 2]) = [1, 2], sum 3: softmax = [1/3, 2/3]; log_softmax = [ln(1/3), ln(2/3)].
  DeviceTensor x = make_f32({2}, {0.0, std::log(2.0)});
  require_values(softmax_family(SY_OP_SOFTMAX, {&x}), {1.0 / 3.0, 2.0 / 3.0});
  require_values(softmax_family(SY_OP_LOG_SOFTMAX, {&x}), {-1.0986122887, -0.4054651081});
}

TEST_CASE("softmax over a non-last axis normalises each column", "[ops][softmax]") {
  // Columns of [[0, 1], [ln 3, 1]]: [0, ln 3] -> [1/4, 3/4]; [1, 1] -> [1/2, 1/2].
  DeviceTensor x = make_f32({2, 2}, {0.0, 1.0, std::log(3.0), 1.0});
  DeviceTensor out = make_zeros(SY_DTYPE_F32, {2, 2});
  REQUIRE(run_op(SY_OP_SOFTMAX, {&x}, {&out}, zero_params()).ok());
  require_values(read_values(out), {0.25, 0.5, 0.75, 0.5});
}

TEST_CASE("softmax and log_softmax backward", "[ops][softmax][backward]") {
  // y = [1/3, 2/3], g = [1, 0]: sum(g * y) = 1/3, grad = y * (g - 1/3) = [2/9, -2/9].
  DeviceTensor grad_out = make_f32({2}, {1.0, 0.0});
  DeviceTensor y = make_f32({2}, {1.0 / 3.0, 2.0 / 3.0});
  require_values(softmax_family(SY_OP_SOFTMAX_BACKWARD, {&grad_out, &y}), {2.0 / 9.0, -2.0 / 9.0});
  // log-softmax: y = [ln 1/3, ln 2/3], g = [1, 0]: grad = g - exp(y) * sum(g) = [2/3, -2/3].
  DeviceTensor log_y = make_f32({2}, {std::log(1.0 / 3.0), std::log(2.0 / 3.0)});
  require_values(softmax_family(SY_OP_LOG_SOFTMAX_BACKWARD, {&grad_out, &log_y}),
                 {2.0 / 3.0, -2.0 / 3.0});
}

TEST_CASE("softmax with an axis beyond the rank is INVALID_ARGUMENT", "[ops][softmax][errors]") {
  DeviceTensor x = make_f32({2}, {0.0, 1.0});
  DeviceTensor out = make_zeros(SY_DTYPE_F32, {2});
  sy_op_params params = zero_params();
  params.softmax.axis = 1;
  CHECK(run_op(SY_OP_SOFTMAX, {&x}, {&out}, params).code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace switchyard::op_test
