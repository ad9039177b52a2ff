// LSTM_CELL (51) and LSTM_CELL_BACKWARD (52): shape checks here, one elementwise kernel.
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

}  // namespace sy_cuda
