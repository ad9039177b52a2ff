// LSTM_SEQUENCE and GRU_SEQUENCE (docs/ops.md section 17): one layer in one direction over a whole
// sequence, in double from the stored inputs; h and c stay in double between steps and each output
// is rounded once to its dtype.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "ops.h"

namespace sy_reference {
namespace {

double sigmoid(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}

// The call's tensors checked and read: T, B, input width, H and the gate count G (4 or 3).
struct SequenceCall {
  int64_t t = 0, b = 0, in = 0, h = 0, g = 0;
  bool reverse = false;
  std::vector<double> x, h0, c0, w_ih, w_hh, b_ih, b_hh;  // row-major; b_* zero without biases
  TensorRef y, h_n, c_n;
};

std::vector<double> read_double(const TensorRef& tensor) {
  const std::vector<float> values = read_f32(tensor);
  return std::vector<double>(values.begin(), values.end());
}

SequenceCall checked_call(const OpContext& ctx, bool lstm) {
  const sy_rnn_params& p = ctx.params().rnn;
  const uint32_t states = lstm ? 2 : 1;
  const uint32_t inputs = states + 3 + (p.has_bias != 0 ? 2 : 0);
  require_io_counts(ctx, inputs, states + 1);
  if (p.reverse > 1 || p.has_bias > 1) {
    fail(ctx, "params.rnn.reverse and has_bias must be 0 or 1, got " + std::to_string(p.reverse) +
                  " and " + std::to_string(p.has_bias));
  }
  SequenceCall call;
  call.g = lstm ? 4 : 3;
  call.h = p.hidden_size;
  call.reverse = p.reverse != 0;
  const TensorRef x = ctx.input(0);
  require_float(ctx, "x", x);
  require_rank(ctx, "x", x, 3, "[T, B, input]");
  call.t = x.shape[0];
  call.b = x.shape[1];
  call.in = x.shape[2];
  if (call.t < 1 || call.b < 1 || call.h < 1) {
    fail(ctx, "needs at least one step, one sequence and hidden_size >= 1; got x " +
                  x.shape.to_string() + " and hidden_size " + std::to_string(call.h));
  }
  const Shape state = Shape::of({call.b, call.h});
  const char* roles[] = {"h0", "c0"};
  for (uint32_t k = 0; k < states; ++k) {
    require_same_dtype(ctx, roles[k], ctx.input(1 + k), "x", x);
    require_shape(ctx, roles[k], ctx.input(1 + k), state);
  }
  const uint32_t w = 1 + states;
  require_same_dtype(ctx, "w_ih", ctx.input(w), "x", x);
  require_shape(ctx, "w_ih", ctx.input(w), Shape::of({call.g * call.h, call.in}));
  require_same_dtype(ctx, "w_hh", ctx.input(w + 1), "x", x);
  require_shape(ctx, "w_hh", ctx.input(w + 1), Shape::of({call.g * call.h, call.h}));
  call.x = read_double(x);
  call.h0 = read_double(ctx.input(1));
  call.c0 = lstm ? read_double(ctx.input(2)) : std::vector<double>();
  call.w_ih = read_double(ctx.input(w));
  call.w_hh = read_double(ctx.input(w + 1));
  call.b_ih.assign(static_cast<size_t>(call.g * call.h), 0.0);
  call.b_hh = call.b_ih;
  if (p.has_bias != 0) {
    require_same_dtype(ctx, "b_ih", ctx.input(w + 2), "x", x);
    require_shape(ctx, "b_ih", ctx.input(w + 2), Shape::of({call.g * call.h}));
    require_same_dtype(ctx, "b_hh", ctx.input(w + 3), "x", x);
    require_shape(ctx, "b_hh", ctx.input(w + 3), Shape::of({call.g * call.h}));
    call.b_ih = read_double(ctx.input(w + 2));
    call.b_hh = read_double(ctx.input(w + 3));
  }
  call.y = ctx.output(0);
  call.h_n = ctx.output(1);
  require_same_dtype(ctx, "y", call.y, "x", x);
  require_shape(ctx, "y", call.y, Shape::of({call.t, call.b, call.h}));
  require_same_dtype(ctx, "h_n", call.h_n, "x", x);
  require_shape(ctx, "h_n", call.h_n, state);
  if (lstm) {
    call.c_n = ctx.output(2);
    require_same_dtype(ctx, "c_n", call.c_n, "x", x);
    require_shape(ctx, "c_n", call.c_n, state);
  }
  return call;
}

// out[r, k] = bias[k] + sum_j in[r, j] * w[k, j] for one step's rows: the gate pre-activations.
void project(const double* in, int64_t rows, int64_t width, const std::vector<double>& w,
             const std::vector<double>& bias, int64_t outputs, std::vector<double>& out) {
  out.assign(static_cast<size_t>(rows * outputs), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < outputs; ++k) {
      double sum = bias[static_cast<size_t>(k)];
      for (int64_t j = 0; j < width; ++j) {
        sum += in[r * width + j] * w[static_cast<size_t>(k * width + j)];
      }
      out[static_cast<size_t>(r * outputs + k)] = sum;
    }
  }
}

std::vector<float> to_float(const std::vector<double>& values) {
  return std::vector<float>(values.begin(), values.end());
}

// Every step of one layer and direction: the input and recurrent projections of the step (gates
// in PyTorch's order, `gate_count` of them), then `cell(gate, r, j)` for each row r and hidden unit
// j, which updates the states and returns the new h; `gate(k)` gives gate k's input and recurrent
// parts. Returns y, [T, B, H].
template <typename Cell>
std::vector<double> over_steps(const SequenceCall& s, int64_t gate_count, std::vector<double>& hs,
                               Cell cell) {
  const int64_t h = s.h, gates = gate_count * h;
  std::vector<double> gx, gh;
  std::vector<double> y(static_cast<size_t>(s.t * s.b * h));
  for (int64_t step = 0; step < s.t; ++step) {
    const int64_t t = s.reverse ? s.t - 1 - step : step;
    project(s.x.data() + t * s.b * s.in, s.b, s.in, s.w_ih, s.b_ih, gates, gx);
    project(hs.data(), s.b, h, s.w_hh, s.b_hh, gates, gh);
    for (int64_t r = 0; r < s.b; ++r) {
      for (int64_t j = 0; j < h; ++j) {
        const auto gate = [&](int64_t k) {
          const auto at = static_cast<size_t>(r * gates + k * h + j);
          return std::pair<double, double>{gx[at], gh[at]};
        };
        y[static_cast<size_t>((t * s.b + r) * h + j)] = cell(gate, static_cast<size_t>(r * h + j));
      }
    }
  }
  return y;
}

}  // namespace

