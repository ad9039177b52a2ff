// ONNX LSTM, GRU and RNN (formats/onnx_ops_internal.h): ONNX's gate order and layouts turned into
// PyTorch's, then one LSTM_SEQUENCE / GRU_SEQUENCE per direction where the device has it; RNN (and
// GRU with the reset gate before its product) composed, the input projection as one product.
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
int64_t gate_count(RecurrentKind kind) {
  return kind == RecurrentKind::lstm ? 4 : kind == RecurrentKind::gru ? 3 : 1;
}

const char* kind_name(RecurrentKind kind) {
  return kind == RecurrentKind::lstm ? "LSTM" : kind == RecurrentKind::gru ? "GRU" : "RNN";
}

// An RNN's activation per direction (ONNX's default Tanh; PyTorch's nn.RNN exports Tanh or Relu).
enum class Activation { tanh, relu, sigmoid };

Tensor activate(Activation a, const Tensor& x) {
  return a == Activation::tanh ? tanh(x) : a == Activation::relu ? relu(x) : sigmoid(x);
}

// The node's attributes: what switchyard runs (PyTorch's LSTM, GRU and RNN), or a failure naming
// the attribute. Returns the direction: forward, reverse or bidirectional.
std::string checked_direction(NodeContext& c, RecurrentKind kind) {
  const bool lstm = kind == RecurrentKind::lstm;
  const std::string direction = c.attr_string("direction", "forward");
  if (direction != "forward" && direction != "bidirectional" && direction != "reverse")
    c.fail("direction " + direction + " is not known");
  const int64_t layout = c.attr_int("layout", 0);
  if (layout != 0 && layout != 1) c.fail("layout " + std::to_string(layout) + " is not known");
  if (c.attr("clip") != nullptr) c.fail("clip is not supported");
  if (lstm && c.attr_int("input_forget", 0) != 0) c.fail("input_forget 1 is not supported");
  const std::vector<std::string> activations = c.attr_strings("activations");
  if (kind != RecurrentKind::rnn) {
    const std::vector<std::string> standard =
        lstm ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
             : std::vector<std::string>{"Sigmoid", "Tanh"};
    for (size_t k = 0; k < activations.size(); ++k) {
      if (activations[k] != standard[k % standard.size()])
        c.fail("activation " + activations[k] + " is not supported");
    }
  }
  if (!c.attr_floats("activation_alpha").empty() || !c.attr_floats("activation_beta").empty()) {
    c.fail("activation_alpha and activation_beta are not supported");
  }
  if (lstm && c.has(7)) c.fail("peephole weights (P) are not supported");
  return direction;
}

// An RNN's activation for each direction: one name for every direction or one per direction.
std::vector<Activation> rnn_activations(NodeContext& c, int64_t dirs) {
  std::vector<std::string> names = c.attr_strings("activations");
  if (names.empty()) names = {"Tanh"};
  if (names.size() == 1 && dirs == 2) names.push_back(names[0]);
  if (static_cast<int64_t>(names.size()) != dirs) {
    c.fail("activations has " + std::to_string(names.size()) + " names for " +
           std::to_string(dirs) + " direction(s)");
  }
  std::vector<Activation> out;
  for (const std::string& name : names) {
    if (name == "Tanh")
      out.push_back(Activation::tanh);
    else if (name == "Relu")
      out.push_back(Activation::relu);
    else if (name == "Sigmoid")
      out.push_back(Activation::sigmoid);
    else
      c.fail("activation " + name + " is not supported (Tanh, Relu or Sigmoid)");
  }
  return out;
}

