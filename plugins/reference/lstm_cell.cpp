// LSTM_CELL and LSTM_CELL_BACKWARD (docs/ops.md section 16), computed in double per element from
// the stored inputs and rounded once to the output dtype.
#include <cmath>
#include <vector>

#include "ops.h"

namespace sy_reference {
namespace {

double sigmoid(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}

// B and H from the [B, 4H] gate-shaped tensor, after checking its rank and width.
void batch_and_hidden(const OpContext& ctx, const char* role, const TensorRef& gates, int64_t* b,
                      int64_t* h) {
  require_rank(ctx, role, gates, 2, "[B, 4H]");
  if (gates.shape[1] % 4 != 0) {
    fail(ctx, std::string(role) + " has shape " + gates.shape.to_string() +
                  ": its width must be 4H (the gates i, f, g, o)");
  }
  *b = gates.shape[0];
  *h = gates.shape[1] / 4;
}

}  // namespace

void run_lstm_cell(const OpContext& ctx) {
  require_io_counts(ctx, 2, 3);
  const TensorRef gates = ctx.input(0);
  require_float(ctx, "gates", gates);
  int64_t b = 0, h = 0;
  batch_and_hidden(ctx, "gates", gates, &b, &h);
  const Shape state = Shape::of({b, h});
  const char* roles[] = {"c_prev", "h", "c", "act"};
  const TensorRef others[] = {ctx.input(1), ctx.output(0), ctx.output(1), ctx.output(2)};
  for (int k = 0; k < 4; ++k) {
    require_same_dtype(ctx, roles[k], others[k], "gates", gates);
    require_shape(ctx, roles[k], others[k], k == 3 ? gates.shape : state);
  }
  const std::vector<float> z = read_f32(gates);
  const std::vector<float> c_prev = read_f32(others[0]);
  std::vector<float> h_out(c_prev.size()), c_out(c_prev.size()), act(z.size());
  for (int64_t r = 0; r < b; ++r) {
    for (int64_t j = 0; j < h; ++j) {
      const auto row = static_cast<size_t>(r * 4 * h);
      const auto at = static_cast<size_t>(r * h + j);
      const double i = sigmoid(z[row + j]);
      const double f = sigmoid(z[row + h + j]);
      const double g = std::tanh(static_cast<double>(z[row + 2 * h + j]));
      const double o = sigmoid(z[row + 3 * h + j]);
      const double c = f * static_cast<double>(c_prev[at]) + i * g;
      c_out[at] = static_cast<float>(c);
      h_out[at] = static_cast<float>(o * std::tanh(c));
      act[row + j] = static_cast<float>(i);
      act[row + h + j] = static_cast<float>(f);
      act[row + 2 * h + j] = static_cast<float>(g);
      act[row + 3 * h + j] = static_cast<float>(o);
    }
  }
  write_f32(others[1], h_out);
  write_f32(others[2], c_out);
  write_f32(others[3], act);
}

void run_lstm_cell_backward(const OpContext& ctx) {
  require_io_counts(ctx, 5, 2);
  const TensorRef act = ctx.input(2);
  require_float(ctx, "act", act);
  int64_t b = 0, h = 0;
  batch_and_hidden(ctx, "act", act, &b, &h);
  const Shape state = Shape::of({b, h});
  const char* roles[] = {"grad_h", "grad_c", "c_prev", "c", "grad_gates", "grad_c_prev"};
  const TensorRef others[] = {ctx.input(0), ctx.input(1),  ctx.input(3),
                              ctx.input(4), ctx.output(0), ctx.output(1)};
  for (int k = 0; k < 6; ++k) {
    require_same_dtype(ctx, roles[k], others[k], "act", act);
    require_shape(ctx, roles[k], others[k], k == 4 ? act.shape : state);
  }
  const std::vector<float> a = read_f32(act);
  const std::vector<float> grad_h = read_f32(others[0]);
  const std::vector<float> grad_c = read_f32(others[1]);
  const std::vector<float> c_prev = read_f32(others[2]);
  const std::vector<float> c = read_f32(others[3]);
  std::vector<float> grad_gates(a.size()), grad_c_prev(c.size());
  for (int64_t r = 0; r < b; ++r) {
    for (int64_t j = 0; j < h; ++j) {
      const auto row = static_cast<size_t>(r * 4 * h);
      const auto at = static_cast<size_t>(r * h + j);
      const double i = a[row + j], f = a[row + h + j], g = a[row + 2 * h + j],
                   o = a[row + 3 * h + j];
      const double t = std::tanh(static_cast<double>(c[at]));
      const double dh = grad_h[at];
      const double dc = static_cast<double>(grad_c[at]) + dh * o * (1.0 - t * t);
      grad_gates[row + j] = static_cast<float>(dc * g * i * (1.0 - i));
      grad_gates[row + h + j] =
          static_cast<float>(dc * static_cast<double>(c_prev[at]) * f * (1.0 - f));
      grad_gates[row + 2 * h + j] = static_cast<float>(dc * i * (1.0 - g * g));
      grad_gates[row + 3 * h + j] = static_cast<float>(dh * t * o * (1.0 - o));
      grad_c_prev[at] = static_cast<float>(dc * f);
    }
  }
  write_f32(others[4], grad_gates);
  write_f32(others[5], grad_c_prev);
}

}  // namespace sy_reference
