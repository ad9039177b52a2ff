// MATMUL on the onednn plugin against the reference: transposes, batch broadcasting, bias,
// strided and stride-0 operands, every float dtype, and sizes that take the threaded path.
#include "onednn/onednn_test_support.h"

namespace switchyard::onednn_test {
namespace {

OpCase matmul_case(HostTensor a, HostTensor b, const Shape& out_shape, sy_dtype dtype,
                   bool transpose_a = false, bool transpose_b = false,
                   const HostTensor* bias = nullptr) {
  std::vector<HostTensor> inputs = {std::move(a), std::move(b)};
  if (bias) inputs.push_back(*bias);
  OpCase op_case =
      conformance::make_op_case(SY_OP_MATMUL, inputs, {conformance::zeros(dtype, out_shape)});
  op_case.params.matmul.transpose_a = transpose_a;
  op_case.params.matmul.transpose_b = transpose_b;
  op_case.params.matmul.has_bias = bias != nullptr;
  return op_case;
}

TEST_CASE("onednn matmul matches the reference for transposes and bias", "[onednn][matmul]") {
  for (sy_dtype dtype : kFloatDtypes) {
    DYNAMIC_SECTION(dtype_name(dtype)) {
      HostTensor bias = random(dtype, {6}, 3);
      check_against_reference(matmul_case(random(dtype, {5, 4}, 1), random(dtype, {4, 6}, 2),
                                          {5, 6}, dtype, false, false, &bias),
                              dtype);
      check_against_reference(matmul_case(random(dtype, {4, 5}, 1), random(dtype, {6, 4}, 2),
                                          {5, 6}, dtype, true, true),
                              dtype);
      HostTensor column_bias = random(dtype, {5, 1}, 4);
      check_against_reference(matmul_case(random(dtype, {5, 4}, 1), random(dtype, {6, 4}, 2),
                                          {5, 6}, dtype, false, true, &column_bias),
                              dtype);
    }
  }
}

TEST_CASE("onednn matmul broadcasts batch axes and accepts strided operands", "[onednn][matmul]") {
  for (sy_dtype dtype : kFloatDtypes) {
    DYNAMIC_SECTION(dtype_name(dtype)) {
      // [2, 1, 3, 4] @ [5, 4, 6] -> [2, 5, 3, 6]
      check_against_reference(matmul_case(random(dtype, {2, 1, 3, 4}, 5),
                                          random(dtype, {5, 4, 6}, 6), {2, 5, 3, 6}, dtype),
                              dtype);
      // Operands stored every other element with gaps, one of them transposed by strides.
      check_against_reference(
          matmul_case(spread(random(dtype, {3, 7, 9}, 7)),
                      transposed_view(random(dtype, {3, 5, 9}, 8)), {3, 7, 5}, dtype),
          dtype);
      // A batch axis read with stride 0 (one matrix seen four times).
      check_against_reference(matmul_case(expanded(random(dtype, {1, 6, 3}, 9), 0, 4),
                                          random(dtype, {4, 3, 2}, 10), {4, 6, 2}, dtype),
                              dtype);
    }
  }
}

TEST_CASE("onednn matmul with K = 0 writes the bias or zeros", "[onednn][matmul]") {
  HostTensor bias = random(SY_DTYPE_F32, {3}, 11);
  check_against_reference(matmul_case(conformance::zeros(SY_DTYPE_F32, {2, 0}),
                                      conformance::zeros(SY_DTYPE_F32, {0, 3}), {2, 3},
                                      SY_DTYPE_F32, false, false, &bias),
                          SY_DTYPE_F32);
  check_against_reference(
      matmul_case(conformance::zeros(SY_DTYPE_F32, {2, 0}),
                  conformance::zeros(SY_DTYPE_F32, {0, 3}), {2, 3}, SY_DTYPE_F32),
      SY_DTYPE_F32);
}

TEST_CASE("onednn matmul on a size that runs multi-threaded", "[onednn][matmul]") {
  for (sy_dtype dtype : {SY_DTYPE_F32, SY_DTYPE_BF16}) {
    DYNAMIC_SECTION(dtype_name(dtype)) {
      HostTensor bias = random(dtype, {160}, 14);
      check_against_reference(
          matmul_case(random(dtype, {192, 256}, 12), random(dtype, {160, 256}, 13), {192, 160},
                      dtype, false, true, &bias),
          dtype);
    }
  }
}

TEST_CASE("onednn matmul errors name the shapes", "[onednn][matmul]") {
  Status status = run_onednn(matmul_case(random(SY_DTYPE_F32, {4, 3}, 1),
                                         random(SY_DTYPE_F32, {5, 2}, 2), {4, 2}, SY_DTYPE_F32));
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(
      status.message().find("MATMUL: inner dimensions differ: a [4, 3] (K=3) vs b [5, 2] (K=5)") !=
      std::string::npos);
  Status dtype_status = run_onednn(matmul_case(
      random(SY_DTYPE_F32, {4, 3}, 1), random(SY_DTYPE_BF16, {3, 2}, 2), {4, 2}, SY_DTYPE_F32));
  CHECK(dtype_status.code() == StatusCode::kInvalidArgument);
  CHECK(dtype_status.message().find("bf16") != std::string::npos);
}

}  // namespace
}  // namespace switchyard::onednn_test
