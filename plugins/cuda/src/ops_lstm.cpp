// LSTM_CELL (51) and LSTM_CELL_BACKWARD (52): shape checks here, one elementwise kernel.
// LSTM_SEQUENCE (56) in f32: one product for every step's input projection, then per step one
// product of the state with W_hh^T and one cell kernel (sy_lstm_step), all on the call's stream.
#include <string>

#include "geometry.h"
#include "ops.h"

namespace sy_cuda {
namespace {

bool is_matrix(const sy_tensor_desc& t, int64_t rows, int64_t columns) {
  return t.rank == 2 && t.shape[0] == rows && t.shape[1] == columns;
}

}  // namespace

Status run_lstm_cell(const OpContext& ctx) {
  const bool backward = ctx.call.op == SY_OP_LSTM_CELL_BACKWARD;
  const uint32_t inputs = backward ? 5 : 2, outputs = backward ? 2 : 3;
  SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, inputs, outputs));
  // The [B, 4H] tensor that fixes B and H: gates forward, act backward.
  const sy_tensor_desc& wide = ctx.in(backward ? 2 : 0);
  if (wide.rank != 2 || wide.shape[1] % 4 != 0) {
    return invalid_argument(std::string(ctx.name) + ": " + (backward ? "act " : "gates ") +
                            describe(wide) + " must be [B, 4H] (the gates i, f, g, o)");
  }
  const int64_t batch = wide.shape[0], hidden = wide.shape[1] / 4;
  SyLstmCellArgs a{};
  a.batch = batch;
  a.hidden = hidden;
  a.backward = backward ? 1 : 0;
  for (uint32_t k = 0; k < inputs + outputs; ++k) {
    const bool is_output = k >= inputs;
    const sy_tensor_desc& t = is_output ? ctx.out(k - inputs) : ctx.in(k);
    const bool gate_shaped = backward ? (k == 2 || k == 5) : (k == 0 || k == 4);
    if (t.dtype != wide.dtype ||
        (t.dtype != SY_DTYPE_F32 && t.dtype != SY_DTYPE_F16 && t.dtype != SY_DTYPE_BF16)) {
      return invalid_argument(std::string(ctx.name) + ": every tensor must have one float dtype; " +
                              (is_output ? "output " : "input ") +
                              std::to_string(is_output ? k - inputs : k) + " is " + describe(t) +
                              ", " + (backward ? "act" : "gates") + " is " + describe(wide));
    }
    if (!is_matrix(t, batch, gate_shaped ? 4 * hidden : hidden)) {
      return invalid_argument(std::string(ctx.name) + ": " + (is_output ? "output " : "input ") +
                              std::to_string(is_output ? k - inputs : k) + " " + describe(t) +
                              " must be [" + std::to_string(batch) + ", " +
                              std::to_string(gate_shaped ? 4 * hidden : hidden) + "] for " +
                              (backward ? "act " : "gates ") + describe(wide));
    }
    (is_output ? a.out[k - inputs] : a.in[k]) = tensor_arg(ctx.address(t), t);
  }
  if (batch * hidden == 0) return ok_status();
  return ctx.launch(Kernel::sy_lstm_cell, ctx.linear(batch * hidden), a);
}

