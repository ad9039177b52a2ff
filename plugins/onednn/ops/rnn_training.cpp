// The training half of LSTM_SEQUENCE and GRU_SEQUENCE (docs/ops.md section 17): the forwards that
// also write ws (each step's activated gates, and the LSTM's cell state or the GRU's h W_hn^T +
// b_hn) and LSTM_SEQUENCE_BACKWARD and GRU_SEQUENCE_BACKWARD, in f32 (16-bit calls come through
// run_through_f32). x, ws and the gate gradients are used in place whatever the order of their
// rows (t, b): the core lays ws and the gate gradients out like x, batch-major for a batch_first
// layer, so that x is never copied and every step's input projection is still one product.
//
// oneDNN 2.6's lstm_backward and lbr_gru_backward keep their own opaque workspace, which would tie
// the ops to one primitive and its layout; here the products are oneDNN's sgemm and the pointwise
// parts our own vectorised loops (ops/fast_math.h), in the layout the reference and the other
// backends share (the GRU the same way, with its input and recurrent projections kept apart):
// - forward: every step's input projection as one product into ws's gate columns, then per step
//   one product h_prev W_hh^T added into them and the cell over the batch rows;
// - backward: per step, last to first, the cell's backward over the rows (writing grad_gates and
//   carrying dc), then dh = grad_gates W_hh; grad_w_hh is two products over every step at the end
//   (grad_gates^T times y shifted by one step, and times h0 for the first step processed).
// What the composed path ran as some ten ops a step (two products, adds, LSTM_CELL, copies of
// slices) is here two products and one threaded loop a step.
#include <algorithm>
#include <cstring>
#include <vector>

#include "dnnl_util.h"
#include "ops/fast_math.h"
#include "ops/ops.h"
#include "ops/rnn_training.h"
#include "ops/strided_loop.h"
#include "ops/vector_clones.h"

