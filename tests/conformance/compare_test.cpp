// The conformance suite's building blocks: NMSE comparison, view checks, dtype rounding and the
// deterministic input generator. These prove that a passing case really compared something.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "conformance/compare.h"
#include "conformance/host_tensor.h"
#include "conformance/value_gen.h"
#include "support/dtype_codec.h"

namespace switchyard::conformance {
namespace {

HostTensor f32(const std::vector<double>& values) {
  return tensor_from_values(SY_DTYPE_F32, {static_cast<int64_t>(values.size())}, values);
}

TEST_CASE("compare: identical tensors have NMSE 0 and pass an exact tolerance",
          "[conformance][compare]") {
  const Comparison cmp = compare_tensors(f32({1, 2, 3, 4}), f32({1, 2, 3, 4}), 0.0);
  CHECK(cmp.nmse == 0.0);
  CHECK(cmp.within_tolerance);
  CHECK(cmp.problem.empty());
}

TEST_CASE("compare: NMSE is the squared error over the reference's energy",
          "[conformance][compare]") {
  // error^2 = 0.5^2 = 0.25; sum(ref^2) = 1 + 4 + 9 + 16 = 30; NMSE = 0.25 / 30.
  const Comparison loose = compare_tensors(f32({1, 2, 3, 4.5}), f32({1, 2, 3, 4}), 1e-2);
  CHECK(loose.nmse == Approx(0.25 / 30.0));
  CHECK(loose.within_tolerance);
  const Comparison tight = compare_tensors(f32({1, 2, 3, 4.5}), f32({1, 2, 3, 4}), 1e-3);
  CHECK_FALSE(tight.within_tolerance);
  CHECK(tight.problem.find("element 3") != std::string::npos);
}

TEST_CASE("compare: an all-zero reference uses the plain squared error", "[conformance][compare]") {
  const Comparison cmp = compare_tensors(f32({0, 0.5}), f32({0, 0}), 1.0);
  CHECK(cmp.nmse == Approx(0.25));
}

TEST_CASE("compare: NaN and infinity must sit at the same positions", "[conformance][compare]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(compare_tensors(f32({nan, inf, 1}), f32({nan, inf, 1}), 0.0).within_tolerance);
  CHECK_FALSE(compare_tensors(f32({nan, 1, 1}), f32({1, 1, 1}), 1.0).within_tolerance);
  CHECK_FALSE(compare_tensors(f32({-inf, 1}), f32({inf, 1}), 1.0).within_tolerance);
}

TEST_CASE("compare: integer tensors must be identical", "[conformance][compare]") {
  const HostTensor a = tensor_from_values(SY_DTYPE_I64, {3}, {1, 2, 3});
  const HostTensor b = tensor_from_values(SY_DTYPE_I64, {3}, {1, 2, 4});
  CHECK(compare_tensors(a, a, 0.0).within_tolerance);
  const Comparison cmp = compare_tensors(a, b, 1.0);
  CHECK_FALSE(cmp.within_tolerance);
  CHECK(cmp.nmse == 1.0);
}

TEST_CASE("compare: writes outside an output's view are caught", "[conformance][compare]") {
  Generator gen(7);
  const HostTensor before = sliced_layout(zeros(SY_DTYPE_F32, {2, 2}), 1, gen);
  HostTensor after = before;
  for (int64_t offset : before.logical_offsets()) after.storage[static_cast<size_t>(offset)] = 5.0;
  CHECK(check_outside_view_unchanged(before, after).within_tolerance);
  after.storage[0] += 1.0;  // the padding corner
  CHECK_FALSE(check_outside_view_unchanged(before, after).within_tolerance);
}

TEST_CASE("compare: random_normal's per-element bound", "[conformance][compare]") {
  // a = 1, b = 2, reference 3 (z = 1): the bound is 1e-6 * (1 + 2) = 3e-6.
  CHECK(check_normal_element_bound(f32({3.000002}), f32({3.0}), 1.0, 2.0).within_tolerance);
  CHECK_FALSE(check_normal_element_bound(f32({3.00001}), f32({3.0}), 1.0, 2.0).within_tolerance);
}

TEST_CASE("dtype codec rounds to nearest even", "[conformance][dtype]") {
  CHECK(round_to_dtype(2049.0, SY_DTYPE_F16) == 2048.0);
  CHECK(round_to_dtype(2051.0, SY_DTYPE_F16) == 2052.0);
  CHECK(round_to_dtype(65504.0, SY_DTYPE_F16) == 65504.0);
  CHECK(std::isinf(round_to_dtype(65520.0, SY_DTYPE_F16)));
  CHECK(round_to_dtype(0x1p-24, SY_DTYPE_F16) == 0x1p-24);  // smallest f16 subnormal
  CHECK(round_to_dtype(0x1p-26, SY_DTYPE_F16) == 0.0);      // below half of it
  CHECK(round_to_dtype(1.00390625, SY_DTYPE_BF16) == 1.0);
  CHECK(round_to_dtype(1.01171875, SY_DTYPE_BF16) == 1.015625);
  CHECK(round_to_dtype(-3.7, SY_DTYPE_I32) == -3.0);
  CHECK(sy_support::f32_to_bf16_bits(0.1f) == 0x3dcd);
  CHECK(sy_support::f16_bits_to_f32(sy_support::f32_to_f16_bits(-0.333251953125f)) ==
        -0.333251953125f);
}

TEST_CASE("generator: the same seed gives the same inputs, another case name others",
          "[conformance][generator]") {
  Generator first(Generator::seed_for_case(1, "matmul/f32/7x13x5"));
  Generator second(Generator::seed_for_case(1, "matmul/f32/7x13x5"));
  Generator other(Generator::seed_for_case(1, "matmul/f32/64x96x80"));
  const HostTensor a = random_tensor(first, SY_DTYPE_BF16, {16}, -1, 1);
  const HostTensor b = random_tensor(second, SY_DTYPE_BF16, {16}, -1, 1);
  const HostTensor c = random_tensor(other, SY_DTYPE_BF16, {16}, -1, 1);
  CHECK(a.storage == b.storage);
  CHECK(a.storage != c.storage);
  for (double value : a.storage) CHECK(round_to_dtype(value, SY_DTYPE_BF16) == value);
}

TEST_CASE("generator: permuted layouts keep the logical values", "[conformance][generator]") {
  Generator gen(3);
  const HostTensor dense = random_tensor(gen, SY_DTYPE_F32, {2, 3, 4}, -1, 1);
  const HostTensor permuted = permuted_layout(dense, {2, 0, 1});
  CHECK(permuted.logical_values() == dense.logical_values());
  CHECK(permuted.strides == std::vector<int64_t>{3, 1, 6});  // storage [4, 2, 3]
  const HostTensor sliced = sliced_layout(dense, 1, gen);
  CHECK(sliced.logical_values() == dense.logical_values());
  CHECK(sliced.offset_elements == 30 + 6 + 1);  // [1, 1, 1] in a [4, 5, 6] buffer
}

}  // namespace
}  // namespace switchyard::conformance