// W, R and B as one RecurrentWeights per direction, in PyTorch's gate order. `constant`: they are
// initializers, packed once and kept (a graph input is packed again each run).
std::shared_ptr<RecurrentPack> pack_weights(NodeContext& c, RecurrentKind kind, int64_t dirs,
                                            int64_t hidden, int64_t input, bool constant) {
  const int64_t gates = gate_count(kind);
  const std::vector<int> order = kind == RecurrentKind::lstm  ? std::vector<int>{0, 2, 3, 1}
                                 : kind == RecurrentKind::gru ? std::vector<int>{1, 0, 2}
                                                              : std::vector<int>{0};
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

// ONNX's RNN (PyTorch's nn.RNN): h = f(W x + b_w + R h + b_r), the input projection of every step
// as one product, then one product and one activation per step.
Tensor rnn_sequence(const Tensor& x, const Tensor& h0, const detail::RecurrentWeights& w,
                    Activation f, bool reverse) {
  const int64_t steps = x.dim(0), batch = x.dim(1), hidden = h0.dim(1);
  const Tensor projected = linear(x.reshape(Shape{steps * batch, x.dim(2)}), w.w_ih, w.b_ih)
                               .reshape(Shape{steps, batch, hidden});
  Tensor h = h0;
  std::vector<Tensor> outputs(static_cast<size_t>(steps));
  for (int64_t step = 0; step < steps; ++step) {
    const int64_t t = reverse ? steps - 1 - step : step;
    h = activate(
        f, projected.narrow(0, t, 1).reshape(Shape{batch, hidden}) + linear(h, w.w_hh, w.b_hh));
    outputs[static_cast<size_t>(t)] = h.unsqueeze(0);
  }
  return concat(outputs, 0);
}

// An integer W, R or B (a hostile file) has its values in HostTensor::i and none in f, which
// pack_weights reads: the fuzzer found the read past an empty vector.
void check_float_weights(NodeContext& c) {
  for (size_t k = 1; k <= 3; ++k) {
    const HostTensor* h = c.has(k) ? c.host(k) : nullptr;
    if (c.has(k) && (!is_float_type(c.type(k)) ||
                     (h != nullptr && static_cast<int64_t>(h->f.size()) != h->numel()))) {
      c.fail(std::string(k == 1 ? "W" : k == 2 ? "R" : "B") + " must be a float tensor");
    }
  }
}

void check_weight_shapes(NodeContext& c, int64_t dirs, int64_t gates, int64_t hidden,
                         int64_t input) {
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
}

struct DirectionResult {
  Tensor y, last, cell;  // [L, b, H], [1, b, H], [1, b, H] (an LSTM's)
};

// The batch rows of one sequence length.
struct LengthGroup {
  int64_t length = 0;
  std::vector<int64_t> rows;
};

// sequence_lens as groups of rows of equal length, longest first; none where every sequence has
// the full length (or sequence_lens is absent). Each length must be 1 to T.
std::vector<LengthGroup> length_groups(NodeContext& c, int64_t steps, int64_t batch) {
  if (!c.has(4)) return {};
  const Ints lens = c.ints(4);
  if (static_cast<int64_t>(lens.size()) != batch) {
    c.fail("sequence_lens has " + std::to_string(lens.size()) + " lengths for a batch of " +
           std::to_string(batch));
  }
  std::vector<LengthGroup> groups;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = lens[static_cast<size_t>(b)];
    if (len < 1 || len > steps) {
      c.fail("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(len) +
             " must be 1 to the sequence's length " + std::to_string(steps));
    }
    auto at = std::find_if(groups.begin(), groups.end(),
                           [&](const LengthGroup& g) { return g.length == len; });
    if (at == groups.end()) at = groups.insert(groups.end(), LengthGroup{len, {}});
    at->rows.push_back(b);
  }
  if (groups.size() == 1 && groups[0].length == steps) return {};
  std::sort(groups.begin(), groups.end(),
            [](const LengthGroup& a, const LengthGroup& b) { return a.length > b.length; });
  return groups;
}

// One direction where the sequences have different lengths: each group of equal length runs
// alone over its first L steps (so a reverse direction starts at its own last step, as ONNX says),
// its Y padded with zeros to T; the groups' rows are put back in the batch's order.
template <typename Run>
DirectionResult by_length(NodeContext& c, const std::vector<LengthGroup>& groups, const Tensor& x,
                          const Tensor& h0, const Tensor& c0, const Run& run) {
  const int64_t steps = x.dim(0);
  std::vector<Tensor> ys, lasts, cells;
  std::vector<int64_t> order;
  for (const LengthGroup& g : groups) {
    const Tensor rows =
        Tensor::from_host(g.rows, Shape{static_cast<int64_t>(g.rows.size())}, c.model().device);
    const DirectionResult r = run(index_select(x.narrow(0, 0, g.length), 1, rows).contiguous(),
                                  index_select(h0, 0, rows).contiguous(),
                                  c0.defined() ? index_select(c0, 0, rows).contiguous() : Tensor());
    ys.push_back(padded_axis(c, r.y, 0, 0, steps - g.length, 0.0));
    lasts.push_back(r.last);
    if (r.cell.defined()) cells.push_back(r.cell);
    order.insert(order.end(), g.rows.begin(), g.rows.end());
  }
  std::vector<int64_t> back(order.size());
  for (size_t k = 0; k < order.size(); ++k)
    back[static_cast<size_t>(order[k])] = static_cast<int64_t>(k);
  const Tensor restore =
      Tensor::from_host(back, Shape{static_cast<int64_t>(back.size())}, c.model().device);
  DirectionResult out;
  out.y = index_select(concat(ys, 1), 1, restore);
  out.last = index_select(concat(lasts, 1), 1, restore);
  if (!cells.empty()) out.cell = index_select(concat(cells, 1), 1, restore);
  return out;
}

}  // namespace

