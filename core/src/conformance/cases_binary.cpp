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

}  // namespace

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
