// SOFTMAX, LOG_SOFTMAX and their backward ops along the last, a middle and the first axis, over
// contiguous and permuted inputs. The backward ops get a genuine forward output as `y`.
#include <algorithm>
#include <cmath>
#include <limits>

#include "conformance/cases.h"
#include "conformance/shape_util.h"

namespace switchyard::conformance {
namespace {

struct SoftmaxSpec {
  const char* name;
  Shape shape;
  int axis;
  std::vector<int> storage_order;  // inputs stored in this axis order (empty: row-major)
};

const SoftmaxSpec kSoftmaxSpecs[] = {
    {"last_axis", {4, 10}, 1, {}},
    {"middle_axis", {3, 6, 5}, 1, {}},
    {"axis0", {6, 4}, 0, {}},
    {"wide_last_axis", {2, 3, 64}, 2, {}},
    {"last_axis/permuted_input", {3, 6, 5}, 2, {2, 0, 1}},
    // Along one element: exactly 1 (log: 0), as the reference and PyTorch give (onednn once gave
    // log(1) = 1.4e-6 from oneDNN's logsoftmax; 160 of them are over the f32 tolerance).
    {"singleton_last_axis", {40, 4, 1}, 2, {}},
};

// softmax (or log_softmax) of the dense tensor x along `axis`, in double, rounded to x's dtype.
HostTensor host_softmax(const HostTensor& x, int axis, bool log_form) {
  const std::vector<double> values = x.logical_values();
  const auto axis_index = static_cast<size_t>(axis);
  int64_t inner = 1;
  for (size_t d = axis_index + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  const int64_t extent = x.shape[axis_index];
  const int64_t outer = x.element_count() / (extent * inner);
  std::vector<double> out(values.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * extent * inner + i;
      double max_value = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < extent; ++k)
        max_value = std::max(max_value, values[static_cast<size_t>(base + k * inner)]);
      double sum = 0.0;
      for (int64_t k = 0; k < extent; ++k)
        sum += std::exp(values[static_cast<size_t>(base + k * inner)] - max_value);
      for (int64_t k = 0; k < extent; ++k) {
        const double shifted = values[static_cast<size_t>(base + k * inner)] - max_value;
        out[static_cast<size_t>(base + k * inner)] =
            log_form ? shifted - std::log(sum) : std::exp(shifted) / sum;
      }
    }
  }
  return tensor_from_values(x.dtype, x.shape, out);
}

OpCase build_softmax(Generator& gen, sy_op op, sy_dtype dtype, const SoftmaxSpec& spec) {
  HostTensor x = random_tensor(gen, dtype, spec.shape, -4.0, 4.0);
  std::vector<HostTensor> inputs;
  if (op == SY_OP_SOFTMAX || op == SY_OP_LOG_SOFTMAX) {
    inputs.push_back(x);
  } else {
    HostTensor grad_out = random_tensor(gen, dtype, spec.shape, -1.0, 1.0);
    inputs.push_back(grad_out);
    inputs.push_back(host_softmax(x, spec.axis, op == SY_OP_LOG_SOFTMAX_BACKWARD));
  }
  if (!spec.storage_order.empty()) {
    for (HostTensor& input : inputs) input = permuted_layout(input, spec.storage_order);
  }
  OpCase op_case = make_op_case(op, inputs, {zeros(dtype, spec.shape)});
  op_case.params.softmax.axis = spec.axis;
  return op_case;
}

// A drawn softmax: rank 1 to 4 (the softmax axis up to 300, the others up to 7; one in seven
// 40,000 to 300,000 elements), any axis, the
// inputs stored in another axis order a third of the time; no backward along 2 elements.
SoftmaxSpec draw_softmax_spec(Generator& g, bool backward, std::string& text) {
  SoftmaxSpec spec;
  spec.name = "";
  const auto rank = static_cast<size_t>(g.integer(1, 4));
  spec.axis = static_cast<int>(g.integer(0, static_cast<int64_t>(rank) - 1));
  for (size_t i = 0; i < rank; ++i) {
    spec.shape.push_back(static_cast<int>(i) == spec.axis ? draw_extent(g, 300)
                                                          : draw_extent(g, 7));
  }
  if (chance(g, 0.15)) spec.shape = draw_large_shape(g, rank);
  // Along 2 elements the backward's results are both differences of nearly equal terms once one
  // probability nears 1 (dx_0 = y_0 y_1 (g_0 - g_1), formed as y_0 (g_0 - y_0 g_0 - y_1 g_1)):
  // rounding decides them, which no relative tolerance can judge. Such axes get a third element.
  auto& extent = spec.shape[static_cast<size_t>(spec.axis)];
  if (backward && extent == 2) extent = 3;
  if (chance(g, 0.33)) spec.storage_order = draw_storage_order(g, rank);
  text = join_extents(spec.shape) + "/axis" + std::to_string(spec.axis);
  text += order_text("stored", spec.storage_order);
  return spec;
}

}  // namespace

void add_drawn_softmax_cases(CaseTable& table, uint64_t seed, int count) {
  for (sy_op op :
       {SY_OP_SOFTMAX, SY_OP_LOG_SOFTMAX, SY_OP_SOFTMAX_BACKWARD, SY_OP_LOG_SOFTMAX_BACKWARD}) {
    const bool backward = op == SY_OP_SOFTMAX_BACKWARD || op == SY_OP_LOG_SOFTMAX_BACKWARD;
    add_drawn_op(
        table, seed, count, op, [op, backward](Generator& g, sy_dtype dtype, std::string& text) {
          const SoftmaxSpec spec = draw_softmax_spec(g, backward, text);
          return [op, dtype, spec](Generator& gen) { return build_softmax(gen, op, dtype, spec); };
        });
  }
}

void add_softmax_cases(CaseTable& table) {
  for (sy_op op :
       {SY_OP_SOFTMAX, SY_OP_LOG_SOFTMAX, SY_OP_SOFTMAX_BACKWARD, SY_OP_LOG_SOFTMAX_BACKWARD}) {
    for (sy_dtype dtype : kFloatDtypes) {
      for (const SoftmaxSpec& spec : kSoftmaxSpecs) {
        add_case(table, op, dtype, spec.name,
                 [op, dtype, spec](Generator& gen) { return build_softmax(gen, op, dtype, spec); });
      }
    }
  }
}

}  // namespace switchyard::conformance
