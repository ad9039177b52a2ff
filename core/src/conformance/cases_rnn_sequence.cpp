// LSTM_SEQUENCE and GRU_SEQUENCE: one layer in one direction over a sequence. Sizes from one cell
// up to 20 steps of 64 x 64 and a hidden size of 256; both directions, with and without biases; x
// stored batch-major (the permuted view a batch_first layer passes) and y written into a padded
// view, whose gaps must stay as they were.
#include <cmath>

#include "conformance/cases.h"

namespace switchyard::conformance {
namespace {

struct SequenceSpec {
  const char* name;
  int64_t steps, batch, input, hidden;
  bool reverse;
  bool bias;
  bool strided;  // x batch-major, y a padded view
};

const SequenceSpec kSpecs[] = {
    {"1x1x1x1", 1, 1, 1, 1, false, true, false},
    {"5x3x4x6", 5, 3, 4, 6, false, true, false},
    {"7x2x5x8/reverse", 7, 2, 5, 8, true, true, false},
    {"6x2x3x4/no-bias", 6, 2, 3, 4, false, false, false},
    {"4x3x5x7/reverse/strided", 4, 3, 5, 7, true, true, true},
    {"20x2x64x64", 20, 2, 64, 64, false, true, false},
    // onednn runs an LSTM of B <= 4 as one input projection and its own recurrence, in panels of
    // 16 hidden units split across threads (plugins/onednn/ops/lstm_recurrence.h), and larger
    // batches on oneDNN's primitive: a last partial panel, the largest projected batch, a batch
    // past it, and a step large enough for two threads.
    {"12x1x48x72/reverse", 12, 1, 48, 72, true, true, false},
    {"5x4x6x33/strided", 5, 4, 6, 33, false, true, true},
    {"6x9x10x20", 6, 9, 10, 20, false, true, false},
    {"4x1x16x256", 4, 1, 16, 256, false, true, false},
};

OpCase build_sequence(Generator& gen, sy_op op, sy_dtype dtype, const SequenceSpec& spec) {
  const bool lstm = op == SY_OP_LSTM_SEQUENCE;
  const int64_t gates = (lstm ? 4 : 3) * spec.hidden;
  // PyTorch's initialisation range: the gates reach both tails of the sigmoid and tanh.
  const double bound = 2.0 / std::sqrt(static_cast<double>(spec.hidden));
  const std::vector<int64_t> state{spec.batch, spec.hidden};
  HostTensor x = random_tensor(gen, dtype, {spec.steps, spec.batch, spec.input}, -2.0, 2.0);
  if (spec.strided) x = permuted_layout(x, {1, 0, 2});
  std::vector<HostTensor> inputs{x, random_tensor(gen, dtype, state, -1.0, 1.0)};
  if (lstm) inputs.push_back(random_tensor(gen, dtype, state, -1.0, 1.0));
  inputs.push_back(random_tensor(gen, dtype, {gates, spec.input}, -bound, bound));
  inputs.push_back(random_tensor(gen, dtype, {gates, spec.hidden}, -bound, bound));
  if (spec.bias) {
    inputs.push_back(random_tensor(gen, dtype, {gates}, -bound, bound));
    inputs.push_back(random_tensor(gen, dtype, {gates}, -bound, bound));
  }
  HostTensor y = zeros(dtype, {spec.steps, spec.batch, spec.hidden});
  if (spec.strided) y = sliced_layout(y, 2, gen);
  std::vector<HostTensor> outputs{y, zeros(dtype, state)};
  if (lstm) outputs.push_back(zeros(dtype, state));
  OpCase op_case = make_op_case(op, std::move(inputs), std::move(outputs));
  op_case.params.rnn.hidden_size = spec.hidden;
  op_case.params.rnn.reverse = spec.reverse ? 1 : 0;
  op_case.params.rnn.has_bias = spec.bias ? 1 : 0;
  return op_case;
}

}  // namespace

void add_rnn_sequence_cases(CaseTable& table) {
  for (sy_op op : {SY_OP_LSTM_SEQUENCE, SY_OP_GRU_SEQUENCE}) {
    for (sy_dtype dtype : kFloatDtypes) {
      for (const SequenceSpec& spec : kSpecs) {
        add_case(table, op, dtype, spec.name, [op, dtype, spec](Generator& gen) {
          return build_sequence(gen, op, dtype, spec);
        });
      }
    }
  }
}

}  // namespace switchyard::conformance