namespace sy_onednn {
namespace {

// Cells per thread worth a parallel region (as LSTM_CELL: some 10 ns a cell).
constexpr int64_t kMinCells = 4096;

// Threads for a product of m x k x n.
void threads_for_product(const OpContext& ctx, int64_t m, int64_t n, int64_t k) {
  ctx.use_threads(ctx.threads_for(2 * m * n * k, kMinFlops));
}

// A [rows, cols] f32 view over `data` with row stride `ld`.
TensorView matrix(float* data, int64_t rows, int64_t cols, int64_t ld) {
  const int64_t shape[2] = {rows, cols};
  TensorView view = make_dense_view(data, SY_DTYPE_F32, 2, shape);
  view.strides[0] = ld;
  return view;
}

// A [T, B, W] f32 tensor whose rows (t, b) are dense, addressed through its two outer strides.
struct Rows {
  float* base = nullptr;
  int64_t st = 0, sb = 0;  // element strides of t and b
  float* at(int64_t t, int64_t b) const { return base + t * st + b * sb; }
};

// Whether a [T, B, W] view can be used as Rows by sgemm: f32, a dense last axis, and rows that do
// not overlap (a broadcast input is copied).
bool usable_rows(const TensorView& v) {
  if (v.dtype != SY_DTYPE_F32 || (v.shape[2] > 1 && v.strides[2] != 1)) return false;
  for (int d = 0; d < 2; ++d) {
    if (v.shape[d] > 1 && v.strides[d] < v.shape[2]) return false;
  }
  return true;
}

Rows rows_of(const TensorView& v) {
  return {v.as<float>(), v.strides[0], v.strides[1]};
}

// An input's rows in place where usable, else a dense copy's.
Rows input_rows(OpContext& ctx, const TensorView& in) {
  return rows_of(usable_rows(in) ? in : dense_copy(ctx, in, SY_DTYPE_F32));
}

// An output in place where its rows are usable, else a dense scratch tensor of its shape (copied
// back by write_back).
TensorView rows_output(OpContext& ctx, const TensorView& out) {
  if (usable_rows(out)) return out;
  return ctx.scratch_view(SY_DTYPE_F32, out.rank, out.shape);
}

// `out` itself where it is dense f32, else a dense scratch tensor of its shape (copied back by
// write_back).
TensorView dense_output(OpContext& ctx, const TensorView& out) {
  if (out.is_contiguous() && out.dtype == SY_DTYPE_F32) return out;
  return ctx.scratch_view(SY_DTYPE_F32, out.rank, out.shape);
}

void write_back(const OpContext& ctx, const TensorView& work, const TensorView& out) {
  if (work.data != out.data) copy_view(work, out, ctx.threads_for(out.numel()));
}

// One row of one step: the pre-activations a (4H, i f g o, without the biases) become the
// activated gates in place; c = f c_prev + i g and h = o tanh(c). c is the row's fifth block (ws),
// c_prev the last step's (or c0), h a row of y: no two overlap, and __restrict__ says so. Without
// it GCC left the c and h loop scalar (it would not check the pointers against each other): one
// text-RNN step of 128 rows x 256 cells took 284 us on one Zen 4 core, 107 us with it.
SY_VECTOR_CLONES void forward_row(float* __restrict__ a, const float* __restrict__ bias,
                                  const float* __restrict__ c_prev, float* __restrict__ c,
                                  float* __restrict__ h, int64_t n) {
  for (int64_t j = 0; j < 2 * n; ++j) a[j] = sigmoid_approx(a[j] + bias[j]);
  for (int64_t j = 2 * n; j < 3 * n; ++j) a[j] = tanh_approx(a[j] + bias[j]);
  for (int64_t j = 3 * n; j < 4 * n; ++j) a[j] = sigmoid_approx(a[j] + bias[j]);
  for (int64_t j = 0; j < n; ++j) {
    c[j] = a[n + j] * c_prev[j] + a[j] * a[2 * n + j];
    h[j] = a[3 * n + j] * tanh_approx(c[j]);
  }
}

// The cell's backward for one row (LSTM_CELL_BACKWARD's formulas): act holds i f g o and c,
// dh the gradient reaching h from the next step's product (grad_y added here), dc the gradient
// reaching c, replaced by the one reaching c_prev. No two of the pointers overlap (dg is the op's
// output, dh and dc are scratch; docs/ops.md: outputs do not alias inputs): with __restrict__ GCC
// vectorises the loop, which it left scalar rather than check six pointers against each other.
SY_VECTOR_CLONES void backward_row(const float* __restrict__ act, const float* __restrict__ c_prev,
                                   const float* __restrict__ grad_y, const float* __restrict__ dh,
                                   float* __restrict__ dc, float* __restrict__ dg, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const float i = act[j], f = act[n + j], g = act[2 * n + j], o = act[3 * n + j];
    const float th = tanh_approx(act[4 * n + j]);
    const float dh_total = grad_y[j] + dh[j];
    const float d = dc[j] + dh_total * o * (1.0f - th * th);
    dg[j] = d * g * i * (1.0f - i);
    dg[n + j] = d * c_prev[j] * f * (1.0f - f);
    dg[2 * n + j] = d * i * (1.0f - g * g);
    dg[3 * n + j] = dh_total * th * o * (1.0f - o);
    dc[j] = d * f;
  }
}

// Rows [0, batch) of a step, split across threads when the step has cells enough.
template <typename Body>
void over_rows(const OpContext& ctx, int64_t batch, int64_t hidden, const Body& body) {
  const int threads = ctx.threads_for(batch * hidden, kMinCells);
  ctx.use_threads(threads);
  parallel_ranges(batch, threads, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) body(r);
  });
}

int64_t position(int64_t step, int64_t steps, bool reverse) {
  return reverse ? steps - 1 - step : step;
}

// out[t, b, 0:n] = x[t, b] w^T (w [n, k] dense) for every row: one product where x's and out's rows
// run in one order at uniform strides (time-major, or batch-major as a batch_first layer's), else
// one per step.
void project_rows(const OpContext& ctx, const Rows& x, const Rows& out, int64_t steps,
                  int64_t batch, int64_t k, int64_t n, const float* w) {
  threads_for_product(ctx, steps * batch, n, k);
  if (x.st == batch * x.sb && out.st == batch * out.sb) {
    sgemm(ctx, 'N', 'T', steps * batch, n, k, 1.0f, x.base, x.sb, w, k, 0.0f, out.base, out.sb);
  } else if (x.sb == steps * x.st && out.sb == steps * out.st) {
    sgemm(ctx, 'N', 'T', steps * batch, n, k, 1.0f, x.base, x.st, w, k, 0.0f, out.base, out.st);
  } else {
    for (int64_t t = 0; t < steps; ++t) {
      sgemm(ctx, 'N', 'T', batch, n, k, 1.0f, x.at(t, 0), x.sb, w, k, 0.0f, out.at(t, 0), out.sb);
    }
  }
}

