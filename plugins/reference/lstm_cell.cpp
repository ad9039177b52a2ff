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

// The call's tensors in call order (inputs, then outputs, named by `roles`), checked against the
// [B, 4H] tensor at index `wide` (gates forward, act backward): one float dtype, [B, 4H] for
// `wide` and `other_wide` (act forward, grad_gates backward), [B, H] for the rest.
struct CellCall {
  std::vector<TensorRef> t;
  int64_t b = 0, h = 0;
};

CellCall checked_call(const OpContext& ctx, const std::vector<const char*>& roles, uint32_t inputs,
                      size_t wide, size_t other_wide) {
  require_io_counts(ctx, inputs, static_cast<uint32_t>(roles.size()) - inputs);
  CellCall call;
  for (uint32_t k = 0; k < roles.size(); ++k) {
    call.t.push_back(k < inputs ? ctx.input(k) : ctx.output(k - inputs));
  }
  const TensorRef& gates = call.t[wide];
  require_float(ctx, roles[wide], gates);
  require_rank(ctx, roles[wide], gates, 2, "[B, 4H]");
  if (gates.shape[1] % 4 != 0) {
    fail(ctx, std::string(roles[wide]) + " has shape " + gates.shape.to_string() +
                  ": its width must be 4H (the gates i, f, g, o)");
  }
  call.b = gates.shape[0];
  call.h = gates.shape[1] / 4;
  const Shape state = Shape::of({call.b, call.h});
  for (size_t k = 0; k < roles.size(); ++k) {
    if (k == wide) continue;
    require_same_dtype(ctx, roles[k], call.t[k], roles[wide], gates);
    require_shape(ctx, roles[k], call.t[k], k == other_wide ? gates.shape : state);
  }
  return call;
}

}  // namespace

void run_lstm_cell(const OpContext& ctx) {
  const CellCall call = checked_call(ctx, {"gates", "c_prev", "h", "c", "act"}, 2, 0, 4);
  const int64_t b = call.b, h = call.h;
  const TensorRef& gates = call.t[0];
  const std::vector<float> z = read_f32(gates);
  const std::vector<float> c_prev = read_f32(call.t[1]);
  std::vector<float> h_out(c_prev.size()), c_out(c_prev.size()), act(z.size());
  for (int64_t r = 0; r < b; ++r) {
    for (int64_t j = 0; j < h; ++j) {
      const auto row = static_cast<size_t>(r * 4 * h);
      const auto at = static_cast<size_t>(r * h + j);
      const double i = sigmoid(static_cast<double>(z[row + j]));
      const double f = sigmoid(static_cast<double>(z[row + h + j]));
      const double g = std::tanh(static_cast<double>(z[row + 2 * h + j]));
      const double o = sigmoid(static_cast<double>(z[row + 3 * h + j]));
      const double c = f * static_cast<double>(c_prev[at]) + i * g;
      c_out[at] = static_cast<float>(c);
      h_out[at] = static_cast<float>(o * std::tanh(c));
      act[row + j] = static_cast<float>(i);
      act[row + h + j] = static_cast<float>(f);
      act[row + 2 * h + j] = static_cast<float>(g);
      act[row + 3 * h + j] = static_cast<float>(o);
    }
  }
  write_f32(call.t[2], h_out);
  write_f32(call.t[3], c_out);
  write_f32(call.t[4], act);
}

void run_lstm_cell_backward(const OpContext& ctx) {
  const CellCall call = checked_call(
      ctx, {"grad_h", "grad_c", "act", "c_prev", "c", "grad_gates", "grad_c_prev"}, 5, 2, 5);
  const int64_t b = call.b, h = call.h;
  const std::vector<float> a = read_f32(call.t[2]);
  const std::vector<float> grad_h = read_f32(call.t[0]);
  const std::vector<float> grad_c = read_f32(call.t[1]);
  const std::vector<float> c_prev = read_f32(call.t[3]);
  const std::vector<float> c = read_f32(call.t[4]);
  std::vector<float> grad_gates(a.size()), grad_c_prev(c.size());
  for (int64_t r = 0; r < b; ++r) {
    for (int64_t j = 0; j < h; ++j) {
      const auto row = static_cast<size_t>(r * 4 * h);
      const auto at = static_cast<size_t>(r * h + j);
      const double i = static_cast<double>(a[row + j]), f = static_cast<double>(a[row + h + j]),
                   g = static_cast<double>(a[row + 2 * h + j]),
                   o = static_cast<double>(a[row + 3 * h + j]);
      const double t = std::tanh(static_cast<double>(c[at]));
      const double dh = static_cast<double>(grad_h[at]);
      const double dc = static_cast<double>(grad_c[at]) + dh * o * (1.0 - t * t);
      grad_gates[row + j] = static_cast<float>(dc * g * i * (1.0 - i));
      grad_gates[row + h + j] =
          static_cast<float>(dc * static_cast<double>(c_prev[at]) * f * (1.0 - f));
      grad_gates[row + 2 * h + j] = static_cast<float>(dc * i * (1.0 - g * g));
      grad_gates[row + 3 * h + j] = static_cast<float>(dh * t * o * (1.0 - o));
      grad_c_prev[at] = static_cast<float>(dc * f);
    }
  }
  write_f32(call.t[5], grad_gates);
  write_f32(call.t[6], grad_c_prev);
}

}  // namespace sy_reference
