// CROSS_ENTROPY and its backward: mean and sum reductions, I32 and I64 labels, small and larger
// batches, and an out-of-range label (synchronous backends only).
#include "conformance/cases.h"

namespace switchyard::conformance {
namespace {

struct CrossEntropySpec {
  int64_t rows;
  int64_t classes;
  sy_dtype label_dtype;
  uint32_t reduction;  // 0 = mean, 1 = sum
};

std::string cross_entropy_variant(const CrossEntropySpec& spec) {
  return std::to_string(spec.rows) + "x" + std::to_string(spec.classes) + "/" +
         (spec.reduction == 0 ? "mean" : "sum") + "/labels_" +
         (spec.label_dtype == SY_DTYPE_I32 ? "i32" : "i64");
}

const CrossEntropySpec kSpecs[] = {
    {8, 5, SY_DTYPE_I32, 0}, {8, 5, SY_DTYPE_I64, 0},   {8, 5, SY_DTYPE_I32, 1},
    {8, 5, SY_DTYPE_I64, 1}, {64, 10, SY_DTYPE_I64, 0}, {1, 3, SY_DTYPE_I32, 1},
};

OpCase build_cross_entropy(Generator& gen, sy_op op, sy_dtype dtype, const CrossEntropySpec& spec) {
  HostTensor logits = random_tensor(gen, dtype, {spec.rows, spec.classes}, -3.0, 3.0);
  HostTensor labels = random_integers(gen, spec.label_dtype, {spec.rows}, 0, spec.classes - 1);
  OpCase op_case;
  if (op == SY_OP_CROSS_ENTROPY) {
    op_case = make_op_case(op, {logits, labels}, {zeros(dtype, {})});
  } else {
    HostTensor grad_loss = random_tensor(gen, dtype, {}, 0.5, 2.0);
    op_case =
        make_op_case(op, {logits, labels, grad_loss}, {zeros(dtype, {spec.rows, spec.classes})});
  }
  op_case.params.cross_entropy.reduction = spec.reduction;
  return op_case;
}

OpCase build_label_out_of_range(Generator& gen, sy_op op) {
  OpCase op_case = build_cross_entropy(gen, op, SY_DTYPE_F32, {4, 3, SY_DTYPE_I32, 0});
  op_case.inputs[1].storage[2] = 3.0;  // C = 3: valid labels are 0..2
  op_case.expected_error = StatusCode::kInvalidArgument;
  op_case.error_needs_synchronous_backend = true;
  return op_case;
}

}  // namespace

// A drawn CROSS_ENTROPY or its backward: up to 300 rows (one in seven up to 1,000) of up to 200
// classes (one in seven up to 3,000), I32 or I64 labels, mean or sum.
void add_drawn_cross_entropy_cases(CaseTable& table, uint64_t seed, int count) {
  for (sy_op op : {SY_OP_CROSS_ENTROPY, SY_OP_CROSS_ENTROPY_BACKWARD}) {
    add_drawn_op(table, seed, count, op, [op](Generator& g, sy_dtype dtype, std::string& text) {
      CrossEntropySpec spec{};
      spec.rows = draw_extent(g, chance(g, 0.15) ? 1000 : 300);
      spec.classes = draw_extent(g, chance(g, 0.15) ? 3000 : 200);
      spec.label_dtype = chance(g, 0.5) ? SY_DTYPE_I32 : SY_DTYPE_I64;
      spec.reduction = chance(g, 0.5) ? 1u : 0u;
      text = cross_entropy_variant(spec);
      return
          [op, dtype, spec](Generator& gen) { return build_cross_entropy(gen, op, dtype, spec); };
    });
  }
}

void add_cross_entropy_cases(CaseTable& table) {
  for (sy_op op : {SY_OP_CROSS_ENTROPY, SY_OP_CROSS_ENTROPY_BACKWARD}) {
    for (sy_dtype dtype : kFloatDtypes) {
      for (const CrossEntropySpec& spec : kSpecs) {
        add_case(table, op, dtype, cross_entropy_variant(spec), [op, dtype, spec](Generator& gen) {
          return build_cross_entropy(gen, op, dtype, spec);
        });
      }
    }
    add_case(table, op, SY_DTYPE_F32, "error/label_out_of_range",
             [op](Generator& gen) { return build_label_out_of_range(gen, op); });
  }
}

}  // namespace switchyard::conformance