// grad_w [G*H, H] = sum over steps of d[t]^T h_prev[t] (y dense [T, B, H]): h_prev is y at the
// position processed before t, and h0 for the first one processed. Time-major d takes one product
// over T - 1 steps and one for h0; other layouts one product per step.
void recurrent_weight_grad(OpContext& ctx, const Rows& d, const float* y, const float* h0,
                           int64_t steps, int64_t batch, int64_t h, int64_t gates, bool reverse,
                           const TensorView& out) {
  const TensorView grad_w = dense_output(ctx, out);
  float* gw = grad_w.as<float>();
  const int64_t first = position(0, steps, reverse);
  if (d.st == batch * d.sb) {
    const int64_t rows = (steps - 1) * batch;
    threads_for_product(ctx, gates, h, std::max<int64_t>(rows, batch));
    if (rows > 0) {
      const float* later = d.at(reverse ? 0 : 1, 0);
      const float* earlier_h = reverse ? y + batch * h : y;
      sgemm(ctx, 'T', 'N', gates, h, rows, 1.0f, later, d.sb, earlier_h, h, 0.0f, gw, h);
    }
    sgemm(ctx, 'T', 'N', gates, h, batch, 1.0f, d.at(first, 0), d.sb, h0, h, rows > 0 ? 1.0f : 0.0f,
          gw, h);
  } else {
    threads_for_product(ctx, gates, h, batch);
    for (int64_t step = 0; step < steps; ++step) {
      const int64_t t = position(step, steps, reverse);
      const float* h_prev = step == 0 ? h0 : y + position(step - 1, steps, reverse) * batch * h;
      sgemm(ctx, 'T', 'N', gates, h, batch, 1.0f, d.at(t, 0), d.sb, h_prev, h,
            step == 0 ? 0.0f : 1.0f, gw, h);
    }
  }
  write_back(ctx, grad_w, out);
}

// b_ih + b_hh where `both`, else b_ih alone (inputs `first` and `first` + 1), or zeros without
// biases: [width] floats.
float* bias_sum(OpContext& ctx, int first, int64_t width, bool both) {
  auto* bias = static_cast<float*>(ctx.scratch(static_cast<size_t>(width) * sizeof(float)));
  std::fill(bias, bias + width, 0.0f);
  if (ctx.params.rnn.has_bias == 0) return bias;
  for (int k = first; k <= first + (both ? 1 : 0); ++k) {
    const TensorView b = dense_copy(ctx, ctx.in[k], SY_DTYPE_F32);
    for (int64_t j = 0; j < width; ++j) bias[j] += b.as<float>()[j];
  }
  return bias;
}

// One GRU row of one step: u the input part of the pre-activations (x W_ih^T, 3H, biases not
// added), v the recurrent part (h_prev W_hh^T); writes ws's r, z, n, v_n + b_hn and h. u and v are
// scratch, ws and h outputs, h_prev a row of y or h0: none overlaps another (__restrict__, as
// forward_row).
SY_VECTOR_CLONES void gru_row(const float* __restrict__ u, const float* __restrict__ v,
                              const float* __restrict__ b_ih, const float* __restrict__ b_hh,
                              const float* __restrict__ h_prev, float* __restrict__ ws,
                              float* __restrict__ h, int64_t n) {
  for (int64_t j = 0; j < 2 * n; ++j) ws[j] = sigmoid_approx(u[j] + b_ih[j] + v[j] + b_hh[j]);
  for (int64_t j = 0; j < n; ++j) {
    const float hn = v[2 * n + j] + b_hh[2 * n + j];
    const float cand = tanh_approx(u[2 * n + j] + b_ih[2 * n + j] + ws[j] * hn);
    ws[2 * n + j] = cand;
    ws[3 * n + j] = hn;
    h[j] = cand + ws[n + j] * (h_prev[j] - cand);
  }
}

