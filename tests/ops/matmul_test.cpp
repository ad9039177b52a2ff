// MATMUL golden values on the reference plugin.
#include "ops/op_harness.h"

namespace switchyard::op_test {
namespace {

// A = [[1, 2, 3], [4, 5, 6]], B = [[7, 8], [9, 10], [11, 12]]:
// A @ B = [[1*7 + 2*9 + 3*11, 1*8 + 2*10 + 3*12], [4*7 + 5*9 + 6*11, 4*8 + 5*10 + 6*12]]
//       = [[58, 64], [139, 154]].
const std::vector<double> kA = {1, 2, 3, 4, 5, 6};
const std::vector<double> kB = {7, 8, 9, 10, 11, 12};

TEST_CASE("matmul 2x3 @ 3x2 plus bias matches the hand-worked product", "[ops][matmul]") {
  DeviceTensor a = make_f32({2, 3}, kA);
  DeviceTensor b = make_f32({3, 2}, kB);
  DeviceTensor bias = make_f32({2}, {0.5, -1.0});
  DeviceTensor out = make_zeros(SY_DTYPE_F32, {2, 2});
  sy_op_params params = zero_params();
  params.matmul.has_bias = 1;
  REQUIRE(run_op(SY_OP_MATMUL, {&a, &b, &bias}, {&out}, params).ok());
  // [[58 + 0.5, 64 - 1], [139 + 0.5, 154 - 1]]
  require_values(read_values(out), {58.5, 63, 139.5, 153}, 0);
}

TEST_CASE("matmul with transpose_b reads b as [N, K]", "[ops][matmul]") {
  DeviceTensor a = make_f32({2, 3}, kA);
  DeviceTensor b_transposed = make_f32({2, 3}, {7, 9, 11, 8, 10, 12});  // B^T
  DeviceTensor out = make_zeros(SY_DTYPE_F32, {2, 2});
  sy_op_params params = zero_params();
  params.matmul.transpose_b = 1;
  REQUIRE(run_op(SY_OP_MATMUL, {&a, &b_transposed}, {&out}, params).ok());
  require_values(read_values(out), {58, 64, 139, 154}, 0);
}

TEST_CASE("matmul with transpose_a reads a as [K, M]", "[ops][matmul]") {
  DeviceTensor a_transposed = make_f32({3, 2}, {1, 4, 2, 5, 3, 6});  // A^T
  DeviceTensor b = make_f32({3, 2}, kB);
  DeviceTensor out = make_zeros(SY_DTYPE_F32, {2, 2});
  sy_op_params params = zero_params();
  params.matmul.transpose_a = 1;
  REQUIRE(run_op(SY_OP_MATMUL, {&a_transposed, &b}, {&out}, params).ok());
  require_values(read_values(out), {58, 64, 139, 154}, 0);
}

TEST_CASE("matmul broadcasts a rank-2 b over a batch of a", "[ops][matmul]") {
  // Batch 0 is A, batch 1 is 2A: the second product is twice the first.
  DeviceTensor a = make_f32({2, 2, 3}, {1, 2, 3, 4, 5, 6, 2, 4, 6, 8, 10, 12});
  DeviceTensor b = make_f32({3, 2}, kB);
  DeviceTensor out = make_zeros(SY_DTYPE_F32, {2, 2, 2});
  REQUIRE(run_op(SY_OP_MATMUL, {&a, &b}, {&out}).ok());
  require_values(read_values(out), {58, 64, 139, 154, 116, 128, 278, 308}, 0);
}

TEST_CASE("matmul with inner dimensions that differ is INVALID_ARGUMENT naming both shapes",
          "[ops][matmul][errors]") {
  DeviceTensor a = make_f32({4, 3}, std::vector<double>(12, 1.0));
  DeviceTensor b = make_f32({5, 2}, std::vector<double>(10, 1.0));
  DeviceTensor out = make_zeros(SY_DTYPE_F32, {4, 2});
  const Status status = run_op(SY_OP_MATMUL, {&a, &b}, {&out});
  REQUIRE(status.code() == StatusCode::kInvalidArgument);
  INFO(status.message());
  CHECK(status.message().find("[4, 3]") != std::string::npos);
  CHECK(status.message().find("[5, 2]") != std::string::npos);
}

}  // namespace
}  // namespace switchyard::op_test