void run_lstm_sequence(const OpContext& ctx) {
  SequenceCall s = checked_call(ctx, true);
  std::vector<double> hs = s.h0, cs = s.c0;
  const std::vector<double> y = over_steps(s, 4, hs, [&](const auto& gate, size_t cell) {
    const auto sum = [&](int64_t k) { return gate(k).first + gate(k).second; };
    const double i = sigmoid(sum(0)), f = sigmoid(sum(1)), g = std::tanh(sum(2));
    const double o = sigmoid(sum(3));
    cs[cell] = f * cs[cell] + i * g;
    return hs[cell] = o * std::tanh(cs[cell]);
  });
  write_f32(s.y, to_float(y));
  write_f32(s.h_n, to_float(hs));
  write_f32(s.c_n, to_float(cs));
}

// PyTorch's GRU: the reset gate scales the recurrent part of n after its bias (linear before
// reset).
void run_gru_sequence(const OpContext& ctx) {
  SequenceCall s = checked_call(ctx, false);
  std::vector<double> hs = s.h0;
  const std::vector<double> y = over_steps(s, 3, hs, [&](const auto& gate, size_t cell) {
    const double reset = sigmoid(gate(0).first + gate(0).second);
    const double update = sigmoid(gate(1).first + gate(1).second);
    const double n = std::tanh(gate(2).first + reset * gate(2).second);
    return hs[cell] = (1.0 - update) * n + update * hs[cell];
  });
  write_f32(s.y, to_float(y));
  write_f32(s.h_n, to_float(hs));
}

}  // namespace sy_reference