// The GRU cell's backward for one row: the gradients of u (gx) and v (gh), and the part of the
// gradient reaching h_prev directly (carried = dh_total z; the rest comes through gh W_hh). No
// two pointers overlap (as backward_row's).
SY_VECTOR_CLONES void gru_backward_row(const float* __restrict__ ws,
                                       const float* __restrict__ h_prev,
                                       const float* __restrict__ grad_y,
                                       const float* __restrict__ dh, float* __restrict__ gx,
                                       float* __restrict__ gh, float* __restrict__ carried,
                                       int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const float r = ws[j], z = ws[n + j], cand = ws[2 * n + j], hn = ws[3 * n + j];
    const float dh_total = grad_y[j] + dh[j];
    const float d_n = dh_total * (1.0f - z) * (1.0f - cand * cand);
    const float d_r = d_n * hn * r * (1.0f - r);
    const float d_z = dh_total * (h_prev[j] - cand) * z * (1.0f - z);
    gx[j] = d_r;
    gh[j] = d_r;
    gx[n + j] = d_z;
    gh[n + j] = d_z;
    gx[2 * n + j] = d_n;
    gh[2 * n + j] = d_n * r;
    carried[j] = dh_total * z;
  }
}

}  // namespace

void lstm_forward_with_ws_f32(OpContext& ctx, int64_t steps, int64_t batch, int64_t input,
                              int64_t hidden) {
  const int64_t h = hidden, g4 = 4 * hidden, w5 = 5 * hidden;
  const int64_t ws_shape[3] = {steps, batch, w5};
  ctx.require_same_dtype(ctx.in[0], "x", ctx.out[3], "ws");
  ctx.require_shape(ctx.out[3], "ws", ws_shape, 3);
  const bool reverse = ctx.params.rnn.reverse != 0;
  const Rows x = input_rows(ctx, ctx.in[0]);
  const TensorView h0 = dense_copy(ctx, ctx.in[1], SY_DTYPE_F32);
  const TensorView c0 = dense_copy(ctx, ctx.in[2], SY_DTYPE_F32);
  const TensorView w_ih = dense_copy(ctx, ctx.in[3], SY_DTYPE_F32);
  const TensorView w_hh = dense_copy(ctx, ctx.in[4], SY_DTYPE_F32);
  const float* bias = bias_sum(ctx, 5, g4, true);
  const TensorView y = dense_output(ctx, ctx.out[0]);
  const TensorView ws_view = rows_output(ctx, ctx.out[3]);
  const Rows ws = rows_of(ws_view);
  float* yp = y.as<float>();
  // Every step's x W_ih^T into ws's gate columns.
  project_rows(ctx, x, ws, steps, batch, input, g4, w_ih.as<float>());
  for (int64_t step = 0; step < steps; ++step) {
    const int64_t t = position(step, steps, reverse);
    const int64_t previous = reverse ? t + 1 : t - 1;
    const float* h_prev = step == 0 ? h0.as<float>() : yp + previous * batch * h;
    threads_for_product(ctx, batch, g4, h);
    sgemm(ctx, 'N', 'T', batch, g4, h, 1.0f, h_prev, h, w_hh.as<float>(), h, 1.0f, ws.at(t, 0),
          ws.sb);
    over_rows(ctx, batch, h, [&](int64_t r) {
      const float* c_prev = step == 0 ? c0.as<float>() + r * h : ws.at(previous, r) + g4;
      float* row = ws.at(t, r);
      forward_row(row, bias, c_prev, row + g4, yp + (t * batch + r) * h, h);
    });
  }
  const int64_t last = position(steps - 1, steps, reverse);
  copy_view(matrix(yp + last * batch * h, batch, h, h), ctx.out[1], 1);
  copy_view(matrix(ws.at(last, 0) + g4, batch, h, ws.sb), ctx.out[2], 1);
  write_back(ctx, y, ctx.out[0]);
  write_back(ctx, ws_view, ctx.out[3]);
}

