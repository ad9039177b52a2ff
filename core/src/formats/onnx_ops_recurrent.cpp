// ONNX LSTM and GRU (formats/onnx_ops_internal.h): ONNX's gate order and layouts turned into
// PyTorch's, then one LSTM_SEQUENCE / GRU_SEQUENCE per direction where the device has it.
#include <algorithm>

#include "formats/onnx_ops_internal.h"
#include "nn/recurrent_sequence.h"
#include "switchyard/ops.h"

namespace switchyard::onnx_detail {

namespace {

// ---- recurrent ops ------------------------------------------------------------------------------

struct RecurrentPack {
  std::vector<detail::RecurrentWeights> directions;
};

// ONNX gate blocks reordered to PyTorch's (LSTM iofc -> ifco, GRU zrh -> rzh) for one direction.
std::vector<float> reorder_gates(const HostTensor& t, int64_t direction, int64_t rows_per_gate,
                                 int64_t row_width, const std::vector<int>& order) {
  const int64_t gates = static_cast<int64_t>(order.size());
  const int64_t block = rows_per_gate * row_width;
  std::vector<float> out(static_cast<size_t>(gates * block));
  const int64_t base = direction * gates * block;
  for (int64_t g = 0; g < gates; ++g) {
    const int64_t from = base + order[static_cast<size_t>(g)] * block;
    std::copy(t.f.begin() + from, t.f.begin() + from + block, out.begin() + g * block);
  }
  return out;
}
// The node's attributes: what switchyard runs (PyTorch's LSTM and GRU), or a failure naming the
// attribute. Returns the direction: forward, reverse or bidirectional.
std::string checked_direction(NodeContext& c, bool lstm) {
  const std::string direction = c.attr_string("direction", "forward");
  if (direction != "forward" && direction != "bidirectional" && direction != "reverse")
    c.fail("direction " + direction + " is not known");
  const int64_t layout = c.attr_int("layout", 0);
  if (layout != 0 && layout != 1) c.fail("layout " + std::to_string(layout) + " is not known");
  if (c.attr("clip") != nullptr) c.fail("clip is not supported");
  if (lstm && c.attr_int("input_forget", 0) != 0) c.fail("input_forget 1 is not supported");
  const std::vector<std::string> activations = c.attr_strings("activations");
  const std::vector<std::string> standard =
      lstm ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
           : std::vector<std::string>{"Sigmoid", "Tanh"};
  for (size_t k = 0; k < activations.size(); ++k) {
    if (activations[k] != standard[k % standard.size()])
      c.fail("activation " + activations[k] + " is not supported");
  }
  if (!c.attr_floats("activation_alpha").empty() || !c.attr_floats("activation_beta").empty()) {
    c.fail("activation_alpha and activation_beta are not supported");
  }
  if (lstm && c.has(7)) c.fail("peephole weights (P) are not supported");
  return direction;
}

// W, R and B as one RecurrentWeights per direction, in PyTorch's gate order. `constant`: they are
// initializers, packed once and kept (a graph input is packed again each run).
std::shared_ptr<RecurrentPack> pack_weights(NodeContext& c, bool lstm, int64_t dirs, int64_t hidden,
                                            int64_t input, bool constant) {
  const int64_t gates = lstm ? 4 : 3;
  const std::vector<int> order = lstm ? std::vector<int>{0, 2, 3, 1} : std::vector<int>{1, 0, 2};
  auto out = std::make_shared<RecurrentPack>();
  const auto& device = c.model().device;
  for (int64_t d = 0; d < dirs; ++d) {
    detail::RecurrentWeights w;
    w.constant = constant;  // initializers are the model's own copies, which nothing writes
    w.w_ih = Tensor::from_host(reorder_gates(c.host_values(1), d, hidden, input, order),
                               Shape{gates * hidden, input}, device);
    w.w_hh = Tensor::from_host(reorder_gates(c.host_values(2), d, hidden, hidden, order),
                               Shape{gates * hidden, hidden}, device);
    if (c.has(3)) {
      const HostTensor& b = c.host_values(3);
      HostTensor wb = HostTensor::zeros(kFloat, {dirs, gates * hidden, 1});
      HostTensor rb = wb;
      for (int64_t dd = 0; dd < dirs; ++dd) {
        for (int64_t k = 0; k < gates * hidden; ++k) {
          wb.f[static_cast<size_t>(dd * gates * hidden + k)] =
              b.f[static_cast<size_t>(dd * 2 * gates * hidden + k)];
          rb.f[static_cast<size_t>(dd * gates * hidden + k)] =
              b.f[static_cast<size_t>(dd * 2 * gates * hidden + gates * hidden + k)];
        }
      }
      w.b_ih =
          Tensor::from_host(reorder_gates(wb, d, hidden, 1, order), Shape{gates * hidden}, device);
      w.b_hh =
          Tensor::from_host(reorder_gates(rb, d, hidden, 1, order), Shape{gates * hidden}, device);
    }
    out->directions.push_back(std::move(w));
  }
  return out;
}

// ONNX's GRU with linear_before_reset 0, which PyTorch's GRU (and GRU_SEQUENCE) does not compute:
// the reset gate scales h before its product with R_h, n = tanh(W_n x + b_wn + R_n (r h) + b_rn).
// Composed: the input projection of every step as one product, then each step's gates.
Tensor gru_reset_before(const Tensor& x, const Tensor& h0, const detail::RecurrentWeights& w,
                        bool reverse) {
  const int64_t steps = x.dim(0), batch = x.dim(1), hidden = h0.dim(1);
  const Tensor projected =
      linear(x.reshape(Shape{steps * batch, x.dim(2)}), w.w_ih, w.b_ih)
          .reshape(Shape{steps, batch, 3 * hidden});  // gates r, z, n (PyTorch's order)
  const Tensor r_rows = w.w_hh.narrow(0, 0, 2 * hidden),
               n_rows = w.w_hh.narrow(0, 2 * hidden, hidden);
  const Tensor r_bias = w.b_hh.defined() ? w.b_hh.narrow(0, 0, 2 * hidden) : Tensor();
  const Tensor n_bias = w.b_hh.defined() ? w.b_hh.narrow(0, 2 * hidden, hidden) : Tensor();
  Tensor h = h0;
  std::vector<Tensor> outputs(static_cast<size_t>(steps));
  for (int64_t step = 0; step < steps; ++step) {
    const int64_t t = reverse ? steps - 1 - step : step;
    const Tensor gx = projected.narrow(0, t, 1).reshape(Shape{batch, 3 * hidden});
    const Tensor rz = sigmoid(gx.narrow(1, 0, 2 * hidden) + linear(h, r_rows, r_bias));
    const Tensor r = rz.narrow(1, 0, hidden), z = rz.narrow(1, hidden, hidden);
    const Tensor n = tanh(gx.narrow(1, 2 * hidden, hidden) + linear(r * h, n_rows, n_bias));
    h = n + z * (h - n);  // (1 - z) n + z h
    outputs[static_cast<size_t>(t)] = h.unsqueeze(0);
  }
  return concat(outputs, 0);
}

}  // namespace

void device_recurrent(NodeContext& c, bool lstm) {
  const int64_t gates = lstm ? 4 : 3;
  const std::string direction = checked_direction(c, lstm);
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  // W, R and B are usually initializers; given as graph inputs they are read back and packed
  // again on every run.
  const bool constant = c.constant(1) && c.constant(2) && (!c.has(3) || c.constant(3));
  // An integer W, R or B (a hostile file) has its values in HostTensor::i and none in f, which
  // pack_weights reads: the fuzzer found the read past an empty vector.
  for (size_t k = 1; k <= 3; ++k) {
    const HostTensor* h = c.has(k) ? c.host(k) : nullptr;
    if (c.has(k) && (!is_float_type(c.type(k)) ||
                     (h != nullptr && static_cast<int64_t>(h->f.size()) != h->numel()))) {
      c.fail(std::string(k == 1 ? "W" : k == 2 ? "R" : "B") + " must be a float tensor");
    }
  }
  // layout 1 (batch first): X [B, T, I] and the states [B, D, H], turned to layout 0 here and back
  // at the end.
  const bool batch_first = c.attr_int("layout", 0) == 1;
  Tensor x = dev_float(c, 0);
  if (x.rank() != 3) c.fail("X must have rank 3, got " + x.shape().to_string());
  if (batch_first) x = x.transpose(0, 1);
  x = x.contiguous();  // [T, B, I]
  const int64_t steps = x.dim(0), batch = x.dim(1), input = x.dim(2);
  if (steps < 1 || batch < 1) {
    c.fail("X " + x.shape().to_string() + " has no steps or no sequences: " +
           (lstm ? "LSTM" : "GRU") + " needs a sequence of length >= 1 and batch >= 1");
  }
  const int64_t hidden = c.attr_int("hidden_size", c.shape(2).empty() ? 0 : c.shape(2).back());
  if (hidden < 1 || hidden > (int64_t{1} << 24))  // before gates * hidden can overflow
    c.fail("hidden_size " + std::to_string(hidden) + " must be 1 to 2^24");
  if (c.shape(1) != Ints{dirs, gates * hidden, input}) {
    c.fail("W " + shape_text(c.shape(1)) + " must be " + shape_text({dirs, gates * hidden, input}));
  }
  if (c.shape(2) != Ints{dirs, gates * hidden, hidden}) {
    c.fail("R " + shape_text(c.shape(2)) + " must be " +
           shape_text({dirs, gates * hidden, hidden}));
  }
  if (c.has(3) && c.shape(3) != Ints{dirs, 2 * gates * hidden}) {
    c.fail("B " + shape_text(c.shape(3)) + " must be " + shape_text({dirs, 2 * gates * hidden}));
  }
  if (c.has(4)) {
    const Ints lens = c.ints(4);
    for (const int64_t len : lens) {
      if (len != steps) c.fail("sequence_lens other than the full length are not supported");
    }
  }
  const auto pack_now = [&] { return pack_weights(c, lstm, dirs, hidden, input, constant); };
  const std::shared_ptr<RecurrentPack> pack =
      constant ? c.cached<RecurrentPack>("rnn", pack_now) : pack_now();
  const auto initial = [&](size_t k, int64_t d) {
    if (!c.has(k)) return zeros(Shape{batch, hidden}, c.model().device);
    Tensor s = dev_float(c, k);
    if (batch_first && s.rank() == 3) s = s.transpose(0, 1);
    if (s.shape() != Shape{dirs, batch, hidden})
      c.fail("initial state " + s.shape().to_string() + " must be " +
             Shape{dirs, batch, hidden}.to_string() + " (layout 0)");
    return s.narrow(0, d, 1).reshape(Shape{batch, hidden}).contiguous();
  };
  const bool reset_before = !lstm && c.attr_int("linear_before_reset", 0) == 0;
  std::vector<Tensor> ys, hs, cs;
  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const detail::RecurrentWeights& w = pack->directions[static_cast<size_t>(d)];
    Tensor y;
    if (lstm) {
      const Tensor packed = detail::lstm_sequence(x, initial(5, d), initial(6, d), w, reverse);
      y = packed.narrow(0, 0, steps);
      cs.push_back(packed.narrow(0, steps, 1));
    } else if (reset_before) {
      y = gru_reset_before(x, initial(5, d), w, reverse);
    } else {
      y = detail::gru_sequence(x, initial(5, d), w, reverse);
    }
    ys.push_back(y.unsqueeze(1));                           // [T, 1, B, H]
    hs.push_back(y.narrow(0, reverse ? 0 : steps - 1, 1));  // [1, B, H]
  }
  Tensor all = dirs == 1 ? ys[0] : concat(ys, 1), last = dirs == 1 ? hs[0] : concat(hs, 0);
  Tensor cell = lstm ? (dirs == 1 ? cs[0] : concat(cs, 0)) : Tensor();
  if (batch_first) {  // Y [B, T, D, H]; Y_h and Y_c [B, D, H]
    all = all.permute({2, 0, 1, 3});
    last = last.transpose(0, 1);
    if (lstm) cell = cell.transpose(0, 1);
  }
  c.set_device(0, all, kFloat);
  c.set_device(1, last, kFloat);
  if (lstm) c.set_device(2, cell, kFloat);
}

}  // namespace switchyard::onnx_detail
