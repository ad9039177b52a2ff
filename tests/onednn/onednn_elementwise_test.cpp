// Elementwise unary, unary-backward and binary ops on the onednn plugin against the reference,
// at a small size (plain loops) and a large one (oneDNN eltwise and the threaded loops), with
// strided, broadcast and in-place operands.
#include "onednn/onednn_test_support.h"

namespace switchyard::onednn_test {
namespace {

constexpr sy_op kUnaryOps[] = {SY_OP_RELU, SY_OP_GELU, SY_OP_SIGMOID, SY_OP_TANH, SY_OP_EXP,
                               SY_OP_LOG,  SY_OP_SQRT, SY_OP_NEG,     SY_OP_ABS,  SY_OP_SIGN};
constexpr sy_op kBackwardOps[] = {SY_OP_RELU_BACKWARD, SY_OP_GELU_BACKWARD, SY_OP_SIGMOID_BACKWARD,
                                  SY_OP_TANH_BACKWARD};
constexpr sy_op kBinaryOps[] = {SY_OP_ADD, SY_OP_SUB, SY_OP_MUL,    SY_OP_DIV,   SY_OP_MAX,
                                SY_OP_MIN, SY_OP_POW, SY_OP_CMP_GT, SY_OP_CMP_EQ};

// Inputs in the op's comfortable domain: positive for log/sqrt/pow bases, away from 0 elsewhere.
HostTensor unary_input(sy_op op, sy_dtype dtype, const Shape& shape, uint64_t seed) {
  if (op == SY_OP_LOG || op == SY_OP_SQRT) return random(dtype, shape, seed, 0.1, 4.0);
  conformance::Generator gen(seed);
  return conformance::random_tensor_away_from_zero(gen, dtype, shape, 0.05, 3.0);
}

TEST_CASE("onednn unary ops match the reference, small and large, dense and strided",
          "[onednn][elementwise]") {
  for (sy_op op : kUnaryOps) {
    for (sy_dtype dtype : kFloatDtypes) {
      DYNAMIC_SECTION("op " << op << " " << dtype_name(dtype)) {
        const Shape small = {3, 5};
        const Shape large = {64, 1000};  // above the oneDNN eltwise threshold
        check_against_reference(conformance::make_op_case(op, {unary_input(op, dtype, small, 1)},
                                                          {conformance::zeros(dtype, small)}),
                                dtype);
        check_against_reference(conformance::make_op_case(op, {unary_input(op, dtype, large, 2)},
                                                          {conformance::zeros(dtype, large)}),
                                dtype);
        check_against_reference(
            conformance::make_op_case(op, {spread(unary_input(op, dtype, {7, 300}, 3))},
                                      {spread(conformance::zeros(dtype, {7, 300}))}),
            dtype);
      }
    }
  }
}

TEST_CASE("onednn unary backward ops match the reference", "[onednn][elementwise]") {
  for (sy_op op : kBackwardOps) {
    for (sy_dtype dtype : kFloatDtypes) {
      DYNAMIC_SECTION("op " << op << " " << dtype_name(dtype)) {
        for (const Shape& shape : {Shape{4, 6}, Shape{50, 1000}}) {
          HostTensor saved = op == SY_OP_SIGMOID_BACKWARD || op == SY_OP_TANH_BACKWARD
                                 ? random(dtype, shape, 5, 0.05, 0.95)
                                 : unary_input(op, dtype, shape, 5);
          check_against_reference(conformance::make_op_case(op, {random(dtype, shape, 4), saved},
                                                            {conformance::zeros(dtype, shape)}),
                                  dtype);
        }
      }
    }
  }
}

TEST_CASE("onednn binary ops broadcast like numpy and accept scalars and strides",
          "[onednn][elementwise]") {
  for (sy_op op : kBinaryOps) {
    for (sy_dtype dtype : kFloatDtypes) {
      DYNAMIC_SECTION("op " << op << " " << dtype_name(dtype)) {
        auto a_values = [&](const Shape& shape, uint64_t seed) {
          return op == SY_OP_POW ? random(dtype, shape, seed, 0.5, 2.0)
                                 : random(dtype, shape, seed);
        };
        auto b_values = [&](const Shape& shape, uint64_t seed) {
          conformance::Generator gen(seed);
          return conformance::random_tensor_away_from_zero(gen, dtype, shape, 0.25, 2.0);
        };
        // [4, 1, 6] with [5, 1] -> [4, 5, 6]
        check_against_reference(
            conformance::make_op_case(op, {a_values({4, 1, 6}, 1), b_values({5, 1}, 2)},
                                      {conformance::zeros(dtype, {4, 5, 6})}),
            dtype);
        // Large, one operand strided, the other a row broadcast.
        check_against_reference(
            conformance::make_op_case(op, {spread(a_values({300, 400}, 3)), b_values({400}, 4)},
                                      {conformance::zeros(dtype, {300, 400})}),
            dtype);
        OpCase scalar =
            conformance::make_op_case(op, {a_values({33}, 5)}, {conformance::zeros(dtype, {33})});
        scalar.params.binary.use_scalar = 1;
        scalar.params.binary.scalar = 1.7;
        check_against_reference(scalar, dtype);
      }
    }
  }
}

TEST_CASE("onednn binary rejects shapes that do not broadcast", "[onednn][elementwise]") {
  Status status = run_onednn(conformance::make_op_case(
      SY_OP_ADD, {random(SY_DTYPE_F32, {2, 3}, 1), random(SY_DTYPE_F32, {4}, 2)},
      {conformance::zeros(SY_DTYPE_F32, {2, 3})}));
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.message().find("ADD: shapes [2, 3] and [4] do not broadcast") != std::string::npos);
}

}  // namespace
}  // namespace switchyard::onednn_test
