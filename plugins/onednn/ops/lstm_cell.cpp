// LSTM_CELL and LSTM_CELL_BACKWARD (docs/ops.md section 16).
//
// Plain loops: oneDNN's LSTM primitive runs whole sequences including the matrix products, while
// this op is the pointwise part of one step. One pass over the [B, H] grid, split across OpenMP
// threads by element; each element reads its four gate columns (j, H + j, 2H + j, 3H + j) at
// their own strides, computes in f32 and rounds each output once.
#include <cmath>

#include "ops/ops.h"
#include "ops/strided_loop.h"

namespace sy_onednn {
namespace {

// A rank-2 view addressed by (row, column) through its byte strides.
template <typename T>
struct Matrix {
  char* data;
  int64_t row_bytes;
  int64_t column_bytes;

  explicit Matrix(const TensorView& view)
      : data(view.data),
        row_bytes(view.strides[0] * static_cast<int64_t>(sizeof(T))),
        column_bytes(view.strides[1] * static_cast<int64_t>(sizeof(T))) {}
  T& operator()(int64_t r, int64_t c) const {
    return *reinterpret_cast<T*>(data + r * row_bytes + c * column_bytes);
  }
};

inline float sigmoid(float v) {
  return 1.0f / (1.0f + std::exp(-v));
}

struct CellShape {
  int64_t batch = 0;   // B
  int64_t hidden = 0;  // H
};

// B and H from the [B, 4H] tensor `gates` (LSTM_CELL's gates, or the backward's act).
CellShape cell_shape(const OpContext& ctx, const TensorView& gates, const char* role) {
  ctx.require_float(gates, role);
  if (gates.rank != 2 || gates.shape[1] % 4 != 0) {
    ctx.fail_shape(cat(role, " has shape ", shape_string(gates),
                       ", expected [B, 4H] (the gates i, f, g, o, each H wide)"));
  }
  return CellShape{gates.shape[0], gates.shape[1] / 4};
}

// `view` must have `gates`' dtype and shape [B, H] (or [B, 4H] when `gate_shaped`).
void require_cell_tensor(const OpContext& ctx, const CellShape& shape, const TensorView& gates,
                         const char* gates_role, const TensorView& view, const char* role,
                         bool gate_shaped) {
  ctx.require_same_dtype(gates, gates_role, view, role);
  const int64_t expected[2] = {shape.batch, gate_shaped ? 4 * shape.hidden : shape.hidden};
  if (view.rank != 2 || view.shape[0] != expected[0] || view.shape[1] != expected[1]) {
    ctx.fail_shape(cat(role, " has shape ", shape_string(view), ", expected ",
                       shape_string(expected, 2), " (B = ", shape.batch, ", H = ", shape.hidden,
                       " from ", gates_role, " ", shape_string(gates), ")"));
  }
}

// Calls body(r, j) for every element of the [B, H] grid, split across `threads` threads.
template <typename Body>
void for_each_cell(const CellShape& shape, int threads, const Body& body) {
  const int64_t hidden = shape.hidden;
  parallel_ranges(shape.batch * hidden, threads, [&](int64_t first, int64_t last) {
    int64_t r = first / hidden;
    int64_t j = first % hidden;
    for (int64_t k = first; k < last; ++k) {
      body(r, j);
      if (++j == hidden) {
        j = 0;
        ++r;
      }
    }
  });
}

template <typename T>
void cell_forward(const OpContext& ctx, const CellShape& shape) {
  const Matrix<T> z(ctx.in[0]), c_prev(ctx.in[1]), h_out(ctx.out[0]), c_out(ctx.out[1]),
      act(ctx.out[2]);
  const int64_t hidden = shape.hidden;
  const int threads = ctx.threads_for(shape.batch * hidden, kMinTranscendentalElements);
  for_each_cell(shape, threads, [&](int64_t r, int64_t j) {
    const float i = sigmoid(load_f32(z(r, j)));
    const float f = sigmoid(load_f32(z(r, hidden + j)));
    const float g = std::tanh(load_f32(z(r, 2 * hidden + j)));
    const float o = sigmoid(load_f32(z(r, 3 * hidden + j)));
    const float c = f * load_f32(c_prev(r, j)) + i * g;
    c_out(r, j) = store_f32<T>(c);
    h_out(r, j) = store_f32<T>(o * std::tanh(c));
    act(r, j) = store_f32<T>(i);
    act(r, hidden + j) = store_f32<T>(f);
    act(r, 2 * hidden + j) = store_f32<T>(g);
    act(r, 3 * hidden + j) = store_f32<T>(o);
  });
}

template <typename T>
void cell_backward(const OpContext& ctx, const CellShape& shape) {
  const Matrix<T> grad_h(ctx.in[0]), grad_c(ctx.in[1]), act(ctx.in[2]), c_prev(ctx.in[3]),
      c(ctx.in[4]), grad_gates(ctx.out[0]), grad_c_prev(ctx.out[1]);
  const int64_t hidden = shape.hidden;
  const int threads = ctx.threads_for(shape.batch * hidden, kMinTranscendentalElements);
  for_each_cell(shape, threads, [&](int64_t r, int64_t j) {
    const float i = load_f32(act(r, j));
    const float f = load_f32(act(r, hidden + j));
    const float g = load_f32(act(r, 2 * hidden + j));
    const float o = load_f32(act(r, 3 * hidden + j));
    const float t = std::tanh(load_f32(c(r, j)));
    const float dh = load_f32(grad_h(r, j));
    const float dc = load_f32(grad_c(r, j)) + dh * o * (1.0f - t * t);
    grad_gates(r, j) = store_f32<T>(dc * g * i * (1.0f - i));
    grad_gates(r, hidden + j) = store_f32<T>(dc * load_f32(c_prev(r, j)) * f * (1.0f - f));
    grad_gates(r, 2 * hidden + j) = store_f32<T>(dc * i * (1.0f - g * g));
    grad_gates(r, 3 * hidden + j) = store_f32<T>(dh * t * o * (1.0f - o));
    grad_c_prev(r, j) = store_f32<T>(dc * f);
  });
}

}  // namespace

void run_lstm_cell(OpContext& ctx) {
  ctx.require_counts(2, 3);
  const TensorView& gates = ctx.in[0];
  const CellShape shape = cell_shape(ctx, gates, "gates");
  require_cell_tensor(ctx, shape, gates, "gates", ctx.in[1], "c_prev", false);
  require_cell_tensor(ctx, shape, gates, "gates", ctx.out[0], "h", false);
  require_cell_tensor(ctx, shape, gates, "gates", ctx.out[1], "c", false);
  require_cell_tensor(ctx, shape, gates, "gates", ctx.out[2], "act", true);
  if (shape.batch == 0 || shape.hidden == 0) return;
  visit_float_dtype(gates.dtype,
                    [&](auto type_tag) { cell_forward<decltype(type_tag)>(ctx, shape); });
}

void run_lstm_cell_backward(OpContext& ctx) {
  ctx.require_counts(5, 2);
  const TensorView& act = ctx.in[2];
  const CellShape shape = cell_shape(ctx, act, "act");
  require_cell_tensor(ctx, shape, act, "act", ctx.in[0], "grad_h", false);
  require_cell_tensor(ctx, shape, act, "act", ctx.in[1], "grad_c", false);
  require_cell_tensor(ctx, shape, act, "act", ctx.in[3], "c_prev", false);
  require_cell_tensor(ctx, shape, act, "act", ctx.in[4], "c", false);
  require_cell_tensor(ctx, shape, act, "act", ctx.out[0], "grad_gates", true);
  require_cell_tensor(ctx, shape, act, "act", ctx.out[1], "grad_c_prev", false);
  if (shape.batch == 0 || shape.hidden == 0) return;
  visit_float_dtype(act.dtype,
                    [&](auto type_tag) { cell_backward<decltype(type_tag)>(ctx, shape); });
}

}  // namespace sy_onednn