namespace {

struct BackwardShape {
  int64_t steps = 0, batch = 0, hidden = 0;
};

// A tensor of a backward call and the shape it must have.
struct Expected {
  const TensorView* view;
  const char* role;
  const int64_t* shape;
  int rank;
};

// The backward call's tensors checked against y's T, B and H: LSTM (h0, c0, w_hh, y, ws, grad_y,
// grad_c_n [, grad_h_n]) -> grad_gates, grad_h0, grad_c0 [, grad_w_hh]; GRU (h0, w_hh, y, ws,
// grad_y [, grad_h_n]) -> grad_gx, grad_gh, grad_h0 [, grad_w_hh].
BackwardShape checked_backward(OpContext& ctx) {
  const bool lstm = ctx.op == SY_OP_LSTM_SEQUENCE_BACKWARD;
  const int inputs = lstm ? 7 : 5;
  if ((ctx.num_inputs != inputs && ctx.num_inputs != inputs + 1) ||
      (ctx.num_outputs != 3 && ctx.num_outputs != 4)) {
    ctx.fail_shape(cat("takes ",
                       lstm ? "(h0, c0, w_hh, y, ws, grad_y, grad_c_n [, grad_h_n]) and gives "
                              "(grad_gates, grad_h0, grad_c0 [, grad_w_hh])"
                            : "(h0, w_hh, y, ws, grad_y [, grad_h_n]) and gives (grad_gx, "
                              "grad_gh, grad_h0 [, grad_w_hh])",
                       "; got ", ctx.num_inputs, " inputs and ", ctx.num_outputs, " outputs"));
  }
  const sy_rnn_params& p = ctx.params.rnn;
  if (p.reverse > 1) ctx.fail_shape(cat("params.rnn.reverse must be 0 or 1, got ", p.reverse));
  const TensorView& y = ctx.in[lstm ? 3 : 2];
  ctx.require_float(y, "y");
  if (y.rank != 3) ctx.fail_shape(cat("y has shape ", shape_string(y), ", expected [T, B, H]"));
  BackwardShape s{y.shape[0], y.shape[1], y.shape[2]};
  if (s.steps < 1 || s.batch < 1 || s.hidden < 1 || s.hidden != p.hidden_size) {
    ctx.fail_shape(
        cat("needs at least one step, one sequence and y [T, B, H] with H = "
            "hidden_size; got y ",
            shape_string(y), " and hidden_size ", p.hidden_size));
  }
  const int64_t g = (lstm ? 4 : 3) * s.hidden;
  const int64_t state[2] = {s.batch, s.hidden};
  const int64_t w_hh[2] = {g, s.hidden};
  const int64_t ws[3] = {s.steps, s.batch, g + s.hidden};
  const int64_t sequence[3] = {s.steps, s.batch, s.hidden};
  const int64_t gates[3] = {s.steps, s.batch, g};
  std::vector<Expected> expected;
  if (lstm) {
    expected = {{&ctx.in[0], "h0", state, 2},        {&ctx.in[1], "c0", state, 2},
                {&ctx.in[2], "w_hh", w_hh, 2},       {&ctx.in[4], "ws", ws, 3},
                {&ctx.in[5], "grad_y", sequence, 3}, {&ctx.in[6], "grad_c_n", state, 2},
                {&ctx.in[7], "grad_h_n", state, 2},  {&ctx.out[0], "grad_gates", gates, 3},
                {&ctx.out[1], "grad_h0", state, 2},  {&ctx.out[2], "grad_c0", state, 2}};
  } else {
    expected = {{&ctx.in[0], "h0", state, 2},       {&ctx.in[1], "w_hh", w_hh, 2},
                {&ctx.in[3], "ws", ws, 3},          {&ctx.in[4], "grad_y", sequence, 3},
                {&ctx.in[5], "grad_h_n", state, 2}, {&ctx.out[0], "grad_gx", gates, 3},
                {&ctx.out[1], "grad_gh", gates, 3}, {&ctx.out[2], "grad_h0", state, 2}};
  }
  expected.push_back({&ctx.out[3], "grad_w_hh", w_hh, 2});
  for (const Expected& e : expected) {
    if (e.view == &ctx.in[inputs] && ctx.num_inputs == inputs) continue;  // no grad_h_n
    if (e.view == &ctx.out[3] && ctx.num_outputs == 3) continue;
    ctx.require_same_dtype(y, "y", *e.view, e.role);
    ctx.require_shape(*e.view, e.role, e.shape, e.rank);
  }
  return s;
}

void lstm_backward_f32(OpContext& ctx) {
  const BackwardShape s = checked_backward(ctx);
  const int64_t steps = s.steps, batch = s.batch, h = s.hidden, g4 = 4 * h;
  const bool reverse = ctx.params.rnn.reverse != 0;
  const TensorView h0 = dense_copy(ctx, ctx.in[0], SY_DTYPE_F32);
  const TensorView c0 = dense_copy(ctx, ctx.in[1], SY_DTYPE_F32);
  const TensorView w_hh = dense_copy(ctx, ctx.in[2], SY_DTYPE_F32);
  const TensorView y = dense_copy(ctx, ctx.in[3], SY_DTYPE_F32);
  const Rows ws = input_rows(ctx, ctx.in[4]);
  const TensorView grad_y = dense_copy(ctx, ctx.in[5], SY_DTYPE_F32);
  const auto state_bytes = static_cast<size_t>(batch * h) * sizeof(float);
  auto* dh = static_cast<float*>(ctx.scratch(state_bytes));
  auto* dc = static_cast<float*>(ctx.scratch(state_bytes));
  copy_view(ctx.in[6], matrix(dc, batch, h, h), 1);
  if (ctx.num_inputs == 8) {
    copy_view(ctx.in[7], matrix(dh, batch, h, h), 1);
  } else {
    std::memset(dh, 0, state_bytes);
  }
  const TensorView grad_gates = rows_output(ctx, ctx.out[0]);
  const Rows dg = rows_of(grad_gates);
  for (int64_t step = steps - 1; step >= 0; --step) {
    const int64_t t = position(step, steps, reverse);
    const int64_t previous = reverse ? t + 1 : t - 1;
    over_rows(ctx, batch, h, [&](int64_t r) {
      const float* c_prev = step == 0 ? c0.as<float>() + r * h : ws.at(previous, r) + g4;
      backward_row(ws.at(t, r), c_prev, grad_y.as<float>() + (t * batch + r) * h, dh + r * h,
                   dc + r * h, dg.at(t, r), h);
    });
    // The gradient reaching the previous step's h through this step's product.
    threads_for_product(ctx, batch, h, g4);
    sgemm(ctx, 'N', 'N', batch, h, g4, 1.0f, dg.at(t, 0), dg.sb, w_hh.as<float>(), h, 0.0f, dh, h);
  }
  copy_view(matrix(dh, batch, h, h), ctx.out[1], 1);
  copy_view(matrix(dc, batch, h, h), ctx.out[2], 1);
  if (ctx.num_outputs == 4) {
    recurrent_weight_grad(ctx, dg, y.as<float>(), h0.as<float>(), steps, batch, h, g4, reverse,
                          ctx.out[3]);
  }
  write_back(ctx, grad_gates, ctx.out[0]);
}

}  // namespace

