// LSTM_CELL and LSTM_CELL_BACKWARD (docs/ops.md section 16).
//
// Plain loops: oneDNN's LSTM primitive runs whole sequences including the matrix products, while
// this op is the pointwise part of one step. Rows of the [B, H] grid are split across OpenMP
// threads; each row's four gate columns (j, H + j, 2H + j, 3H + j) are read through their strides
// into f32 buffers, computed with vectorisable exp/tanh approximations (below) and rounded once
// per output.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ops/fast_math.h"
#include "ops/ops.h"
#include "ops/strided_loop.h"
#include "ops/vector_clones.h"

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

// Cells per thread worth a parallel region: each cell costs some 10 ns (five exponentials and
// the strided loads and stores), so one [64, 256] step already splits.
constexpr int64_t kMinLstmCells = 4096;

// Rows [first, last) of the [B, H] grid in blocks: each row's columns are read into contiguous f32
// buffers, computed with loops GCC vectorises, and written back through the strides.
template <typename Body>
void for_each_row(const CellShape& shape, int threads, int buffers, const Body& body) {
  const int64_t threads_wanted = std::max<int64_t>(1, std::min<int64_t>(threads, shape.batch));
  parallel_ranges(shape.batch, static_cast<int>(threads_wanted), [&](int64_t first, int64_t last) {
    std::vector<float> scratch(static_cast<size_t>(buffers * shape.hidden));
    for (int64_t r = first; r < last; ++r) body(r, scratch.data());
  });
}

// Rows with dense columns (the usual case) take a plain loop that vectorises; the strided one
// reads element by element.
template <typename T>
void load_row(const Matrix<T>& m, int64_t r, int64_t column, int64_t count, float* out) {
  if (m.column_bytes == static_cast<int64_t>(sizeof(T))) {
    const T* row = &m(r, column);
    for (int64_t j = 0; j < count; ++j) out[j] = load_f32(row[j]);
    return;
  }
  for (int64_t j = 0; j < count; ++j) out[j] = load_f32(m(r, column + j));
}

template <typename T>
void store_row(const Matrix<T>& m, int64_t r, int64_t column, int64_t count, const float* in) {
  if (m.column_bytes == static_cast<int64_t>(sizeof(T))) {
    T* row = &m(r, column);
    for (int64_t j = 0; j < count; ++j) row[j] = store_f32<T>(in[j]);
    return;
  }
  for (int64_t j = 0; j < count; ++j) m(r, column + j) = store_f32<T>(in[j]);
}

// One row's arithmetic, on for_each_row's f32 buffers (parts of one allocation that do not
// overlap, which __restrict__ tells GCC: with five or more pointers into one buffer it would not
// check them against each other and left the c and h loops scalar, as rnn_training.cpp's rows
// were). The gates i, f, g, o are activated in place.
SY_VECTOR_CLONES void forward_row(float* __restrict__ gates, const float* __restrict__ cp,
                                  float* __restrict__ c, float* __restrict__ h, int64_t n) {
  for (int64_t j = 0; j < 2 * n; ++j) gates[j] = sigmoid_approx(gates[j]);
  for (int64_t j = 2 * n; j < 3 * n; ++j) gates[j] = tanh_approx(gates[j]);
  for (int64_t j = 3 * n; j < 4 * n; ++j) gates[j] = sigmoid_approx(gates[j]);
  for (int64_t j = 0; j < n; ++j) {
    c[j] = gates[n + j] * cp[j] + gates[j] * gates[2 * n + j];
    h[j] = gates[3 * n + j] * tanh_approx(c[j]);
  }
}

// The backward of one row: a the activated gates, t the cell state c, dh and dc the gradients
// reaching h and c, cp c_prev; writes the gate gradients dz (4 n) and c_prev's dcp.
SY_VECTOR_CLONES void backward_row(const float* __restrict__ a, const float* __restrict__ t,
                                   const float* __restrict__ dh, const float* __restrict__ dc,
                                   const float* __restrict__ cp, float* __restrict__ dz,
                                   float* __restrict__ dcp, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const float i = a[j], f = a[n + j], g = a[2 * n + j], o = a[3 * n + j];
    const float th = tanh_approx(t[j]);
    const float d = dc[j] + dh[j] * o * (1.0f - th * th);
    dz[j] = d * g * i * (1.0f - i);
    dz[n + j] = d * cp[j] * f * (1.0f - f);
    dz[2 * n + j] = d * i * (1.0f - g * g);
    dz[3 * n + j] = dh[j] * th * o * (1.0f - o);
    dcp[j] = d * f;
  }
}

template <typename T>
void cell_forward(const OpContext& ctx, const CellShape& shape) {
  const Matrix<T> z(ctx.in[0]), c_prev(ctx.in[1]), h_out(ctx.out[0]), c_out(ctx.out[1]),
      act(ctx.out[2]);
  const int64_t n = shape.hidden;
  const int threads = ctx.threads_for(shape.batch * n, kMinLstmCells);
  for_each_row(shape, threads, 7, [&](int64_t r, float* buffer) {
    float* gates = buffer;  // i, f, g, o: 4 n
    float* c = buffer + 4 * n;
    float* h = buffer + 5 * n;
    float* cp = buffer + 6 * n;
    load_row(z, r, 0, 4 * n, gates);
    load_row(c_prev, r, 0, n, cp);
    forward_row(gates, cp, c, h, n);
    store_row(act, r, 0, 4 * n, gates);
    store_row(c_out, r, 0, n, c);
    store_row(h_out, r, 0, n, h);
  });
}

template <typename T>
void cell_backward(const OpContext& ctx, const CellShape& shape) {
  const Matrix<T> grad_h(ctx.in[0]), grad_c(ctx.in[1]), act(ctx.in[2]), c_prev(ctx.in[3]),
      c(ctx.in[4]), grad_gates(ctx.out[0]), grad_c_prev(ctx.out[1]);
  const int64_t n = shape.hidden;
  const int threads = ctx.threads_for(shape.batch * n, kMinLstmCells);
  for_each_row(shape, threads, 13, [&](int64_t r, float* buffer) {
    float* a = buffer;           // i, f, g, o: 4 n
    float* dz = buffer + 4 * n;  // the gate gradients: 4 n
    float* dh = buffer + 8 * n;
    float* dc = buffer + 9 * n;
    float* cp = buffer + 10 * n;
    float* t = buffer + 11 * n;
    float* dcp = buffer + 12 * n;
    load_row(act, r, 0, 4 * n, a);
    load_row(grad_h, r, 0, n, dh);
    load_row(grad_c, r, 0, n, dc);
    load_row(c_prev, r, 0, n, cp);
    load_row(c, r, 0, n, t);
    backward_row(a, t, dh, dc, cp, dz, dcp, n);
    store_row(grad_gates, r, 0, 4 * n, dz);
    store_row(grad_c_prev, r, 0, n, dcp);
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
