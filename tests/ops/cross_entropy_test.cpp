// CROSS_ENTROPY and its gradient on a 2x3 case worked out by hand.
#include "ops/op_harness.h"

namespace switchyard::op_test {
namespace {

// logits = [[0, 0, 0], [1, 2, 3]], labels = [0, 2].
// Row 0: logsumexp = ln 3 = 1.0986123, loss_0 = ln 3 - 0 = 1.0986123.
// Row 1: logsumexp = 3 + ln(1 + e^-1 + e^-2) = 3 + ln 1.5032147 = 3.4076059, loss_1 = 0.4076059.
// mean = (1.0986123 + 0.4076059) / 2 = 0.7531091; sum = 1.5062182.
const std::vector<double> kLogits = {0, 0, 0, 1, 2, 3};

double loss(sy_dtype label_dtype, uint32_t reduction) {
  DeviceTensor logits = make_f32({2, 3}, kLogits);
  DeviceTensor labels = make_tensor(label_dtype, {2}, {0, 2});
  DeviceTensor out = make_zeros(SY_DTYPE_F32, {});
  sy_op_params params = zero_params();
  params.cross_entropy.reduction = reduction;
  REQUIRE(run_op(SY_OP_CROSS_ENTROPY, {&logits, &labels}, {&out}, params).ok());
  return read_values(out).at(0);
}

TEST_CASE("cross-entropy of a 2x3 batch, mean and sum, i32 and i64 labels",
          "[ops][cross_entropy]") {
  CHECK(loss(SY_DTYPE_I32, 0) == Approx(0.7531091).epsilon(1e-6));
  CHECK(loss(SY_DTYPE_I64, 0) == Approx(0.7531091).epsilon(1e-6));
  CHECK(loss(SY_DTYPE_I64, 1) == Approx(1.5062182).epsilon(1e-6));
}

TEST_CASE("cross-entropy gradient is (softmax - one_hot) * grad_loss / N", "[ops][cross_entropy]") {
  // Row 0: softmax = [1/3, 1/3, 1/3], minus one_hot(0) = [-2/3, 1/3, 1/3], / 2 = [-1/3, 1/6, 1/6].
  // Row 1: softmax([1, 2, 3]) = [e^-2, e^-1, 1] / 1.5032147 = [0.0900306, 0.2447285, 0.6652410],
  //        minus one_hot(2) = [0.0900306, 0.2447285, -0.3347590], / 2.
  DeviceTensor logits = make_f32({2, 3}, kLogits);
  DeviceTensor labels = make_tensor(SY_DTYPE_I32, {2}, {0, 2});
  DeviceTensor grad_loss = make_f32({}, {1.0});
  DeviceTensor grad = make_zeros(SY_DTYPE_F32, {2, 3});
  REQUIRE(run_op(SY_OP_CROSS_ENTROPY_BACKWARD, {&logits, &labels, &grad_loss}, {&grad}).ok());
  require_values(read_values(grad),
                 {-1.0 / 3.0, 1.0 / 6.0, 1.0 / 6.0, 0.0450153, 0.1223642, -0.1673795}, 1e-5);
}

TEST_CASE("cross-entropy gradient with sum reduction scales by grad_loss only",
          "[ops][cross_entropy]") {
  // Row 0 of the case above with D = 1 and grad_loss = 2: [-2/3, 1/3, 1/3] * 2.
  DeviceTensor logits = make_f32({1, 3}, {0, 0, 0});
  DeviceTensor labels = make_tensor(SY_DTYPE_I64, {1}, {0});
  DeviceTensor grad_loss = make_f32({}, {2.0});
  DeviceTensor grad = make_zeros(SY_DTYPE_F32, {1, 3});
  sy_op_params params = zero_params();
  params.cross_entropy.reduction = 1;
  REQUIRE(
      run_op(SY_OP_CROSS_ENTROPY_BACKWARD, {&logits, &labels, &grad_loss}, {&grad}, params).ok());
  require_values(read_values(grad), {-4.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0});
}

TEST_CASE("a label outside [0, C) is INVALID_ARGUMENT naming the value",
          "[ops][cross_entropy][errors]") {
  DeviceTensor logits = make_f32({2, 3}, kLogits);
  DeviceTensor labels = make_tensor(SY_DTYPE_I32, {2}, {0, 7});
  DeviceTensor out = make_zeros(SY_DTYPE_F32, {});
  const Status status = run_op(SY_OP_CROSS_ENTROPY, {&logits, &labels}, {&out});
  REQUIRE(status.code() == StatusCode::kInvalidArgument);
  INFO(status.message());
  CHECK(status.message().find('7') != std::string::npos);
  DeviceTensor negative = make_tensor(SY_DTYPE_I64, {2}, {-1, 0});
  CHECK(run_op(SY_OP_CROSS_ENTROPY, {&logits, &negative}, {&out}).code() ==
        StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace switchyard::op_test
