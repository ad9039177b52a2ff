// COPY (casts and transposes) and FILL golden values on the reference plugin.
#include <bit>
#include <cstdint>
#include <limits>

#include "ops/op_harness.h"

namespace switchyard::op_test {
namespace {

std::vector<double> cast(sy_dtype from, sy_dtype to, const std::vector<double>& values) {
  const Shape shape = {static_cast<int64_t>(values.size())};
  DeviceTensor x = make_tensor(from, shape, values);
  DeviceTensor out = make_zeros(to, shape);
  REQUIRE(run_op(SY_OP_COPY, {&x}, {&out}).ok());
  return read_values(out);
}

TEST_CASE("cast f32 -> bf16 rounds to nearest, ties to even", "[ops][copy][cast]") {
  // bf16 keeps 8 significant bits; near 1 its spacing is 2^-7 = 0.0078125.
  // 1 + 2^-8 is halfway between 1 (even) and 1 + 2^-7 (odd): -> 1.
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even): -> 1.015625.
  // 1 + 2^-8 + 2^-20 is just above halfway: -> 1.0078125.
  // 257 is halfway between 256 (even) and 258 (odd): -> 256; 259 between 258 and 260: -> 260.
  const std::vector<double> in = {1.00390625, 1.01171875, 1.00390625 + 0x1p-20,
                                  257,        259,        -1.00390625};
  require_values(cast(SY_DTYPE_F32, SY_DTYPE_BF16, in), {1.0, 1.015625, 1.0078125, 256, 260, -1.0},
                 0);
}

TEST_CASE("cast f32 -> f16 rounds to nearest even and overflows to infinity", "[ops][copy][cast]") {
  // Near 2048 the f16 spacing is 2: 2049 -> 2048 (even), 2051 -> 2052 (even); 65520 is halfway
  // between 65504 (the largest f16) and 65536 (beyond range): it rounds to even, i.e. to infinity.
  const std::vector<double> out =
      cast(SY_DTYPE_F32, SY_DTYPE_F16, {2049, 2051, 65504, 65520, -70000});
  require_values({out[0], out[1], out[2]}, {2048, 2052, 65504}, 0);
  CHECK(out[3] == std::numeric_limits<double>::infinity());
  CHECK(out[4] == -std::numeric_limits<double>::infinity());
}

TEST_CASE("cast float -> int truncates toward zero", "[ops][copy][cast]") {
  require_values(cast(SY_DTYPE_F32, SY_DTYPE_I32, {-3.7, 3.7, -0.5, 12.0}), {-3, 3, 0, 12}, 0);
  require_values(cast(SY_DTYPE_BF16, SY_DTYPE_I64, {-2.5, 100.0}), {-2, 100}, 0);
}

TEST_CASE("cast i64 -> i32 keeps the low 32 bits, i32 -> i64 sign-extends", "[ops][copy][cast]") {
  // 2^32 + 5 -> 5; 2^31 -> -2^31 (two's complement); -1 -> -1.
  require_values(cast(SY_DTYPE_I64, SY_DTYPE_I32, {4294967301.0, 2147483648.0, -1.0}),
                 {5, -2147483648.0, -1}, 0);
  require_values(cast(SY_DTYPE_I32, SY_DTYPE_I64, {-2147483648.0, 7}), {-2147483648.0, 7}, 0);
}

TEST_CASE("cast bf16 -> f32 is exact, f16 -> bf16 goes through f32", "[ops][copy][cast]") {
  require_values(cast(SY_DTYPE_BF16, SY_DTYPE_F32, {1.0078125, -3.0}), {1.0078125, -3.0}, 0);
  // f16 1 + 2^-10 is exact in f16; in bf16 it is below the halfway point 1 + 2^-8: -> 1.
  // f16 1 + 3 * 2^-8 (exact in f16) is a bf16 tie: -> 1.015625 (even).
  require_values(cast(SY_DTYPE_F16, SY_DTYPE_BF16, {1.0009765625, 1.01171875}), {1.0, 1.015625}, 0);
}

TEST_CASE("copy from a transposed view writes the transpose", "[ops][copy]") {
  // Storage [1, 2, 3, 4, 5, 6] viewed as [3, 2] with strides [1, 3] is [[1, 4], [2, 5], [3, 6]].
  DeviceTensor x = make_f32({2, 3}, {1, 2, 3, 4, 5, 6});
  x.desc.shape[0] = 3;
  x.desc.shape[1] = 2;
  x.desc.strides[0] = 1;
  x.desc.strides[1] = 3;
  DeviceTensor out = make_zeros(SY_DTYPE_F32, {3, 2});
  REQUIRE(run_op(SY_OP_COPY, {&x}, {&out}).ok());
  require_values(read_values(out), {1, 4, 2, 5, 3, 6}, 0);
}

std::vector<double> fill(sy_dtype dtype, double value) {
  DeviceTensor out = make_zeros(dtype, {3});
  sy_op_params params = zero_params();
  params.fill.value = value;
  REQUIRE(run_op(SY_OP_FILL, {}, {&out}, params).ok());
  return read_values(out);
}

TEST_CASE("fill converts the value to each dtype", "[ops][fill]") {
  // 0.1 -> f32 0x3dcccccd; to bf16 the low half 0xcccd is above 0x8000, so it rounds up to
  // 0x3dcd = 1.6015625 * 2^-4 = 0.10009765625.
  require_values(fill(SY_DTYPE_F32, 0.1), std::vector<double>(3, static_cast<double>(0.1f)), 0);
  require_values(fill(SY_DTYPE_BF16, 0.1), std::vector<double>(3, 0.10009765625), 0);
  CHECK(std::bit_cast<uint32_t>(static_cast<float>(fill(SY_DTYPE_BF16, 0.1)[0])) == 0x3dcd0000u);
  require_values(fill(SY_DTYPE_I32, -3.7), {-3, -3, -3}, 0);
  require_values(fill(SY_DTYPE_I64, 7.9), {7, 7, 7}, 0);
  require_values(fill(SY_DTYPE_F16, -2.5), {-2.5, -2.5, -2.5}, 0);
}

}  // namespace
}  // namespace switchyard::op_test
