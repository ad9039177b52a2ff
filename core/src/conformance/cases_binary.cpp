// Elementwise binary ops (ADD..CMP_EQ): same shapes, numpy broadcasting, the scalar form, rank-0
// and stride-0 operands, and permuted / sliced operands.
#include "conformance/cases.h"
#include "conformance/shape_util.h"

namespace switchyard::conformance {
namespace {

enum class Form {
  kSameShape,
  kBroadcast,
  kScalar,
  kRank0B,
  kStrided,
  kStrideZeroB,
  kChannelsLast,
  kChannelsLastRows
};

HostTensor operand_a(Generator& gen, sy_op op, sy_dtype dtype, const Shape& shape) {
  switch (op) {
    case SY_OP_POW:
      return random_tensor(gen, dtype, shape, 0.1, 3.0);
    case SY_OP_CMP_GT:
    case SY_OP_CMP_EQ:
      return random_integers(gen, dtype, shape, -2, 2);  // equal pairs occur
    default:
      return random_tensor(gen, dtype, shape, -4.0, 4.0);
  }
}

HostTensor operand_b(Generator& gen, sy_op op, sy_dtype dtype, const Shape& shape) {
  switch (op) {
    case SY_OP_DIV:
      return random_tensor_away_from_zero(gen, dtype, shape, 0.25, 4.0);
    case SY_OP_POW:
      return random_tensor(gen, dtype, shape, -2.0, 2.0);
    case SY_OP_CMP_GT:
    case SY_OP_CMP_EQ:
      return random_integers(gen, dtype, shape, -2, 2);
    default:
      return random_tensor(gen, dtype, shape, -4.0, 4.0);
  }
}

// Not representable in f16/bf16 on purpose: the scalar is rounded to f32 only.
double scalar_for(sy_op op) {
  switch (op) {
    case SY_OP_POW:
      return 1.5;
    case SY_OP_CMP_GT:
    case SY_OP_CMP_EQ:
      return 1.0;
    case SY_OP_SUB:
      return -1.3;
    default:
      return 0.3;
  }
}

OpCase binary_case(sy_op op, const HostTensor& a, const HostTensor& b) {
  const Shape out_shape = broadcast_shapes(a.shape, b.shape);
  return make_op_case(op, {a, b}, {zeros(a.dtype, out_shape)});
}

OpCase build_binary(Generator& gen, sy_op op, sy_dtype dtype, Form form) {
  switch (form) {
    case Form::kSameShape:
      return binary_case(op, operand_a(gen, op, dtype, {6, 7}), operand_b(gen, op, dtype, {6, 7}));
    case Form::kBroadcast:
      return binary_case(op, operand_a(gen, op, dtype, {4, 1, 5}),
                         operand_b(gen, op, dtype, {3, 1}));
    case Form::kRank0B:
      return binary_case(op, operand_a(gen, op, dtype, {3, 4}), operand_b(gen, op, dtype, {}));
    case Form::kStrided:
      return binary_case(op, permuted_layout(operand_a(gen, op, dtype, {5, 6}), {1, 0}),
                         sliced_layout(operand_b(gen, op, dtype, {5, 6}), 1, gen));
    case Form::kStrideZeroB:
      return binary_case(op, operand_a(gen, op, dtype, {5, 6}),
                         broadcast_layout(operand_b(gen, op, dtype, {1, 6}), {5, 6}));
    case Form::kChannelsLast: {
      // A channels-last activation times a per-channel [N, C, 1, 1] value, into a channels-last
      // output: what an importer's squeeze-and-excitation block runs (SY_CAP_CHANNELS_LAST).
      const HostTensor a = permuted_layout(operand_a(gen, op, dtype, {2, 5, 3, 4}), {0, 2, 3, 1});
      OpCase op_case = binary_case(op, a, operand_b(gen, op, dtype, {2, 5, 1, 1}));
      op_case.outputs[0] = permuted_layout(op_case.outputs[0], {0, 2, 3, 1});
      return op_case;
    }
    case Form::kChannelsLastRows: {
      // One sample of 90 pixels x 24 channels: onednn repeats b's row 22 times to make long inner
      // loops, which leaves 4 groups and 2 rows over.
      const HostTensor a = permuted_layout(operand_a(gen, op, dtype, {1, 24, 9, 10}), {0, 2, 3, 1});
      OpCase op_case = binary_case(op, a, operand_b(gen, op, dtype, {1, 24, 1, 1}));
      op_case.outputs[0] = permuted_layout(op_case.outputs[0], {0, 2, 3, 1});
      return op_case;
    }
    case Form::kScalar:
      break;
  }
  HostTensor a = operand_a(gen, op, dtype, {5, 7});
  OpCase op_case = make_op_case(op, {a}, {zeros(dtype, a.shape)});
  op_case.params.binary.use_scalar = 1;
  op_case.params.binary.scalar = scalar_for(op);
  return op_case;
}

struct FormVariant {
  Form form;
  const char* name;
  bool every_dtype;
};

constexpr FormVariant kForms[] = {
    {Form::kSameShape, "same_shape", true},
    {Form::kBroadcast, "broadcast/[4,1,5]x[3,1]", true},
    {Form::kScalar, "use_scalar", true},
    {Form::kRank0B, "broadcast/rank0_b", false},
    {Form::kStrided, "strided/permuted_a_sliced_b", true},
    {Form::kStrideZeroB, "strided/stride0_b", false},
    {Form::kChannelsLast, "strided/channels_last_a_out", false},
    {Form::kChannelsLastRows, "strided/channels_last_90x24_rows", false},
};

// A drawn call: an output of rank 0 to 4 (the last axis up to 40, the others up to 6), or one in
// seven of 40,000 to 300,000 elements over 1 to 3 axes; a and b
// each take the output's shape with some axes 1 and some leading axes dropped; each operand dense,
// stored in another axis order, inside a padded buffer, or expanded to the output's shape with
// stride 0; the output dense or in a's axis order; or the scalar form.
enum class DrawnLayout { kDense, kPermuted, kSliced, kExpanded };

struct DrawnBinarySpec {
  Shape out, a, b;
  DrawnLayout layout_a = DrawnLayout::kDense, layout_b = DrawnLayout::kDense;
  std::vector<int> order_a, order_b;
  bool out_in_a_order = false;
  bool scalar = false;
};

const char* layout_text(DrawnLayout layout) {
  switch (layout) {
    case DrawnLayout::kPermuted:
      return "permuted";
    case DrawnLayout::kSliced:
      return "sliced";
    case DrawnLayout::kExpanded:
      return "expanded";
    case DrawnLayout::kDense:
      break;
  }
  return "dense";
}

Shape draw_operand_shape(Generator& g, const Shape& out) {
  const auto dropped = static_cast<size_t>(g.integer(0, static_cast<int64_t>(out.size())) / 2);
  Shape shape(out.begin() + static_cast<std::ptrdiff_t>(dropped), out.end());
  for (int64_t& extent : shape) {
    if (chance(g, 0.3)) extent = 1;
  }
  return shape;
}

DrawnLayout draw_operand_layout(Generator& g, const Shape& shape, const Shape& out,
                                std::vector<int>& order) {
  switch (g.integer(0, 4)) {
    case 0:
      order = draw_storage_order(g, shape.size());
      return order.empty() ? DrawnLayout::kDense : DrawnLayout::kPermuted;
    case 1:
      return DrawnLayout::kSliced;
    case 2:
      return shape != out ? DrawnLayout::kExpanded : DrawnLayout::kDense;
    default:
      return DrawnLayout::kDense;
  }
}

DrawnBinarySpec draw_binary_spec(Generator& g, std::string& text) {
  DrawnBinarySpec spec;
  if (chance(g, 0.15)) {
    spec.out = draw_large_shape(g, static_cast<size_t>(g.integer(1, 3)));
  } else {
    const auto rank = static_cast<size_t>(g.integer(0, 4));
    spec.out = draw_shape(g, rank, 40, 6);
  }
  if (chance(g, 0.1)) {
    spec.scalar = true;
    spec.a = spec.out;
    text = "out" + join_extents(spec.out) + "/use_scalar";
    return spec;
  }
  spec.a = chance(g, 0.5) ? spec.out : draw_operand_shape(g, spec.out);
  spec.b = draw_operand_shape(g, spec.out);
  // The output is the broadcast of a and b, which may be smaller than the drawn shape.
  spec.out = broadcast_shapes(spec.a, spec.b);
  spec.layout_a = draw_operand_layout(g, spec.a, spec.out, spec.order_a);
  spec.layout_b = draw_operand_layout(g, spec.b, spec.out, spec.order_b);
  spec.out_in_a_order =
      spec.layout_a == DrawnLayout::kPermuted && spec.a == spec.out && chance(g, 0.5);
  text = "a" + join_extents(spec.a) + "/" + layout_text(spec.layout_a) + "/b" +
         join_extents(spec.b) + "/" + layout_text(spec.layout_b);
  if (spec.out_in_a_order) text += "/out_permuted";
  return spec;
}

HostTensor drawn_operand(Generator& gen, const HostTensor& dense, DrawnLayout layout,
                         const std::vector<int>& order, const Shape& out) {
  switch (layout) {
    case DrawnLayout::kPermuted:
      return permuted_layout(dense, order);
    case DrawnLayout::kSliced:
      return sliced_layout(dense, 1, gen);
    case DrawnLayout::kExpanded:
      return broadcast_layout(dense, out);
    case DrawnLayout::kDense:
      break;
  }
  return dense;
}

OpCase build_drawn_binary(Generator& gen, sy_op op, sy_dtype dtype, const DrawnBinarySpec& spec) {
  if (spec.scalar) {
    OpCase op_case = make_op_case(op, {operand_a(gen, op, dtype, spec.a)}, {zeros(dtype, spec.a)});
    op_case.params.binary.use_scalar = 1;
    op_case.params.binary.scalar = scalar_for(op);
    return op_case;
  }
  const HostTensor a =
      drawn_operand(gen, operand_a(gen, op, dtype, spec.a), spec.layout_a, spec.order_a, spec.out);
  const HostTensor b =
      drawn_operand(gen, operand_b(gen, op, dtype, spec.b), spec.layout_b, spec.order_b, spec.out);
  OpCase op_case = binary_case(op, a, b);
  if (spec.out_in_a_order) op_case.outputs[0] = permuted_layout(op_case.outputs[0], spec.order_a);
  return op_case;
}

}  // namespace

void add_drawn_binary_cases(CaseTable& table, uint64_t seed, int count) {
  for (int op_value = SY_OP_ADD; op_value <= SY_OP_CMP_EQ; ++op_value) {
    const auto op = static_cast<sy_op>(op_value);
    add_drawn_op(table, seed, count, op, [op](Generator& g, sy_dtype dtype, std::string& text) {
      const DrawnBinarySpec spec = draw_binary_spec(g, text);
      return [op, dtype, spec](Generator& gen) { return build_drawn_binary(gen, op, dtype, spec); };
    });
  }
}

void add_binary_cases(CaseTable& table) {
  for (int op_value = SY_OP_ADD; op_value <= SY_OP_CMP_EQ; ++op_value) {
    const auto op = static_cast<sy_op>(op_value);
    for (sy_dtype dtype : kFloatDtypes) {
      for (const FormVariant& variant : kForms) {
        if (!variant.every_dtype && dtype != SY_DTYPE_F32) continue;
        const Form form = variant.form;
        add_case(table, op, dtype, variant.name,
                 [op, dtype, form](Generator& gen) { return build_binary(gen, op, dtype, form); });
      }
    }
  }
}

}  // namespace switchyard::conformance
