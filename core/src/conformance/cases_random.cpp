// RANDOM_UNIFORM (bit-exact) and RANDOM_NORMAL (per docs/ops.md tolerance) for several seeds,
// counter offsets (including 64-bit wrap-around) and strided outputs, whose numbers follow the
// logical element order, not memory order.
#include "conformance/cases.h"

namespace switchyard::conformance {
namespace {

enum class RandomLayout { kContiguous, kPermutedOutput, kSlicedOutput };

struct RandomSpec {
  const char* name;
  uint64_t seed;
  uint64_t offset;
  double a;
  double b;
  Shape shape;
  RandomLayout layout;
};

const RandomSpec kSpecs[] = {
    {"seed0/offset0", 0, 0, 0.0, 1.0, {1000}, RandomLayout::kContiguous},
    {"seed42/offset12345", 42, 12345, -2.0, 3.0, {33, 17}, RandomLayout::kContiguous},
    {"seed_above_2^32/offset_wraps_2^64",
     0x0123456789abcdefull,
     0xfffffffffffffff0ull,
     -1.0,
     1.0,
     {40},
     RandomLayout::kContiguous},
    {"offset_above_2^32", 7, 0x00000001fffffff0ull, 0.5, 0.25, {64}, RandomLayout::kContiguous},
    {"permuted_output", 3, 100, -1.0, 1.0, {10, 20}, RandomLayout::kPermutedOutput},
    {"sliced_output", 5, 0, 2.0, 4.0, {6, 7}, RandomLayout::kSlicedOutput},
};

OpCase build_random(Generator& gen, sy_op op, sy_dtype dtype, const RandomSpec& spec) {
  HostTensor out = zeros(dtype, spec.shape);
  if (spec.layout == RandomLayout::kPermutedOutput) out = permuted_layout(out, {1, 0});
  if (spec.layout == RandomLayout::kSlicedOutput) out = sliced_layout(out, 1, gen);
  OpCase op_case = make_op_case(op, {}, {out});
  op_case.params.random.seed = spec.seed;
  op_case.params.random.offset = spec.offset;
  op_case.params.random.a = spec.a;
  op_case.params.random.b = spec.b;
  op_case.normal_element_bound = op == SY_OP_RANDOM_NORMAL && dtype == SY_DTYPE_F32;
  return op_case;
}

// A standard deviation below zero (or NaN) is a caller's mistake, not a distribution.
OpCase build_negative_deviation(Generator&) {
  OpCase op_case = make_op_case(SY_OP_RANDOM_NORMAL, {}, {zeros(SY_DTYPE_F32, {8})});
  op_case.params.random.a = 0.0;
  op_case.params.random.b = -1.0;
  op_case.expected_error = StatusCode::kInvalidArgument;
  return op_case;
}

}  // namespace

void add_random_cases(CaseTable& table) {
  add_case(table, SY_OP_RANDOM_NORMAL, SY_DTYPE_F32, "error/negative_deviation",
           build_negative_deviation);
  for (sy_op op : {SY_OP_RANDOM_UNIFORM, SY_OP_RANDOM_NORMAL}) {
    for (sy_dtype dtype : kFloatDtypes) {
      for (const RandomSpec& spec : kSpecs) {
        add_case(table, op, dtype, spec.name,
                 [op, dtype, spec](Generator& gen) { return build_random(gen, op, dtype, spec); });
      }
    }
  }
}

}  // namespace switchyard::conformance
