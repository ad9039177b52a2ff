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
  std::vector<int> storage_order = {};  // kPermutedOutput: the output stored in this axis order
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
    {"permuted_output", 3, 100, -1.0, 1.0, {10, 20}, RandomLayout::kPermutedOutput, {1, 0}},
    {"sliced_output", 5, 0, 2.0, 4.0, {6, 7}, RandomLayout::kSlicedOutput},
    // Enough normals that some have a large radius sqrt(-2 log u1) and a small z, where an angle
    // 2 pi u2 rounded to f32 moves z past the element bound (onednn did, until 2026-11-29).
    {"seed11/offset0/large", 11, 0, 0.25, 0.5, {1 << 19}, RandomLayout::kContiguous},
};

OpCase build_random(Generator& gen, sy_op op, sy_dtype dtype, const RandomSpec& spec) {
  HostTensor out = zeros(dtype, spec.shape);
  if (spec.layout == RandomLayout::kPermutedOutput) out = permuted_layout(out, spec.storage_order);
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

// A drawn call: any seed; an offset near 0, near a multiple of 2^32, near 2^64 (the counter
// wraps) or anywhere; rank 0 to 3 (the last axis up to 70, the others up to 9; one in five 40,000
// to 300,000 elements, split between threads); the output dense, in another axis order or inside
// a padded buffer; bounds (a mean and deviation) from the draw too.
RandomSpec draw_random_spec(Generator& g, std::string& text) {
  RandomSpec spec{};
  spec.name = "";
  spec.seed = g.next_u64();
  switch (g.integer(0, 3)) {
    case 0:
      spec.offset = static_cast<uint64_t>(g.integer(0, 100));
      break;
    case 1:
      spec.offset = (static_cast<uint64_t>(g.integer(1, 1000)) << 32) -
                    static_cast<uint64_t>(g.integer(0, 64));
      break;
    case 2:
      spec.offset = ~uint64_t{0} - static_cast<uint64_t>(g.integer(0, 200));
      break;
    default:
      spec.offset = g.next_u64();
      break;
  }
  spec.a = g.uniform(-3.0, 3.0);
  spec.b = spec.a + g.uniform(0.0, 4.0);
  if (chance(g, 0.2)) {
    spec.shape = draw_large_shape(g, static_cast<size_t>(g.integer(1, 3)));
  } else {
    const auto rank = static_cast<size_t>(g.integer(0, 3));
    spec.shape = draw_shape(g, rank, 70, 9);
  }
  spec.layout = static_cast<RandomLayout>(g.integer(0, 2));
  if (spec.layout == RandomLayout::kPermutedOutput) {
    spec.storage_order = draw_storage_order(g, spec.shape.size());
    if (spec.storage_order.empty()) spec.layout = RandomLayout::kContiguous;
  }
  const char* const layouts[] = {"", "/permuted_output", "/sliced_output"};
  text = join_extents(spec.shape) + "/seed" + std::to_string(spec.seed) + "/offset" +
         std::to_string(spec.offset) + layouts[static_cast<int>(spec.layout)];
  return spec;
}

}  // namespace

void add_drawn_random_cases(CaseTable& table, uint64_t seed, int count) {
  for (sy_op op : {SY_OP_RANDOM_UNIFORM, SY_OP_RANDOM_NORMAL}) {
    add_drawn_op(table, seed, count, op, [op](Generator& g, sy_dtype dtype, std::string& text) {
      RandomSpec spec = draw_random_spec(g, text);
      // RANDOM_NORMAL's b is the deviation: the drawn span.
      if (op == SY_OP_RANDOM_NORMAL) spec.b -= spec.a;
      return [op, dtype, spec](Generator& gen) { return build_random(gen, op, dtype, spec); };
    });
  }
}

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
