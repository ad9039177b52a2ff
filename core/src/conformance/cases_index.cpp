// GATHER and SCATTER_ADD along each axis of a rank-3 tensor, for float and integer data, I32 and
// I64 indices with repeats, a permuted data tensor, and out-of-range indices (synchronous
// backends only).
#include "conformance/cases.h"
#include "support/dtype_codec.h"

namespace switchyard::conformance {
namespace {

const Shape kDataShape = {5, 4, 3};

struct IndexSpec {
  int axis;
  int64_t length;  // L, the number of indices; more than the axis size forces repeats
  sy_dtype index_dtype;
  bool permuted;
};

const IndexSpec kSpecs[] = {
    {0, 7, SY_DTYPE_I64, false},
    {1, 2, SY_DTYPE_I32, false},
    {2, 5, SY_DTYPE_I64, false},
    {1, 6, SY_DTYPE_I32, true},
};

std::string index_variant(const IndexSpec& spec) {
  return "axis" + std::to_string(spec.axis) + "/" + std::to_string(spec.length) + "_indices_" +
         dtype_label(spec.index_dtype) + (spec.permuted ? "/permuted_data" : "");
}

HostTensor data_tensor(Generator& gen, sy_dtype dtype, const Shape& shape) {
  if (!is_floating(dtype)) return random_integers(gen, dtype, shape, -1000, 1000);
  return random_tensor(gen, dtype, shape, -2.0, 2.0);
}

OpCase build_index(Generator& gen, sy_op op, sy_dtype dtype, const IndexSpec& spec) {
  const auto axis = static_cast<size_t>(spec.axis);
  Shape selected_shape = kDataShape;
  selected_shape[axis] = spec.length;
  HostTensor indices =
      random_integers(gen, spec.index_dtype, {spec.length}, 0, kDataShape[axis] - 1);
  OpCase op_case;
  if (op == SY_OP_GATHER) {
    HostTensor x = data_tensor(gen, dtype, kDataShape);
    if (spec.permuted) x = permuted_layout(x, {2, 0, 1});
    op_case = make_op_case(op, {x, indices}, {zeros(dtype, selected_shape)});
  } else {
    HostTensor src = data_tensor(gen, dtype, selected_shape);
    if (spec.permuted) src = permuted_layout(src, {2, 0, 1});
    // SCATTER_ADD accumulates into the output's existing contents.
    op_case = make_op_case(op, {src, indices}, {data_tensor(gen, dtype, kDataShape)});
  }
  op_case.params.index.axis = spec.axis;
  return op_case;
}

OpCase build_index_out_of_range(Generator& gen, sy_op op, double bad_index) {
  OpCase op_case = build_index(gen, op, SY_DTYPE_F32, kSpecs[0]);
  op_case.inputs[1].storage[3] = bad_index;
  op_case.expected_error = StatusCode::kInvalidArgument;
  op_case.error_needs_synchronous_backend = true;
  return op_case;
}

// A drawn GATHER or SCATTER_ADD: data of rank 1 to 4 (the last axis up to 40, the others up to
// 6) in any data dtype, along any axis, 1 to twice the axis's length of I32 or I64 indices
// (repeats included), the data tensor stored in another axis order a third of the time.
struct DrawnIndexSpec {
  Shape data;
  int axis = 0;
  int64_t length = 1;
  sy_dtype index_dtype = SY_DTYPE_I64;
  std::vector<int> order;
};

DrawnIndexSpec draw_index_spec(Generator& g, std::string& text) {
  DrawnIndexSpec spec;
  const auto rank = static_cast<size_t>(g.integer(1, 4));
  spec.data = draw_shape(g, rank, 40, 6);
  spec.axis = static_cast<int>(g.integer(0, static_cast<int64_t>(rank) - 1));
  spec.length = g.integer(1, 2 * spec.data[static_cast<size_t>(spec.axis)]);
  spec.index_dtype = chance(g, 0.5) ? SY_DTYPE_I32 : SY_DTYPE_I64;
  if (chance(g, 0.33)) spec.order = draw_storage_order(g, rank);
  text = join_extents(spec.data) + "/axis" + std::to_string(spec.axis) + "/" +
         std::to_string(spec.length) + "_indices_" + dtype_label(spec.index_dtype);
  text += order_text("stored", spec.order);
  return spec;
}

OpCase build_drawn_index(Generator& gen, sy_op op, sy_dtype dtype, const DrawnIndexSpec& spec) {
  const auto axis = static_cast<size_t>(spec.axis);
  Shape selected = spec.data;
  selected[axis] = spec.length;
  HostTensor indices =
      random_integers(gen, spec.index_dtype, {spec.length}, 0, spec.data[axis] - 1);
  const auto stored = [&](HostTensor t) {
    return spec.order.empty() ? t : permuted_layout(t, spec.order);
  };
  OpCase op_case;
  if (op == SY_OP_GATHER) {
    op_case = make_op_case(op, {stored(data_tensor(gen, dtype, spec.data)), indices},
                           {zeros(dtype, selected)});
  } else {
    op_case = make_op_case(op, {stored(data_tensor(gen, dtype, selected)), indices},
                           {data_tensor(gen, dtype, spec.data)});
  }
  op_case.params.index.axis = spec.axis;
  return op_case;
}

}  // namespace

void add_drawn_index_cases(CaseTable& table, uint64_t seed, int count) {
  for (sy_op op : {SY_OP_GATHER, SY_OP_SCATTER_ADD}) {
    add_drawn_op(
        table, seed, count, op,
        [op](Generator& g, sy_dtype dtype, std::string& text) {
          const DrawnIndexSpec spec = draw_index_spec(g, text);
          return
              [op, dtype, spec](Generator& gen) { return build_drawn_index(gen, op, dtype, spec); };
        },
        draw_any_dtype);
  }
}

void add_index_cases(CaseTable& table) {
  for (sy_op op : {SY_OP_GATHER, SY_OP_SCATTER_ADD}) {
    for (sy_dtype dtype : kAllDtypes) {
      for (const IndexSpec& spec : kSpecs) {
        if (spec.permuted && dtype != SY_DTYPE_F32) continue;
        add_case(table, op, dtype, index_variant(spec),
                 [op, dtype, spec](Generator& gen) { return build_index(gen, op, dtype, spec); });
      }
    }
    add_case(table, op, SY_DTYPE_F32, "error/index_too_large",
             [op](Generator& gen) { return build_index_out_of_range(gen, op, 5.0); });
    add_case(table, op, SY_DTYPE_F32, "error/negative_index",
             [op](Generator& gen) { return build_index_out_of_range(gen, op, -1.0); });
  }
}

}  // namespace switchyard::conformance
