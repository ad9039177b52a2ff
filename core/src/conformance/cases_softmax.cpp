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
  bool permuted;
};

const SoftmaxSpec kSoftmaxSpecs[] = {
    {"last_axis", {4, 10}, 1, false},
    {"middle_axis", {3, 6, 5}, 1, false},
    {"axis0", {6, 4}, 0, false},
    {"wide_last_axis", {2, 3, 64}, 2, false},
    {"last_axis/permuted_input", {3, 6, 5}, 2, true},
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
  const std::vector<int> permutation = {2, 0, 1};
  HostTensor x = random_tensor(gen, dtype, spec.shape, -4.0, 4.0);
  std::vector<HostTensor> inputs;
  if (op == SY_OP_SOFTMAX || op == SY_OP_LOG_SOFTMAX) {
    inputs.push_back(x);
  } else {
    HostTensor grad_out = random_tensor(gen, dtype, spec.shape, -1.0, 1.0);
    inputs.push_back(grad_out);
    inputs.push_back(host_softmax(x, spec.axis, op == SY_OP_LOG_SOFTMAX_BACKWARD));
  }
  if (spec.permuted) {
    for (HostTensor& input : inputs) input = permuted_layout(input, permutation);
  }
  OpCase op_case = make_op_case(op, inputs, {zeros(dtype, spec.shape)});
  op_case.params.softmax.axis = spec.axis;
  return op_case;
}

}  // namespace

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