Status run_lstm_sequence(const OpContext& ctx) {
  const sy_rnn_params& p = ctx.call.params.rnn;
  if (p.has_bias > 1 || p.reverse > 1 || p.hidden_size < 1) {
    return invalid_argument(std::string(ctx.name) + ": params.rnn needs hidden_size >= 1 and " +
                            "reverse and has_bias 0 or 1; got " + std::to_string(p.hidden_size) +
                            ", " + std::to_string(p.reverse) + ", " + std::to_string(p.has_bias));
  }
  SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, p.has_bias ? 7 : 5, 3));
  const sy_tensor_desc& x = ctx.in(0);
  if (x.rank != 3 || x.shape[0] < 1 || x.shape[1] < 1) {
    return invalid_argument(std::string(ctx.name) + ": x " + describe(x) +
                            " must be [T, B, in] with T and B at least 1");
  }
  const int64_t T = x.shape[0], B = x.shape[1], in = x.shape[2], H = p.hidden_size;
  std::vector<const sy_tensor_desc*> all;
  for (uint32_t k = 0; k < ctx.call.num_inputs; ++k) all.push_back(&ctx.in(k));
  for (uint32_t k = 0; k < 3; ++k) all.push_back(&ctx.out(k));
  for (const sy_tensor_desc* t : all) {
    if (t->dtype != SY_DTYPE_F32) {
      return invalid_argument(std::string(ctx.name) + ": the cuda plugin runs it in f32 only; " +
                              describe(*t) + " (supports_op says 0 for f16 and bf16)");
    }
  }
  SY_CUDA_RETURN_IF_ERROR(expect_shape(ctx, ctx.in(1), "h0", {B, H}));
  SY_CUDA_RETURN_IF_ERROR(expect_shape(ctx, ctx.in(2), "c0", {B, H}));
  SY_CUDA_RETURN_IF_ERROR(expect_shape(ctx, ctx.in(3), "w_ih", {4 * H, in}));
  SY_CUDA_RETURN_IF_ERROR(expect_shape(ctx, ctx.in(4), "w_hh", {4 * H, H}));
  if (p.has_bias) {
    SY_CUDA_RETURN_IF_ERROR(expect_shape(ctx, ctx.in(5), "b_ih", {4 * H}));
    SY_CUDA_RETURN_IF_ERROR(expect_shape(ctx, ctx.in(6), "b_hh", {4 * H}));
  }
  SY_CUDA_RETURN_IF_ERROR(expect_shape(ctx, ctx.out(0), "y", {T, B, H}));
  SY_CUDA_RETURN_IF_ERROR(expect_shape(ctx, ctx.out(1), "h_n", {B, H}));
  SY_CUDA_RETURN_IF_ERROR(expect_shape(ctx, ctx.out(2), "c_n", {B, H}));

  // Scratch: gx [T, B, 4H], gates [B, 4H], h and c [B, H], all f32.
  const uint64_t gx_bytes = static_cast<uint64_t>(T * B * 4 * H) * sizeof(float);
  const uint64_t gates_bytes = static_cast<uint64_t>(B * 4 * H) * sizeof(float);
  const uint64_t state_bytes = static_cast<uint64_t>(B * H) * sizeof(float);
  CudaBuffer* scratch = nullptr;
  SY_CUDA_RETURN_IF_ERROR(ctx.scratch(gx_bytes + gates_bytes + 2 * state_bytes, &scratch));
  const auto region = [&](uint64_t offset_bytes, std::initializer_list<int64_t> shape) {
    return dense_desc(reinterpret_cast<sy_buffer>(scratch), offset_bytes, SY_DTYPE_F32, shape);
  };
  const sy_tensor_desc gx = region(0, {T, B, 4 * H});
  const sy_tensor_desc gates = region(gx_bytes, {B, 4 * H});
  const sy_tensor_desc h = region(gx_bytes + gates_bytes, {B, H});
  const sy_tensor_desc c = region(gx_bytes + gates_bytes + state_bytes, {B, H});
  constexpr const char* kProduct = "LSTM_SEQUENCE (MATMUL)";
  Status status = run_product(ctx, x, ctx.in(3), gx, true, kProduct);
  if (status.ok()) status = enqueue_copy(ctx, h, ctx.address(h), ctx.in(1), ctx.address(ctx.in(1)));
  if (status.ok()) status = enqueue_copy(ctx, c, ctx.address(c), ctx.in(2), ctx.address(ctx.in(2)));
  SyLstmStepArgs a{};
  a.y = tensor_arg(ctx.address(ctx.out(0)), ctx.out(0));
  if (p.has_bias) {
    a.b_ih = tensor_arg(ctx.address(ctx.in(5)), ctx.in(5));
    a.b_hh = tensor_arg(ctx.address(ctx.in(6)), ctx.in(6));
    a.has_bias = 1;
  }
  a.gates = ctx.address(gates);
  a.h = ctx.address(h);
  a.c = ctx.address(c);
  a.batch = B;
  a.hidden = H;
  for (int64_t t = 0; t < T && status.ok(); ++t) {
    a.position = p.reverse ? T - 1 - t : t;
    a.gx = ctx.address(gx) + static_cast<uint64_t>(a.position * B * 4 * H) * sizeof(float);
    status = run_product(ctx, h, ctx.in(4), gates, true, kProduct);
    if (status.ok()) status = ctx.launch(Kernel::sy_lstm_step, ctx.linear(B * H), a);
  }
  if (status.ok())
    status = enqueue_copy(ctx, ctx.out(1), ctx.address(ctx.out(1)), h, ctx.address(h));
  if (status.ok())
    status = enqueue_copy(ctx, ctx.out(2), ctx.address(ctx.out(2)), c, ctx.address(c));
  ctx.release(scratch);
  return status;
}

}  // namespace sy_cuda
