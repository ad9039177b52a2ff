// Reductions (REDUCE_SUM, REDUCE_MEAN, REDUCE_MAX) over one, several, all and no axes, with and
// without keep_dims; ARGMAX along each axis with I32 and I64 output, including ties.
#include "conformance/cases.h"
#include "conformance/shape_util.h"

namespace switchyard::conformance {
namespace {

struct ReduceSpec {
  const char* name;
  Shape shape;
  uint32_t axes_mask;
  bool keep_dims;
  std::vector<int> storage_order = {};  // input stored in this axis order (empty: row-major)
  // Values in [0.25, 2] rather than [-2, 2]: sums without cancellation, whose f32 error any
  // summation order keeps near sqrt(n) roundings.
  bool positive = false;
};

const ReduceSpec kReduceSpecs[] = {
    {"axis2/keep_dims", {4, 5, 6}, 0b100, true},
    {"axis0", {4, 5, 6}, 0b001, false},
    {"axes0_2/keep_dims", {4, 5, 6}, 0b101, true},
    {"axes0_2", {4, 5, 6}, 0b101, false},
    {"axes1_2", {4, 5, 6}, 0b110, false},
    {"all_axes/rank0", {4, 5, 6}, 0b111, false},
    {"all_axes/keep_dims", {4, 5, 6}, 0b111, true},
    {"no_axes", {4, 5, 6}, 0b000, false},
    {"axis1/permuted_input", {4, 5, 6}, 0b010, false, {2, 0, 1}},
    {"large/axis1", {16, 300}, 0b10, false},
    // A global average pool of channels-last activations: every sample's kept channels are one
    // dense row (onednn's row reduction, one batch entry after another).
    {"axes2_3/keep_dims/channels_last", {3, 20, 4, 5}, 0b1100, true, {0, 2, 3, 1}},
    // 90 rows of 24 channels: onednn reads 22 rows as one (4 groups, 2 rows over), threads split
    // the rows.
    {"axes2_3/keep_dims/channels_last/90x24_rows", {2, 24, 9, 10}, 0b1100, true, {0, 2, 3, 1}},
};

OpCase build_reduce(Generator& gen, sy_op op, sy_dtype dtype, const ReduceSpec& spec) {
  HostTensor x = random_tensor(gen, dtype, spec.shape, spec.positive ? 0.25 : -2.0, 2.0);
  if (!spec.storage_order.empty()) x = permuted_layout(x, spec.storage_order);
  OpCase op_case = make_op_case(
      op, {x}, {zeros(dtype, reduced_shape(spec.shape, spec.axes_mask, spec.keep_dims))});
  op_case.params.reduce.axes_mask = spec.axes_mask;
  op_case.params.reduce.keep_dims = spec.keep_dims ? 1u : 0u;
  return op_case;
}

struct ArgmaxSpec {
  int axis;
  bool keep_dims;
  sy_dtype index_dtype;
  bool ties;      // small integers: many equal maxima, the smallest index must win
  bool permuted;  // input stored in another axis order
};

std::string argmax_variant(const ArgmaxSpec& spec) {
  std::string name =
      "axis" + std::to_string(spec.axis) + "/" + (spec.index_dtype == SY_DTYPE_I32 ? "i32" : "i64");
  if (spec.keep_dims) name += "/keep_dims";
  if (spec.ties) name += "/ties_smallest_index";
  if (spec.permuted) name += "/permuted_input";
  return name;
}

const ArgmaxSpec kArgmaxSpecs[] = {
    {0, false, SY_DTYPE_I64, false, false}, {1, false, SY_DTYPE_I32, false, false},
    {2, true, SY_DTYPE_I64, false, false},  {2, false, SY_DTYPE_I32, false, false},
    {1, true, SY_DTYPE_I64, true, false},   {2, false, SY_DTYPE_I32, true, false},
    {0, false, SY_DTYPE_I32, false, true},
};

OpCase build_argmax(Generator& gen, sy_dtype dtype, const ArgmaxSpec& spec,
                    const Shape& shape = {5, 7, 3}, const std::vector<int>& order = {1, 2, 0}) {
  HostTensor x = spec.ties ? random_integers(gen, dtype, shape, -1, 1)
                           : distinct_tensor(gen, dtype, shape, 0.125);
  if (spec.permuted) x = permuted_layout(x, order);
  const uint32_t mask = 1u << spec.axis;
  OpCase op_case = make_op_case(
      SY_OP_ARGMAX, {x}, {zeros(spec.index_dtype, reduced_shape(shape, mask, spec.keep_dims))});
  op_case.params.reduce.axes_mask = mask;
  op_case.params.reduce.keep_dims = spec.keep_dims ? 1u : 0u;
  return op_case;
}

// A drawn reduction: rank 1 to 4 (the last axis up to 70, the others up to 9; one in seven 40,000
// to 300,000 elements), any set of axes
// (none and all included), keep_dims or not, the input stored in another axis order a third of the
// time. Sums and means get positive values: hundreds of values of both signs can sum to nearly 0,
// whose f32 error (vulkan's: NMSE 1.5e-10 for 336 values summing to -0.066) says how
// ill-conditioned the draw was, not whether the op is right. A lost or repeated element is still
// far over the tolerance.
ReduceSpec draw_reduce_spec(Generator& g, sy_op op, std::string& text) {
  ReduceSpec spec;
  spec.name = "";
  spec.positive = op != SY_OP_REDUCE_MAX;
  const auto rank = static_cast<size_t>(g.integer(1, 4));
  spec.shape = draw_shape(g, rank, 70, 9);
  if (chance(g, 0.15)) spec.shape = draw_large_shape(g, rank);
  spec.axes_mask = static_cast<uint32_t>(g.integer(0, (int64_t{1} << rank) - 1));
  spec.keep_dims = chance(g, 0.5);
  if (chance(g, 0.33)) spec.storage_order = draw_storage_order(g, rank);
  text = join_extents(spec.shape) + "/axes_mask" + std::to_string(spec.axes_mask);
  if (spec.keep_dims) text += "/keep_dims";
  text += order_text("stored", spec.storage_order);
  return spec;
}

// A drawn ARGMAX: rank 1 to 4 (the last axis up to 70, the others up to 9; one in seven 40,000
// to 300,000 elements), any axis, I32 or I64 indices, keep_dims or not; small integers (ties: the
// smallest index wins) half of the time and whenever distinct values would not be exact in F16 or
// BF16 (over 256 elements); the input stored in another axis order a third of the time.
struct DrawnArgmax {
  ArgmaxSpec spec;
  Shape shape;
  std::vector<int> order;
};

DrawnArgmax draw_argmax(Generator& g, sy_dtype dtype, std::string& text) {
  DrawnArgmax drawn;
  const auto rank = static_cast<size_t>(g.integer(1, 4));
  drawn.shape = draw_shape(g, rank, 70, 9);
  if (chance(g, 0.15)) drawn.shape = draw_large_shape(g, rank);
  drawn.spec.axis = static_cast<int>(g.integer(0, static_cast<int64_t>(rank) - 1));
  drawn.spec.keep_dims = chance(g, 0.5);
  drawn.spec.index_dtype = chance(g, 0.5) ? SY_DTYPE_I32 : SY_DTYPE_I64;
  const bool exact_distinct = dtype == SY_DTYPE_F32 || shape_element_count(drawn.shape) <= 256;
  drawn.spec.ties = !exact_distinct || chance(g, 0.5);
  if (chance(g, 0.33)) drawn.order = draw_storage_order(g, rank);
  drawn.spec.permuted = !drawn.order.empty();
  text = join_extents(drawn.shape) + "/" + argmax_variant(drawn.spec);
  if (drawn.spec.permuted) {
    text += order_text("stored", drawn.order);
  }
  return drawn;
}

}  // namespace

void add_drawn_reduce_cases(CaseTable& table, uint64_t seed, int count) {
  for (sy_op op : {SY_OP_REDUCE_SUM, SY_OP_REDUCE_MEAN, SY_OP_REDUCE_MAX}) {
    add_drawn_op(table, seed, count, op, [op](Generator& g, sy_dtype dtype, std::string& text) {
      const ReduceSpec spec = draw_reduce_spec(g, op, text);
      return [op, dtype, spec](Generator& gen) { return build_reduce(gen, op, dtype, spec); };
    });
  }
  add_drawn_op(table, seed, count, SY_OP_ARGMAX,
               [](Generator& g, sy_dtype dtype, std::string& text) {
                 const DrawnArgmax drawn = draw_argmax(g, dtype, text);
                 return [dtype, drawn](Generator& gen) {
                   return build_argmax(gen, dtype, drawn.spec, drawn.shape, drawn.order);
                 };
               });
}

void add_reduce_cases(CaseTable& table) {
  for (sy_op op : {SY_OP_REDUCE_SUM, SY_OP_REDUCE_MEAN, SY_OP_REDUCE_MAX}) {
    for (sy_dtype dtype : kFloatDtypes) {
      for (const ReduceSpec& spec : kReduceSpecs) {
        add_case(table, op, dtype, spec.name,
                 [op, dtype, spec](Generator& gen) { return build_reduce(gen, op, dtype, spec); });
      }
    }
  }
  for (sy_dtype dtype : kFloatDtypes) {
    for (const ArgmaxSpec& spec : kArgmaxSpecs) {
      add_case(table, SY_OP_ARGMAX, dtype, argmax_variant(spec),
               [dtype, spec](Generator& gen) { return build_argmax(gen, dtype, spec); });
    }
  }
}

}  // namespace switchyard::conformance
