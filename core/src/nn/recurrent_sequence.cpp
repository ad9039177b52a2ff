// LSTM and GRU sequences with hand-written backpropagation through time (see the header).
#include "nn/recurrent_sequence.h"

#include <vector>

#include "autograd/node.h"
#include "switchyard/autograd.h"
#include "switchyard/device.h"
#include "switchyard/ops.h"
#include "switchyard/profile.h"
#include "tensor/dispatch_internal.h"
#include "tensor/op_helpers.h"

namespace switchyard::detail {

namespace {

using Grads = std::vector<Tensor>;

thread_local bool t_force_composed = false;

// A bias without its history, or none (a layer built with bias: false).
Tensor detached(const Tensor& bias) {
  return bias.defined() ? bias.detach() : Tensor();
}

// Whether one SEQUENCE op can run this layer and direction: both biases or neither, one dtype and
// device for all, and the device has the op in that dtype; when something needs a gradient, also
// its backward (`backward`).
bool fused_available(sy_op op, sy_op backward, const std::vector<Tensor>& tensors,
                     const RecurrentWeights& w) {
  if (t_force_composed || w.b_ih.defined() != w.b_hh.defined()) return false;
  const Tensor& x = tensors.front();
  for (const Tensor& t : tensors) {
    if (t.defined() && (t.dtype() != x.dtype() || t.device() != x.device())) return false;
  }
  const sy_dtype dtype = to_sy_dtype(x.dtype());
  if (!x.device()->supports(op, dtype)) return false;
  if (!any_needs_grad(tensors)) return true;
  return x.device()->supports(backward, dtype);
}

sy_op_params rnn_params(int64_t hidden, bool reverse, bool has_bias) {
  sy_op_params params{};
  params.rnn.hidden_size = hidden;
  params.rnn.reverse = reverse ? 1 : 0;
  params.rnn.has_bias = has_bias ? 1 : 0;
  return params;
}

// LSTM_SEQUENCE into the packed [T + 1, B, H] result lstm_sequence returns; where `ws` is
// defined, also into the op's ws output (training: what LSTM_SEQUENCE_BACKWARD reads).
Tensor fused_lstm(const Tensor& x, const Tensor& h0, const Tensor& c0, const RecurrentWeights& w,
                  bool reverse, const Tensor& ws = Tensor()) {
  const int64_t steps = x.dim(0), batch = x.dim(1), hidden = w.w_hh.dim(1);
  Tensor packed = empty_like_shape(x, Shape{steps + 1, batch, hidden});
  const Tensor y = packed.narrow(0, 0, steps);
  const Tensor c_n = packed.narrow(0, steps, 1).squeeze(0);
  const Tensor h_n = empty_like_shape(x, Shape{batch, hidden});
  const sy_op_params params = rnn_params(hidden, reverse, w.b_ih.defined());
  const uint32_t flags = w.constant ? SY_CALL_CONSTANT_WEIGHTS : 0u;
  const auto run = [&](std::initializer_list<Tensor> outputs) {
    if (w.b_ih.defined()) {
      run_op(SY_OP_LSTM_SEQUENCE, {x, h0, c0, w.w_ih, w.w_hh, w.b_ih, w.b_hh}, outputs, params,
             flags);
    } else {
      run_op(SY_OP_LSTM_SEQUENCE, {x, h0, c0, w.w_ih, w.w_hh}, outputs, params, flags);
    }
  };
  if (ws.defined()) {
    run({y, h_n, c_n, ws});
  } else {
    run({y, h_n, c_n});
  }
  return packed;
}

// Position of the step-th step processed.
int64_t position(int64_t step, int64_t steps, bool reverse) {
  return reverse ? steps - 1 - step : step;
}

// GRU_SEQUENCE into its [T, B, H] output, and into `ws` where defined, as fused_lstm.
Tensor fused_gru(const Tensor& x, const Tensor& h0, const RecurrentWeights& w, bool reverse,
                 const Tensor& ws = Tensor()) {
  const int64_t steps = x.dim(0), batch = x.dim(1), hidden = w.w_hh.dim(1);
  Tensor y = empty_like_shape(x, Shape{steps, batch, hidden});
  const Tensor h_n = empty_like_shape(x, Shape{batch, hidden});
  const sy_op_params params = rnn_params(hidden, reverse, w.b_ih.defined());
  const uint32_t flags = w.constant ? SY_CALL_CONSTANT_WEIGHTS : 0u;
  const auto run = [&](std::initializer_list<Tensor> outputs) {
    if (w.b_ih.defined()) {
      run_op(SY_OP_GRU_SEQUENCE, {x, h0, w.w_ih, w.w_hh, w.b_ih, w.b_hh}, outputs, params, flags);
    } else {
      run_op(SY_OP_GRU_SEQUENCE, {x, h0, w.w_ih, w.w_hh}, outputs, params, flags);
    }
  };
  if (ws.defined()) {
    run({y, h_n, ws});
  } else {
    run({y, h_n});
  }
  return y;
}

// The input, weight and bias gradients shared by both cells, from the stacked gate gradients:
// dx = dG_x W_ih, dW_ih = dG_x^T x, dW_hh = dG_h^T h_prev, biases = sums over time and batch.
// Whether a [T, B, ...] tensor is stored batch-major and dense: a batch_first layer's input.
bool batch_major(const Tensor& t) {
  return t.dim(0) > 1 && t.dim(1) > 1 && !t.is_contiguous() && t.permute({1, 0, 2}).is_contiguous();
}

// A [T, B, W] tensor as [T * B, W] rows: batch-major (b, t) where `by_batch`, else (t, b). Rows of
// the two orders pair up in the products below as long as both operands use the same one, and a
// tensor stored in that order is not copied.
Tensor as_rows(const Tensor& t, bool by_batch) {
  const Shape rows{t.dim(0) * t.dim(1), t.dim(2)};
  return by_batch ? t.permute({1, 0, 2}).reshape(rows) : t.reshape(rows);
}

// [T, B, W] storage for per-step values laid out like x: batch-major for a batch_first layer's x,
// so that x's and these values' rows pair up in one product without copying either.
Tensor like_x(const Tensor& x, int64_t width) {
  const int64_t steps = x.dim(0), batch = x.dim(1);
  if (batch_major(x)) return empty_like_shape(x, Shape{batch, steps, width}).permute({1, 0, 2});
  return empty_like_shape(x, Shape{steps, batch, width});
}

Grads weight_grads(const Node& node, const Tensor& x, const Tensor& h_prev, const Tensor& d_gx,
                   const Tensor& d_gh, const RecurrentWeights& w, size_t first_weight) {
  // Batch-major rows where x and the gate gradients are both stored so (fused training lays them
  // out like x), else time-major.
  const bool by_batch = batch_major(x) && batch_major(d_gx) && batch_major(d_gh);
  const Tensor gx2 = as_rows(d_gx, by_batch);
  const Tensor gh2 = as_rows(d_gh, by_batch);
  Grads grads(first_weight + 4);
  if (node.needs_grad(0)) grads[0] = matmul(d_gx, w.w_ih);
  if (node.needs_grad(first_weight)) {
    grads[first_weight] = matmul(gx2, as_rows(x, by_batch), true, false);
  }
  // Without h_prev the caller has w_hh's gradient already (LSTM_SEQUENCE_BACKWARD's).
  if (node.needs_grad(first_weight + 1) && h_prev.defined()) {
    grads[first_weight + 1] = matmul(gh2, as_rows(h_prev, by_batch), true, false);
  }
  if (node.needs_grad(first_weight + 2)) grads[first_weight + 2] = sum(gx2, {0});
  if (node.needs_grad(first_weight + 3)) {
    // The LSTM passes one tensor for both: its two biases have the same gradient, summed once (a
    // [6400, 1024] sum is some 5 ms of the text RNN's step). The two leaves may share it: the
    // engine never writes a gradient in place (autograd/engine.cpp, accumulate_leaf).
    const bool same = &d_gx == &d_gh && grads[first_weight + 2].defined();
    grads[first_weight + 3] = same ? grads[first_weight + 2] : sum(gh2, {0});
  }
  return grads;
}

// Training on the fused ops: LSTM_SEQUENCE with its ws output, and a node whose backward is one
// LSTM_SEQUENCE_BACKWARD (the gate gradients, the initial states' and w_hh's) and the products
// that turn the gate gradients into x's, w_ih's and the biases' (weight_grads).
Tensor fused_lstm_training(const Tensor& x, const Tensor& h0, const Tensor& c0,
                           const RecurrentWeights& w, bool reverse) {
  const int64_t steps = x.dim(0), batch = x.dim(1), hidden = w.w_hh.dim(1);
  const Tensor ws = like_x(x, 5 * hidden);
  Tensor packed = fused_lstm(x, h0, c0, w, reverse, ws);
  const Tensor y = packed.narrow(0, 0, steps);
  const sy_op_params params = rnn_params(hidden, reverse, w.b_ih.defined());
  const std::vector<Tensor> inputs{x, h0, c0, w.w_ih, w.w_hh, w.b_ih, w.b_hh};
  const RecurrentWeights weights{w.w_ih.detach(), w.w_hh.detach(), Tensor(), Tensor()};
  attach_node(
      packed, "lstm_sequence", inputs,
      [weights, x_data = x.detach(), h0_data = h0.detach(), c0_data = c0.detach(),
       y_data = y.detach(), ws, params, steps, batch,
       hidden](const Tensor& grad, const Node& node) {
        const Tensor grad_y = grad.narrow(0, 0, steps);
        const Tensor grad_c_n = grad.narrow(0, steps, 1).squeeze(0);
        const Tensor d_gates = like_x(x_data, 4 * hidden);
        const Tensor grad_h0 = empty_like_shape(grad, Shape{batch, hidden});
        const Tensor grad_c0 = empty_like_shape(grad, Shape{batch, hidden});
        const std::initializer_list<Tensor> ins{h0_data, c0_data, weights.w_hh, y_data,
                                                ws,      grad_y,  grad_c_n};
        Tensor grad_w_hh;
        if (node.needs_grad(4)) {
          grad_w_hh = empty_like_shape(grad, weights.w_hh.shape());
          run_op(SY_OP_LSTM_SEQUENCE_BACKWARD, ins, {d_gates, grad_h0, grad_c0, grad_w_hh}, params);
        } else {
          run_op(SY_OP_LSTM_SEQUENCE_BACKWARD, ins, {d_gates, grad_h0, grad_c0}, params);
        }
        Grads grads = weight_grads(node, x_data, Tensor(), d_gates, d_gates, weights, 3);
        if (node.needs_grad(1)) grads[1] = grad_h0;
        if (node.needs_grad(2)) grads[2] = grad_c0;
        if (node.needs_grad(4)) grads[4] = grad_w_hh;
        return grads;
      });
  return packed;
}

// The GRU the same way: GRU_SEQUENCE with ws, and one GRU_SEQUENCE_BACKWARD giving the gradients
// of the input and recurrent parts of the gate pre-activations, h0's and w_hh's.
Tensor fused_gru_training(const Tensor& x, const Tensor& h0, const RecurrentWeights& w,
                          bool reverse) {
  const int64_t batch = x.dim(1), hidden = w.w_hh.dim(1);
  const Tensor ws = like_x(x, 4 * hidden);
  Tensor y = fused_gru(x, h0, w, reverse, ws);
  const sy_op_params params = rnn_params(hidden, reverse, w.b_ih.defined());
  const std::vector<Tensor> inputs{x, h0, w.w_ih, w.w_hh, w.b_ih, w.b_hh};
  const RecurrentWeights weights{w.w_ih.detach(), w.w_hh.detach(), Tensor(), Tensor()};
  attach_node(
      y, "gru_sequence", inputs,
      [weights, x_data = x.detach(), h0_data = h0.detach(), y_data = y.detach(), ws, params, batch,
       hidden](const Tensor& grad, const Node& node) {
        const Tensor d_gx = like_x(x_data, 3 * hidden);
        const Tensor d_gh = like_x(x_data, 3 * hidden);
        const Tensor grad_h0 = empty_like_shape(grad, Shape{batch, hidden});
        const std::initializer_list<Tensor> ins{h0_data, weights.w_hh, y_data, ws, grad};
        Tensor grad_w_hh;
        if (node.needs_grad(3)) {
          grad_w_hh = empty_like_shape(grad, weights.w_hh.shape());
          run_op(SY_OP_GRU_SEQUENCE_BACKWARD, ins, {d_gx, d_gh, grad_h0, grad_w_hh}, params);
        } else {
          run_op(SY_OP_GRU_SEQUENCE_BACKWARD, ins, {d_gx, d_gh, grad_h0}, params);
        }
        Grads grads = weight_grads(node, x_data, Tensor(), d_gx, d_gh, weights, 2);
        if (node.needs_grad(1)) grads[1] = grad_h0;
        if (node.needs_grad(3)) grads[3] = grad_w_hh;
        return grads;
      });
  return y;
}

struct LstmSaved {
  bool fused = false;
  std::vector<Tensor> act;                // fused: [i, f, g, o] per step, in processing order
  std::vector<Tensor> i, f, g, o;         // composed: each gate per step
  std::vector<Tensor> c, h_prev, c_prev;  // both
};

// One LSTM_CELL: (h, c, act) from the step's pre-activation gates and the previous cell state.
void fused_cell(const Tensor& gates, const Tensor& c_prev, Tensor* h, Tensor* c, Tensor* act) {
  const Shape state{gates.dim(0), gates.dim(1) / 4};
  *h = empty_like_shape(gates, state);
  *c = empty_like_shape(gates, state);
  *act = empty_like_shape(gates, gates.shape());
  run_op(SY_OP_LSTM_CELL, {gates, c_prev}, {*h, *c, *act});
}

// The step's gates and cell state as separate ops, for a device without LSTM_CELL in this dtype
// (or gates and cell state of different dtypes under autocast).
void composed_cell(const Tensor& gates, int64_t hidden, LstmSaved& saved, Tensor* h, Tensor* c) {
  const Tensor i = sigmoid(gates.narrow(1, 0, hidden));
  const Tensor f = sigmoid(gates.narrow(1, hidden, hidden));
  const Tensor g = tanh(gates.narrow(1, 2 * hidden, hidden));
  const Tensor o = sigmoid(gates.narrow(1, 3 * hidden, hidden));
  *c = f * *c + i * g;
  *h = o * tanh(*c);
  saved.i.push_back(i);
  saved.f.push_back(f);
  saved.g.push_back(g);
  saved.o.push_back(o);
}

// The composed backward of one step: writes the gate gradients into d_step, returns dc for the
// step before (dc_total * f).
Tensor composed_cell_backward(const LstmSaved& s, size_t k, int64_t hidden, const Tensor& dh_total,
                              const Tensor& dc_in, Tensor d_step) {
  const Tensor tanh_c = tanh(s.c[k]);
  const Tensor dc = dc_in + dh_total * s.o[k] * (1.0 - tanh_c * tanh_c);
  d_step.narrow(1, 0, hidden).copy_(dc * s.g[k] * s.i[k] * (1.0 - s.i[k]));
  d_step.narrow(1, hidden, hidden).copy_(dc * s.c_prev[k] * s.f[k] * (1.0 - s.f[k]));
  d_step.narrow(1, 2 * hidden, hidden).copy_(dc * s.i[k] * (1.0 - s.g[k] * s.g[k]));
  d_step.narrow(1, 3 * hidden, hidden).copy_(dh_total * tanh_c * s.o[k] * (1.0 - s.o[k]));
  return dc * s.f[k];
}

}  // namespace

ComposedRecurrentScope::ComposedRecurrentScope() : previous_(t_force_composed) {
  t_force_composed = true;
}

ComposedRecurrentScope::~ComposedRecurrentScope() {
  t_force_composed = previous_;
}

Tensor lstm_sequence(const Tensor& x, const Tensor& h0, const Tensor& c0, const RecurrentWeights& w,
                     bool reverse) {
  const std::vector<Tensor> tensors{x, h0, c0, w.w_ih, w.w_hh, w.b_ih, w.b_hh};
  if (fused_available(SY_OP_LSTM_SEQUENCE, SY_OP_LSTM_SEQUENCE_BACKWARD, tensors, w)) {
    const ProfileSpan span = profile_span("lstm_sequence: fused");
    if (any_needs_grad(tensors)) return fused_lstm_training(x, h0, c0, w, reverse);
    return fused_lstm(x, h0, c0, w, reverse);
  }
  const ProfileSpan span = profile_span("lstm_sequence: composed");
  const int64_t steps = x.dim(0), hidden = w.w_hh.dim(1);
  auto saved = std::make_shared<LstmSaved>();
  std::vector<Tensor> rows(static_cast<size_t>(steps) + 1);
  {
    NoGradGuard no_grad;
    const Tensor x_gates = linear(x.detach(), w.w_ih.detach(), detached(w.b_ih));
    const Tensor w_hh = w.w_hh.detach(), b_hh = detached(w.b_hh);
    Tensor h = h0.detach(), c = c0.detach();
    for (int64_t step = 0; step < steps; ++step) {
      const int64_t t = position(step, steps, reverse);
      const Tensor gates = x_gates.narrow(0, t, 1).squeeze(0) + linear(h, w_hh, b_hh);
      if (step == 0) {
        // docs/ops.md section 16: one op per step where the device has it for these dtypes.
        saved->fused =
            gates.dtype() == c.dtype() &&
            gates.device()->supports(SY_OP_LSTM_CELL, to_sy_dtype(gates.dtype())) &&
            gates.device()->supports(SY_OP_LSTM_CELL_BACKWARD, to_sy_dtype(gates.dtype()));
      }
      saved->h_prev.push_back(h);
      saved->c_prev.push_back(c);
      if (saved->fused) {
        Tensor act;
        fused_cell(gates, saved->c_prev.back(), &h, &c, &act);
        saved->act.push_back(act);
      } else {
        composed_cell(gates, hidden, *saved, &h, &c);
      }
      saved->c.push_back(c);
      rows[static_cast<size_t>(t)] = h;
    }
    rows.back() = c;
  }
  Tensor packed = stack(rows, 0);
  const std::vector<Tensor> inputs{x, h0, c0, w.w_ih, w.w_hh, w.b_ih, w.b_hh};
  if (!any_needs_grad(inputs)) return packed;
  const RecurrentWeights weights{w.w_ih.detach(), w.w_hh.detach(), Tensor(), Tensor()};
  attach_node(
      packed, "lstm_sequence", inputs,
      [saved, weights, x_data = x.detach(), reverse, steps, hidden](const Tensor& grad,
                                                                    const Node& node) {
        const LstmSaved& s = *saved;
        // Every step writes its whole [B, 4H] slice below, so nothing needs clearing.
        Tensor d_gates = empty_like_shape(grad, Shape{steps, x_data.dim(1), 4 * hidden});
        Tensor dh = zeros_like(s.h_prev.front());
        Tensor dc = grad.narrow(0, steps, 1).squeeze(0);
        for (int64_t step = steps - 1; step >= 0; --step) {
          const auto k = static_cast<size_t>(step);
          const int64_t t = position(step, steps, reverse);
          const Tensor dh_total = grad.narrow(0, t, 1).squeeze(0) + dh;
          Tensor d_step = d_gates.narrow(0, t, 1).squeeze(0);
          if (s.fused) {
            Tensor dc_prev = empty_like_shape(s.c[k], s.c[k].shape());
            run_op(SY_OP_LSTM_CELL_BACKWARD, {dh_total, dc, s.act[k], s.c_prev[k], s.c[k]},
                   {d_step, dc_prev});
            dc = dc_prev;
          } else {
            dc = composed_cell_backward(s, k, hidden, dh_total, dc, d_step);
          }
          dh = matmul(d_step, weights.w_hh);
        }
        Tensor h_prev = zeros(Shape{steps, x_data.dim(1), hidden}, grad.device(), grad.dtype());
        for (int64_t step = 0; step < steps; ++step) {
          h_prev.narrow(0, position(step, steps, reverse), 1)
              .copy_(s.h_prev[static_cast<size_t>(step)].unsqueeze(0));
        }
        Grads grads = weight_grads(node, x_data, h_prev, d_gates, d_gates, weights, 3);
        if (node.needs_grad(1)) grads[1] = dh;
        if (node.needs_grad(2)) grads[2] = dc;
        return grads;
      });
  return packed;
}

namespace {

struct GruSaved {
  std::vector<Tensor> r, z, n, hw_n, h_prev;  // in processing order
};

}  // namespace

Tensor gru_sequence(const Tensor& x, const Tensor& h0, const RecurrentWeights& w, bool reverse) {
  const std::vector<Tensor> tensors{x, h0, w.w_ih, w.w_hh, w.b_ih, w.b_hh};
  if (fused_available(SY_OP_GRU_SEQUENCE, SY_OP_GRU_SEQUENCE_BACKWARD, tensors, w)) {
    const ProfileSpan span = profile_span("gru_sequence: fused");
    if (any_needs_grad(tensors)) return fused_gru_training(x, h0, w, reverse);
    return fused_gru(x, h0, w, reverse);
  }
  const ProfileSpan span = profile_span("gru_sequence: composed");
  const int64_t steps = x.dim(0), hidden = w.w_hh.dim(1);
  auto saved = std::make_shared<GruSaved>();
  std::vector<Tensor> rows(static_cast<size_t>(steps));
  {
    NoGradGuard no_grad;
    const Tensor x_gates = linear(x.detach(), w.w_ih.detach(), detached(w.b_ih));
    const Tensor w_hh = w.w_hh.detach(), b_hh = detached(w.b_hh);
    Tensor h = h0.detach();
    for (int64_t step = 0; step < steps; ++step) {
      const int64_t t = position(step, steps, reverse);
      const Tensor gx = x_gates.narrow(0, t, 1).squeeze(0);
      const Tensor gh = linear(h, w_hh, b_hh);
      const Tensor r = sigmoid(gx.narrow(1, 0, hidden) + gh.narrow(1, 0, hidden));
      const Tensor z = sigmoid(gx.narrow(1, hidden, hidden) + gh.narrow(1, hidden, hidden));
      const Tensor hw_n = gh.narrow(1, 2 * hidden, hidden);
      const Tensor n = tanh(gx.narrow(1, 2 * hidden, hidden) + r * hw_n);
      saved->h_prev.push_back(h);
      h = n + z * (h - n);
      saved->r.push_back(r);
      saved->z.push_back(z);
      saved->n.push_back(n);
      saved->hw_n.push_back(hw_n);
      rows[static_cast<size_t>(t)] = h;
    }
  }
  Tensor out = stack(rows, 0);
  const std::vector<Tensor> inputs{x, h0, w.w_ih, w.w_hh, w.b_ih, w.b_hh};
  if (!any_needs_grad(inputs)) return out;
  const RecurrentWeights weights{w.w_ih.detach(), w.w_hh.detach(), Tensor(), Tensor()};
  attach_node(
      out, "gru_sequence", inputs,
      [saved, weights, x_data = x.detach(), reverse, steps, hidden](const Tensor& grad,
                                                                    const Node& node) {
        const GruSaved& s = *saved;
        const Shape gate_shape{steps, x_data.dim(1), 3 * hidden};
        Tensor d_gx = zeros(gate_shape, grad.device(), grad.dtype());
        Tensor d_gh = zeros(gate_shape, grad.device(), grad.dtype());
        Tensor dh = zeros_like(s.h_prev.front());
        for (int64_t step = steps - 1; step >= 0; --step) {
          const auto k = static_cast<size_t>(step);
          const int64_t t = position(step, steps, reverse);
          const Tensor dh_total = grad.narrow(0, t, 1).squeeze(0) + dh;
          const Tensor d_pre_n = dh_total * (1.0 - s.z[k]) * (1.0 - s.n[k] * s.n[k]);
          const Tensor d_pre_r = d_pre_n * s.hw_n[k] * s.r[k] * (1.0 - s.r[k]);
          const Tensor d_pre_z = dh_total * (s.h_prev[k] - s.n[k]) * s.z[k] * (1.0 - s.z[k]);
          Tensor gx_step = d_gx.narrow(0, t, 1).squeeze(0);
          Tensor gh_step = d_gh.narrow(0, t, 1).squeeze(0);
          gx_step.narrow(1, 0, hidden).copy_(d_pre_r);
          gx_step.narrow(1, hidden, hidden).copy_(d_pre_z);
          gx_step.narrow(1, 2 * hidden, hidden).copy_(d_pre_n);
          gh_step.narrow(1, 0, 2 * hidden).copy_(gx_step.narrow(1, 0, 2 * hidden));
          gh_step.narrow(1, 2 * hidden, hidden).copy_(d_pre_n * s.r[k]);
          dh = dh_total * s.z[k] + matmul(gh_step, weights.w_hh);
        }
        Tensor h_prev = zeros(Shape{steps, x_data.dim(1), hidden}, grad.device(), grad.dtype());
        for (int64_t step = 0; step < steps; ++step) {
          h_prev.narrow(0, position(step, steps, reverse), 1)
              .copy_(s.h_prev[static_cast<size_t>(step)].unsqueeze(0));
        }
        Grads grads = weight_grads(node, x_data, h_prev, d_gx, d_gh, weights, 2);
        if (node.needs_grad(1)) grads[1] = dh;
        return grads;
      });
  return out;
}

}  // namespace switchyard::detail