void device_recurrent(NodeContext& c, RecurrentKind kind) {
  const bool lstm = kind == RecurrentKind::lstm;
  const int64_t gates = gate_count(kind);
  const std::string direction = checked_direction(c, kind);
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  // W, R and B are usually initializers; given as graph inputs they are read back and packed
  // again on every run.
  const bool constant = c.constant(1) && c.constant(2) && (!c.has(3) || c.constant(3));
  check_float_weights(c);
  // layout 1 (batch first): X [B, T, I] and the states [B, D, H], turned to layout 0 here and back
  // at the end.
  const bool batch_first = c.attr_int("layout", 0) == 1;
  Tensor x = dev_float(c, 0);
  if (x.rank() != 3) c.fail("X must have rank 3, got " + x.shape().to_string());
  if (batch_first) x = x.transpose(0, 1);
  x = x.contiguous();  // [T, B, I]
  const int64_t steps = x.dim(0), batch = x.dim(1), input = x.dim(2);
  if (steps < 1 || batch < 1) {
    c.fail("X " + x.shape().to_string() + " has no steps or no sequences: " + kind_name(kind) +
           " needs a sequence of length >= 1 and batch >= 1");
  }
  const int64_t hidden = c.attr_int("hidden_size", c.shape(2).empty() ? 0 : c.shape(2).back());
  if (hidden < 1 || hidden > (int64_t{1} << 24))  // before gates * hidden can overflow
    c.fail("hidden_size " + std::to_string(hidden) + " must be 1 to 2^24");
  check_weight_shapes(c, dirs, gates, hidden, input);
  const std::vector<LengthGroup> groups = length_groups(c, steps, batch);
  const auto pack_now = [&] { return pack_weights(c, kind, dirs, hidden, input, constant); };
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
  const bool reset_before = kind == RecurrentKind::gru && c.attr_int("linear_before_reset", 0) == 0;
  const std::vector<Activation> activations =
      kind == RecurrentKind::rnn ? rnn_activations(c, dirs) : std::vector<Activation>{};
  // One direction over xs [L, b, I] from h0 (and c0) [b, H]: Y [L, b, H], Y_h [1, b, H] and an
  // LSTM's Y_c [1, b, H].
  const auto run = [&](const Tensor& xs, const Tensor& h0, const Tensor& c0, int64_t d) {
    const bool reverse = direction == "reverse" || d == 1;
    const detail::RecurrentWeights& w = pack->directions[static_cast<size_t>(d)];
    const int64_t length = xs.dim(0);
    DirectionResult r;
    if (lstm) {
      const Tensor packed = detail::lstm_sequence(xs, h0, c0, w, reverse);
      r.y = packed.narrow(0, 0, length);
      r.cell = packed.narrow(0, length, 1);
    } else if (kind == RecurrentKind::rnn) {
      r.y = rnn_sequence(xs, h0, w, activations[static_cast<size_t>(d)], reverse);
    } else if (reset_before) {
      r.y = gru_reset_before(xs, h0, w, reverse);
    } else {
      r.y = detail::gru_sequence(xs, h0, w, reverse);
    }
    r.last = r.y.narrow(0, reverse ? 0 : length - 1, 1);
    return r;
  };
  std::vector<Tensor> ys, hs, cs;
  for (int64_t d = 0; d < dirs; ++d) {
    const DirectionResult r =
        groups.empty() ? run(x, initial(5, d), lstm ? initial(6, d) : Tensor(), d)
                       : by_length(c, groups, x, initial(5, d), lstm ? initial(6, d) : Tensor(),
                                   [&](const Tensor& xs, const Tensor& h0, const Tensor& c0) {
                                     return run(xs, h0, c0, d);
                                   });
    ys.push_back(r.y.unsqueeze(1));  // [T, 1, B, H]
    hs.push_back(r.last);            // [1, B, H]
    if (lstm) cs.push_back(r.cell);
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