void gru_forward_with_ws_f32(OpContext& ctx, int64_t steps, int64_t batch, int64_t input,
                             int64_t hidden) {
  const int64_t h = hidden, g3 = 3 * hidden, w4 = 4 * hidden;
  const int64_t ws_shape[3] = {steps, batch, w4};
  const auto rows_bytes = static_cast<size_t>(steps * batch * g3) * sizeof(float);
  ctx.require_same_dtype(ctx.in[0], "x", ctx.out[2], "ws");
  ctx.require_shape(ctx.out[2], "ws", ws_shape, 3);
  const bool reverse = ctx.params.rnn.reverse != 0;
  const Rows x = input_rows(ctx, ctx.in[0]);
  const TensorView h0 = dense_copy(ctx, ctx.in[1], SY_DTYPE_F32);
  const TensorView w_ih = dense_copy(ctx, ctx.in[2], SY_DTYPE_F32);
  const TensorView w_hh = dense_copy(ctx, ctx.in[3], SY_DTYPE_F32);
  const float* b_ih = bias_sum(ctx, 4, g3, false);
  const float* b_hh = bias_sum(ctx, 5, g3, false);
  const TensorView y = dense_output(ctx, ctx.out[0]);
  const TensorView ws_view = rows_output(ctx, ctx.out[2]);
  const Rows ws = rows_of(ws_view);
  float* yp = y.as<float>();
  // The input parts of every step's pre-activations, in x's order of rows.
  auto* u_data = static_cast<float*>(ctx.scratch(rows_bytes));
  const bool batch_major = x.sb == steps * x.st && x.st != batch * x.sb;
  const Rows u = batch_major ? Rows{u_data, g3, steps * g3} : Rows{u_data, batch * g3, g3};
  auto* v = static_cast<float*>(ctx.scratch(static_cast<size_t>(batch * g3) * sizeof(float)));
  project_rows(ctx, x, u, steps, batch, input, g3, w_ih.as<float>());
  for (int64_t step = 0; step < steps; ++step) {
    const int64_t t = position(step, steps, reverse);
    const int64_t previous = reverse ? t + 1 : t - 1;
    const float* h_prev = step == 0 ? h0.as<float>() : yp + previous * batch * h;
    threads_for_product(ctx, batch, g3, h);
    sgemm(ctx, 'N', 'T', batch, g3, h, 1.0f, h_prev, h, w_hh.as<float>(), h, 0.0f, v, g3);
    over_rows(ctx, batch, h, [&](int64_t r) {
      gru_row(u.at(t, r), v + r * g3, b_ih, b_hh, h_prev + r * h, ws.at(t, r),
              yp + (t * batch + r) * h, h);
    });
  }
  const int64_t last = position(steps - 1, steps, reverse);
  copy_view(matrix(yp + last * batch * h, batch, h, h), ctx.out[1], 1);
  write_back(ctx, y, ctx.out[0]);
  write_back(ctx, ws_view, ctx.out[2]);
}

