// LSTM_SEQUENCE and GRU_SEQUENCE (docs/ops.md section 17): one layer in one direction over a whole
// sequence, in double from the stored inputs; h and c stay in double between steps and each output
// is rounded once to its dtype. LSTM_SEQUENCE_BACKWARD: backpropagation through time from the
// forward's ws, in double too, the gradients of h and c carried unrounded between steps.
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
  // The optional last output ws: LSTM [T, B, 5H] (i, f, g, o, c per step), GRU [T, B, 4H] (r, z,
  // n and the recurrent part of n's pre-activation, h W_hn^T + b_hn).
  bool with_ws = false;
  TensorRef ws;
};

std::vector<double> read_double(const TensorRef& tensor) {
  const std::vector<float> values = read_f32(tensor);
  return std::vector<double>(values.begin(), values.end());
}

SequenceCall checked_call(const OpContext& ctx, bool lstm) {
  const sy_rnn_params& p = ctx.params().rnn;
  const uint32_t states = lstm ? 2 : 1;
  const uint32_t inputs = states + 3 + (p.has_bias != 0 ? 2 : 0);
  // The last output, ws, is optional (what the backward op reads).
  const bool with_ws = ctx.call.num_outputs == states + 2;
  require_io_counts(ctx, inputs, states + 1 + (with_ws ? 1 : 0));
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
  call.with_ws = with_ws;
  if (with_ws) {
    call.ws = ctx.output(states + 1);
    require_same_dtype(ctx, "ws", call.ws, "x", x);
    require_shape(ctx, "ws", call.ws, Shape::of({call.t, call.b, (lstm ? 5 : 4) * call.h}));
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

// Collects ws while over_steps visits the cells (steps in processing order, then rows, then
// units): `at(cell)` is the [width / H] values of that cell's row, H apart.
class WsRecorder {
 public:
  WsRecorder(const SequenceCall& s, int64_t width)
      : s_(s), width_(width), values_(s.with_ws ? static_cast<size_t>(s.t * s.b * width) : 0) {}
  // Where the visited cell's values go: slot k of it at [k * H].
  double* next(size_t cell) {
    const int64_t step = visited_++ / (s_.b * s_.h);
    const int64_t t = s_.reverse ? s_.t - 1 - step : step;
    const auto r = static_cast<int64_t>(cell) / s_.h, j = static_cast<int64_t>(cell) % s_.h;
    return values_.data() + (t * s_.b + r) * width_ + j;
  }
  const std::vector<double>& values() const { return values_; }

 private:
  const SequenceCall& s_;
  int64_t width_;
  std::vector<double> values_;
  int64_t visited_ = 0;
};

}  // namespace

void run_lstm_sequence(const OpContext& ctx) {
  SequenceCall s = checked_call(ctx, true);
  std::vector<double> hs = s.h0, cs = s.c0;
  WsRecorder ws(s, 5 * s.h);  // [i, f, g, o, c] of each position and row
  const std::vector<double> y = over_steps(s, 4, hs, [&](const auto& gate, size_t cell) {
    const auto sum = [&](int64_t k) { return gate(k).first + gate(k).second; };
    const double i = sigmoid(sum(0)), f = sigmoid(sum(1)), g = std::tanh(sum(2));
    const double o = sigmoid(sum(3));
    cs[cell] = f * cs[cell] + i * g;
    if (s.with_ws) {
      double* slot = ws.next(cell);
      for (const double value : {i, f, g, o, cs[cell]}) {
        *slot = value;
        slot += s.h;
      }
    }
    return hs[cell] = o * std::tanh(cs[cell]);
  });
  write_f32(s.y, to_float(y));
  write_f32(s.h_n, to_float(hs));
  write_f32(s.c_n, to_float(cs));
  if (s.with_ws) write_f32(s.ws, to_float(ws.values()));
}

// PyTorch's GRU: the reset gate scales the recurrent part of n after its bias (linear before
// reset).
void run_gru_sequence(const OpContext& ctx) {
  SequenceCall s = checked_call(ctx, false);
  std::vector<double> hs = s.h0;
  WsRecorder ws(s, 4 * s.h);  // [r, z, n, h W_hn^T + b_hn] of each position and row
  const std::vector<double> y = over_steps(s, 3, hs, [&](const auto& gate, size_t cell) {
    const double reset = sigmoid(gate(0).first + gate(0).second);
    const double update = sigmoid(gate(1).first + gate(1).second);
    const double n = std::tanh(gate(2).first + reset * gate(2).second);
    if (s.with_ws) {
      double* slot = ws.next(cell);
      for (const double value : {reset, update, n, gate(2).second}) {
        *slot = value;
        slot += s.h;
      }
    }
    return hs[cell] = (1.0 - update) * n + update * hs[cell];
  });
  write_f32(s.y, to_float(y));
  write_f32(s.h_n, to_float(hs));
  if (s.with_ws) write_f32(s.ws, to_float(ws.values()));
}

namespace {

// A backward call's T, B, H (from y) and direction, once every tensor is checked: of y's dtype
// and the shape its role gives it. LSTM (h0, c0, w_hh, y, ws, grad_y, grad_c_n [, grad_h_n]) ->
// grad_gates, grad_h0, grad_c0 [, grad_w_hh]; GRU (h0, w_hh, y, ws, grad_y [, grad_h_n]) ->
// grad_gx, grad_gh, grad_h0 [, grad_w_hh].
struct BackwardCall {
  int64_t steps = 0, batch = 0, h = 0;
  bool reverse = false;
};

BackwardCall checked_backward(const OpContext& ctx) {
  const bool lstm = ctx.op == SY_OP_LSTM_SEQUENCE_BACKWARD;
  const std::vector<std::string> inputs =
      lstm ? std::vector<std::string>{"h0", "c0",     "w_hh",     "y",
                                      "ws", "grad_y", "grad_c_n", "grad_h_n"}
           : std::vector<std::string>{"h0", "w_hh", "y", "ws", "grad_y", "grad_h_n"};
  const std::vector<std::string> outputs =
      lstm ? std::vector<std::string>{"grad_gates", "grad_h0", "grad_c0", "grad_w_hh"}
           : std::vector<std::string>{"grad_gx", "grad_gh", "grad_h0", "grad_w_hh"};
  const auto list = [](const std::vector<std::string>& roles) {
    std::string text;
    for (size_t k = 0; k < roles.size(); ++k) {
      text += (k == 0 ? "" : k + 1 == roles.size() ? " [, " : ", ") + roles[k];
    }
    return text + "]";
  };
  const uint32_t in = ctx.call.num_inputs, out = ctx.call.num_outputs;
  if ((in != inputs.size() && in + 1 != inputs.size()) ||
      (out != outputs.size() && out + 1 != outputs.size())) {
    fail(ctx, "takes (" + list(inputs) + ") and gives (" + list(outputs) + "); got " +
                  std::to_string(in) + " inputs and " + std::to_string(out) + " outputs");
  }
  const sy_rnn_params& p = ctx.params().rnn;
  if (p.reverse > 1)
    fail(ctx, "params.rnn.reverse must be 0 or 1, got " + std::to_string(p.reverse));
  const TensorRef y = ctx.input(lstm ? 3 : 2);
  require_float(ctx, "y", y);
  require_rank(ctx, "y", y, 3, "[T, B, H]");
  BackwardCall call{y.shape[0], y.shape[1], y.shape[2], p.reverse != 0};
  if (call.steps < 1 || call.batch < 1 || call.h < 1 || call.h != p.hidden_size) {
    fail(ctx, "needs at least one step, one sequence and y [T, B, H] with H = hidden_size; got y " +
                  y.shape.to_string() + " and hidden_size " + std::to_string(p.hidden_size));
  }
  const int64_t t = call.steps, b = call.batch, h = call.h, g = (lstm ? 4 : 3) * h;
  const auto shape = [&](const std::string& role) {
    if (role == "w_hh" || role == "grad_w_hh") return Shape::of({g, h});
    if (role == "y" || role == "grad_y") return Shape::of({t, b, h});
    if (role == "ws") return Shape::of({t, b, g + h});
    if (role.rfind("grad_g", 0) == 0) return Shape::of({t, b, g});  // grad_gates, grad_gx, grad_gh
    return Shape::of({b, h});                                       // the states and their grads
  };
  for (uint32_t k = 0; k < in + out; ++k) {
    const bool is_input = k < in;
    const std::string& role = is_input ? inputs[k] : outputs[k - in];
    const TensorRef tensor = is_input ? ctx.input(k) : ctx.output(k - in);
    require_same_dtype(ctx, role.c_str(), tensor, "y", y);
    require_shape(ctx, role.c_str(), tensor, shape(role));
  }
  return call;
}

// dh[r, k] = sum_j d[r, j] w[j, k] and grad_w[j, k] += sum_r d[r, j] h_prev[r, k] for one step.
void recurrent_products(const double* d, const double* h_prev, int64_t batch, int64_t h,
                        int64_t gates, const std::vector<double>& w, std::vector<double>& dh,
                        std::vector<double>& grad_w) {
  for (int64_t r = 0; r < batch; ++r) {
    const double* dr = d + r * gates;
    for (int64_t k = 0; k < h; ++k) {
      double sum = 0.0;
      for (int64_t j = 0; j < gates; ++j) sum += dr[j] * w[static_cast<size_t>(j * h + k)];
      dh[static_cast<size_t>(r * h + k)] = sum;
    }
    for (int64_t j = 0; j < gates; ++j) {
      for (int64_t k = 0; k < h; ++k) {
        grad_w[static_cast<size_t>(j * h + k)] += dr[j] * h_prev[r * h + k];
      }
    }
  }
}

}  // namespace

// Backpropagation through time over the forward's stored y and ws (docs/ops.md section 17): per
// step, from the last processed back to the first, the cell's backward as LSTM_CELL_BACKWARD
// computes it, then dh = grad_gates W_hh for the step before; grad_w_hh sums grad_gates^T h_prev.
void run_lstm_sequence_backward(const OpContext& ctx) {
  const BackwardCall c = checked_backward(ctx);
  const int64_t steps = c.steps, batch = c.batch, h = c.h, g4 = 4 * h;
  const std::vector<double> h0 = read_double(ctx.input(0)), c0 = read_double(ctx.input(1));
  const std::vector<double> w_hh = read_double(ctx.input(2)), ys = read_double(ctx.input(3));
  const std::vector<double> ws = read_double(ctx.input(4)), grad_y = read_double(ctx.input(5));
  std::vector<double> dc = read_double(ctx.input(6));
  std::vector<double> dh =
      ctx.call.num_inputs == 8 ? read_double(ctx.input(7)) : std::vector<double>(h0.size(), 0.0);
  std::vector<double> grad_gates(static_cast<size_t>(steps * batch * g4));
  std::vector<double> grad_w_hh(static_cast<size_t>(g4 * h), 0.0);
  for (int64_t step = steps - 1; step >= 0; --step) {
    const int64_t t = c.reverse ? steps - 1 - step : step;
    const int64_t previous = c.reverse ? t + 1 : t - 1;  // the position processed before t
    for (int64_t r = 0; r < batch; ++r) {
      const double* row = ws.data() + (t * batch + r) * 5 * h;
      double* dg = grad_gates.data() + (t * batch + r) * g4;
      for (int64_t j = 0; j < h; ++j) {
        const auto cell = static_cast<size_t>(r * h + j);
        const double i = row[j], f = row[h + j], g = row[2 * h + j], o = row[3 * h + j];
        const double c_prev =
            step == 0 ? c0[cell]
                      : ws[static_cast<size_t>((previous * batch + r) * 5 * h + 4 * h + j)];
        const double th = std::tanh(row[4 * h + j]);
        const double dh_total = grad_y[static_cast<size_t>((t * batch + r) * h + j)] + dh[cell];
        const double dct = dc[cell] + dh_total * o * (1.0 - th * th);
        dg[j] = dct * g * i * (1.0 - i);
        dg[h + j] = dct * c_prev * f * (1.0 - f);
        dg[2 * h + j] = dct * i * (1.0 - g * g);
        dg[3 * h + j] = dh_total * th * o * (1.0 - o);
        dc[cell] = dct * f;
      }
    }
    const double* h_prev = step == 0 ? h0.data() : ys.data() + previous * batch * h;
    recurrent_products(grad_gates.data() + t * batch * g4, h_prev, batch, h, g4, w_hh, dh,
                       grad_w_hh);
  }
  write_f32(ctx.output(0), to_float(grad_gates));
  write_f32(ctx.output(1), to_float(dh));
  write_f32(ctx.output(2), to_float(dc));
  if (ctx.call.num_outputs == 4) write_f32(ctx.output(3), to_float(grad_w_hh));
}

// The GRU's backpropagation through time (docs/ops.md section 17): per step, last processed to
// first, the gradients of the input part u and the recurrent part v of the gate pre-activations
// (they differ in n, where r scales v_n), then dh = dh_total z + grad_gh W_hh for the step before;
// grad_w_hh sums grad_gh^T h_prev.
void run_gru_sequence_backward(const OpContext& ctx) {
  const BackwardCall c = checked_backward(ctx);
  const int64_t steps = c.steps, batch = c.batch, h = c.h, g3 = 3 * h;
  const std::vector<double> h0 = read_double(ctx.input(0)), w_hh = read_double(ctx.input(1));
  const std::vector<double> ys = read_double(ctx.input(2)), ws = read_double(ctx.input(3));
  const std::vector<double> grad_y = read_double(ctx.input(4));
  std::vector<double> dh =
      ctx.call.num_inputs == 6 ? read_double(ctx.input(5)) : std::vector<double>(h0.size(), 0.0);
  std::vector<double> grad_gx(static_cast<size_t>(steps * batch * g3));
  std::vector<double> grad_gh(grad_gx.size());
  std::vector<double> grad_w_hh(static_cast<size_t>(g3 * h), 0.0);
  std::vector<double> carried(dh.size());  // dh_total * z: the part of dh not through W_hh
  for (int64_t step = steps - 1; step >= 0; --step) {
    const int64_t t = c.reverse ? steps - 1 - step : step;
    const int64_t previous = c.reverse ? t + 1 : t - 1;
    const double* h_prev = step == 0 ? h0.data() : ys.data() + previous * batch * h;
    for (int64_t r = 0; r < batch; ++r) {
      const double* row = ws.data() + (t * batch + r) * 4 * h;
      double* gx = grad_gx.data() + (t * batch + r) * g3;
      double* gh = grad_gh.data() + (t * batch + r) * g3;
      for (int64_t j = 0; j < h; ++j) {
        const auto cell = static_cast<size_t>(r * h + j);
        const double reset = row[j], update = row[h + j], n = row[2 * h + j], hn = row[3 * h + j];
        const double dh_total = grad_y[static_cast<size_t>((t * batch + r) * h + j)] + dh[cell];
        const double d_n = dh_total * (1.0 - update) * (1.0 - n * n);
        const double d_r = d_n * hn * reset * (1.0 - reset);
        const double d_z = dh_total * (h_prev[r * h + j] - n) * update * (1.0 - update);
        gx[j] = gh[j] = d_r;
        gx[h + j] = gh[h + j] = d_z;
        gx[2 * h + j] = d_n;
        gh[2 * h + j] = d_n * reset;
        carried[cell] = dh_total * update;
      }
    }
    recurrent_products(grad_gh.data() + t * batch * g3, h_prev, batch, h, g3, w_hh, dh, grad_w_hh);
    for (size_t k = 0; k < dh.size(); ++k) dh[k] += carried[k];
  }
  write_f32(ctx.output(0), to_float(grad_gx));
  write_f32(ctx.output(1), to_float(grad_gh));
  write_f32(ctx.output(2), to_float(dh));
  if (ctx.call.num_outputs == 4) write_f32(ctx.output(3), to_float(grad_w_hh));
}

}  // namespace sy_reference
