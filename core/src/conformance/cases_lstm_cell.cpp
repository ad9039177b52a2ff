// LSTM_CELL and LSTM_CELL_BACKWARD: a few batch and hidden sizes (H = 1 up to 300, enough cells for
// a CPU backend's threads), gates that reach the sigmoid's and tanh's flat tails, and strided views
// of the gate-shaped inputs and of outputs (elements between them must stay as they were).
#include <algorithm>
#include <cmath>
#include <string>

#include "conformance/cases.h"

namespace switchyard::conformance {
namespace {

struct CellSpec {
  const char* name;
  int64_t batch;
  int64_t hidden;
  bool strided;  // gates / act as a view with padding between rows and columns
};

const CellSpec kSpecs[] = {
    {"1x1", 1, 1, false},
    {"3x5", 3, 5, false},
    {"4x33", 4, 33, false},
    {"2x16/strided", 2, 16, true},
    {"67x300/strided", 67, 300, true},  // enough cells for a CPU backend's threads
};

HostTensor maybe_strided(const HostTensor& t, bool strided, Generator& gen) {
  return strided ? sliced_layout(t, 3, gen) : t;
}

// Activated gates as LSTM_CELL stores them: i, f, o in (0, 1) and g in (-1, 1), rounded to dtype.
HostTensor activated_gates(Generator& gen, sy_dtype dtype, const CellSpec& spec) {
  std::vector<double> values;
  for (int64_t r = 0; r < spec.batch; ++r) {
    for (int64_t gate = 0; gate < 4; ++gate) {
      for (int64_t j = 0; j < spec.hidden; ++j) {
        const double z = gen.uniform(-4.0, 4.0);
        values.push_back(gate == 2 ? std::tanh(z) : 1.0 / (1.0 + std::exp(-z)));
      }
    }
  }
  return tensor_from_values(dtype, {spec.batch, 4 * spec.hidden}, values);
}

OpCase build_cell(Generator& gen, sy_op op, sy_dtype dtype, const CellSpec& spec) {
  const std::vector<int64_t> state{spec.batch, spec.hidden};
  const std::vector<int64_t> gates{spec.batch, 4 * spec.hidden};
  if (op == SY_OP_LSTM_CELL) {
    HostTensor z = random_tensor(gen, dtype, gates, -6.0, 6.0);
    HostTensor c_prev = random_tensor(gen, dtype, state, -2.0, 2.0);
    return make_op_case(op, {maybe_strided(z, spec.strided, gen), c_prev},
                        {maybe_strided(zeros(dtype, state), spec.strided, gen), zeros(dtype, state),
                         maybe_strided(zeros(dtype, gates), spec.strided, gen)});
  }
  HostTensor grad_h = random_tensor(gen, dtype, state, -1.0, 1.0);
  HostTensor grad_c = random_tensor(gen, dtype, state, -1.0, 1.0);
  HostTensor act = activated_gates(gen, dtype, spec);
  HostTensor c_prev = random_tensor(gen, dtype, state, -2.0, 2.0);
  HostTensor c = random_tensor(gen, dtype, state, -2.0, 2.0);
  return make_op_case(op, {grad_h, grad_c, maybe_strided(act, spec.strided, gen), c_prev, c},
                      {maybe_strided(zeros(dtype, gates), spec.strided, gen), zeros(dtype, state)});
}

// A drawn cell: batch up to 70 and hidden up to 300 as draw_extent draws them (one in seven with
// 40,000 to 300,000 gate elements), the gate-shaped tensors strided a third of the time.
CellSpec draw_cell_spec(Generator& g, std::string& text) {
  CellSpec spec{"", draw_extent(g, 70), draw_extent(g, 300), chance(g, 0.33)};
  if (chance(g, 0.15))
    spec.batch = std::max<int64_t>(1, g.integer(40000, 300000) / (4 * spec.hidden));
  text = std::to_string(spec.batch) + "x" + std::to_string(spec.hidden);
  if (spec.strided) text += "/strided";
  return spec;
}

}  // namespace

void add_drawn_lstm_cell_cases(CaseTable& table, uint64_t seed, int count) {
  for (sy_op op : {SY_OP_LSTM_CELL, SY_OP_LSTM_CELL_BACKWARD}) {
    add_drawn_op(table, seed, count, op, [op](Generator& g, sy_dtype dtype, std::string& text) {
      const CellSpec spec = draw_cell_spec(g, text);
      return [op, dtype, spec](Generator& gen) { return build_cell(gen, op, dtype, spec); };
    });
  }
}

void add_lstm_cell_cases(CaseTable& table) {
  for (sy_op op : {SY_OP_LSTM_CELL, SY_OP_LSTM_CELL_BACKWARD}) {
    for (sy_dtype dtype : kFloatDtypes) {
      for (const CellSpec& spec : kSpecs) {
        add_case(table, op, dtype, spec.name,
                 [op, dtype, spec](Generator& gen) { return build_cell(gen, op, dtype, spec); });
      }
    }
  }
}

}  // namespace switchyard::conformance
