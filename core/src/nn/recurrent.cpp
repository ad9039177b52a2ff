// LSTM and GRU modules: parameters with PyTorch's names, layers and directions, dropout between
// layers; each direction of each layer runs as one node (recurrent_sequence.cpp).
#include <cmath>

#include "nn/recurrent_sequence.h"
#include "switchyard/nn_sequence.h"
#include "switchyard/ops.h"
#include "switchyard/status.h"

namespace switchyard {

namespace {

const char* cell_name(bool lstm) {
  return lstm ? "LSTM" : "GRU";
}

void check_options(const RecurrentOptions& o, const char* name) {
  auto fail = [name](const std::string& what) {
    throw_error(invalid_argument(std::string(name) + ": " + what));
  };
  if (o.input_size < 1) fail("input_size must be >= 1, got " + std::to_string(o.input_size));
  if (o.hidden_size < 1) fail("hidden_size must be >= 1, got " + std::to_string(o.hidden_size));
  if (o.num_layers < 1) fail("num_layers must be >= 1, got " + std::to_string(o.num_layers));
  if (o.dropout < 0.0 || o.dropout >= 1.0) {
    fail("dropout must be in [0, 1), got " + std::to_string(o.dropout));
  }
}

}  // namespace

RecurrentBase::RecurrentBase(InitContext& init, const RecurrentOptions& options, Cell cell)
    : options_(options), cell_(cell) {
  const bool lstm = cell == Cell::kLstm;
  check_options(options, cell_name(lstm));
  const int64_t gates = (lstm ? 4 : 3) * options.hidden_size;
  const double bound = 1.0 / std::sqrt(static_cast<double>(options.hidden_size));
  const int directions = options.bidirectional ? 2 : 1;
  for (int layer = 0; layer < options.num_layers; ++layer) {
    const int64_t in = layer == 0 ? options.input_size : directions * options.hidden_size;
    for (int direction = 0; direction < directions; ++direction) {
      const std::string suffix =
          "_l" + std::to_string(layer) + (direction == 1 ? "_reverse" : std::string());
      auto draw = [&](const std::string& name, const Shape& shape) {
        return register_parameter(name + suffix, init_uniform(init, shape, -bound, bound));
      };
      Weights w;
      w.w_ih = draw("weight_ih", Shape{gates, in});
      w.w_hh = draw("weight_hh", Shape{gates, options.hidden_size});
      if (options.bias) {
        w.b_ih = draw("bias_ih", Shape{gates});
        w.b_hh = draw("bias_hh", Shape{gates});
      }
      weights_.push_back(w);
    }
  }
  for (int layer = 0; layer + 1 < options.num_layers && options.dropout > 0.0; ++layer) {
    auto dropout = std::make_shared<Dropout>(options.dropout, options.dropout_seed + layer);
    dropouts_.push_back(dropout);
    register_module("dropout_l" + std::to_string(layer), dropout);
  }
}

void RecurrentBase::check_state(const Tensor& state, const char* name, int64_t batch) const {
  if (!state.defined()) return;
  const int64_t layers = options_.num_layers * (options_.bidirectional ? 2 : 1);
  if (state.rank() != 3 || state.dim(0) != layers || state.dim(1) != batch ||
      state.dim(2) != options_.hidden_size) {
    throw_error(invalid_argument(describe() + ": " + name + " must be [" + std::to_string(layers) +
                                 ", " + std::to_string(batch) + ", " +
                                 std::to_string(options_.hidden_size) + "], got " +
                                 state.shape().to_string()));
  }
}

RecurrentResult RecurrentBase::run(const Tensor& input, const Tensor& h0, const Tensor& c0) {
  const bool lstm = cell_ == Cell::kLstm;
  if (input.rank() != 3 || input.dim(2) != options_.input_size || input.dim(0) < 1 ||
      input.dim(1) < 1) {
    throw_error(invalid_argument(describe() + ": expects input " +
                                 (options_.batch_first ? "[batch, time, " : "[time, batch, ") +
                                 std::to_string(options_.input_size) +
                                 "] with batch and time >= 1, got " + input.shape().to_string()));
  }
  if (!lstm && c0.defined()) throw_error(invalid_argument("GRU: takes no cell state c0"));
  const Tensor x = options_.batch_first ? input.transpose(0, 1) : input;  // [T, B, in]
  const int64_t batch = x.dim(1), hidden = options_.hidden_size;
  check_state(h0, "h0", batch);
  check_state(c0, "c0", batch);
  const int directions = options_.bidirectional ? 2 : 1;
  const Tensor zero_state = zeros(Shape{batch, hidden}, x.device(), weights_[0].w_ih.dtype());
  std::vector<Tensor> h_n, c_n;
  Tensor layer_input = x.to(weights_[0].w_ih.dtype());
  for (int layer = 0; layer < options_.num_layers; ++layer) {
    std::vector<Tensor> outputs;
    for (int direction = 0; direction < directions; ++direction) {
      const int index = layer * directions + direction;
      const Weights& w = weights_[static_cast<size_t>(index)];
      const detail::RecurrentWeights weights{w.w_ih, w.w_hh, w.b_ih, w.b_hh};
      const Tensor h = h0.defined() ? h0.narrow(0, index, 1).squeeze(0) : zero_state;
      const bool reverse = direction == 1;
      if (lstm) {
        const Tensor c = c0.defined() ? c0.narrow(0, index, 1).squeeze(0) : zero_state;
        const Tensor packed = detail::lstm_sequence(layer_input, h, c, weights, reverse);
        const int64_t steps = layer_input.dim(0);
        outputs.push_back(packed.narrow(0, 0, steps));
        h_n.push_back(packed.narrow(0, reverse ? 0 : steps - 1, 1).squeeze(0));
        c_n.push_back(packed.narrow(0, steps, 1).squeeze(0));
      } else {
        const Tensor out = detail::gru_sequence(layer_input, h, weights, reverse);
        outputs.push_back(out);
        h_n.push_back(out.narrow(0, reverse ? 0 : out.dim(0) - 1, 1).squeeze(0));
      }
    }
    layer_input = directions == 2 ? concat(outputs, 2) : outputs[0];
    if (layer + 1 < options_.num_layers && !dropouts_.empty()) {
      layer_input = (*dropouts_[static_cast<size_t>(layer)])(layer_input);
    }
  }
  RecurrentResult result;
  result.output = options_.batch_first ? layer_input.transpose(0, 1) : layer_input;
  result.h_n = stack(h_n, 0);
  if (lstm) result.c_n = stack(c_n, 0);
  return result;
}

std::string RecurrentBase::describe() const {
  const RecurrentOptions& o = options_;
  return std::string(cell_name(cell_ == Cell::kLstm)) + "(" + std::to_string(o.input_size) + ", " +
         std::to_string(o.hidden_size) + ", num_layers=" + std::to_string(o.num_layers) +
         ", bias=" + (o.bias ? "true" : "false") +
         ", batch_first=" + (o.batch_first ? "true" : "false") +
         ", dropout=" + std::to_string(o.dropout) +
         ", bidirectional=" + (o.bidirectional ? "true" : "false") + ")";
}

}  // namespace switchyard