namespace {

void gru_backward_f32(OpContext& ctx) {
  const BackwardShape s = checked_backward(ctx);
  const int64_t steps = s.steps, batch = s.batch, h = s.hidden, g3 = 3 * h;
  const bool reverse = ctx.params.rnn.reverse != 0;
  const TensorView h0 = dense_copy(ctx, ctx.in[0], SY_DTYPE_F32);
  const TensorView w_hh = dense_copy(ctx, ctx.in[1], SY_DTYPE_F32);
  const TensorView y = dense_copy(ctx, ctx.in[2], SY_DTYPE_F32);
  const Rows ws = input_rows(ctx, ctx.in[3]);
  const TensorView grad_y = dense_copy(ctx, ctx.in[4], SY_DTYPE_F32);
  const auto state_bytes = static_cast<size_t>(batch * h) * sizeof(float);
  auto* dh = static_cast<float*>(ctx.scratch(state_bytes));
  auto* next = static_cast<float*>(ctx.scratch(state_bytes));
  if (ctx.num_inputs == 6) {
    copy_view(ctx.in[5], matrix(dh, batch, h, h), 1);
  } else {
    std::memset(dh, 0, state_bytes);
  }
  const TensorView grad_gx = rows_output(ctx, ctx.out[0]);
  const TensorView grad_gh = rows_output(ctx, ctx.out[1]);
  const Rows gx = rows_of(grad_gx), gh = rows_of(grad_gh);
  const float* yp = y.as<float>();
  for (int64_t step = steps - 1; step >= 0; --step) {
    const int64_t t = position(step, steps, reverse);
    const int64_t previous = reverse ? t + 1 : t - 1;
    const float* h_prev = step == 0 ? h0.as<float>() : yp + previous * batch * h;
    over_rows(ctx, batch, h, [&](int64_t r) {
      gru_backward_row(ws.at(t, r), h_prev + r * h, grad_y.as<float>() + (t * batch + r) * h,
                       dh + r * h, gx.at(t, r), gh.at(t, r), next + r * h, h);
    });
    // dh for the step before: the carried part plus gh W_hh.
    threads_for_product(ctx, batch, h, g3);
    sgemm(ctx, 'N', 'N', batch, h, g3, 1.0f, gh.at(t, 0), gh.sb, w_hh.as<float>(), h, 1.0f, next,
          h);
    std::swap(dh, next);
  }
  copy_view(matrix(dh, batch, h, h), ctx.out[2], 1);
  if (ctx.num_outputs == 4) {
    recurrent_weight_grad(ctx, gh, yp, h0.as<float>(), steps, batch, h, g3, reverse, ctx.out[3]);
  }
  write_back(ctx, grad_gx, ctx.out[0]);
  write_back(ctx, grad_gh, ctx.out[1]);
}

}  // namespace

void run_rnn_sequence_backward(OpContext& ctx) {
  const bool lstm = ctx.op == SY_OP_LSTM_SEQUENCE_BACKWARD;
  void (*runner)(OpContext&) = lstm ? lstm_backward_f32 : gru_backward_f32;
  const uint32_t dtype = ctx.in[lstm ? 3 : 2].dtype;  // y's
  if (dtype == SY_DTYPE_F32) {
    runner(ctx);
  } else {
    run_through_f32(ctx, runner, dtype);
  }
}

}  // namespace sy_onednn
