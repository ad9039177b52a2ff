// LSTM_CELL and LSTM_CELL_BACKWARD (docs/ops.md section 16): one dispatch each, one invocation per
// element of the [B, H] state. LSTM_SEQUENCE and GRU_SEQUENCE (section 17): one MATMUL projects
// every step's input, then per step one MATMUL of the f32 state with W_hh^T and one lstm_step or
// gru_step dispatch (which also write ws where the call asks for it); their backward ops run per
// step, last to first, one lstm_seq_backward or gru_seq_backward dispatch and one MATMUL with
// W_hh, and w_hh's gradient as one MATMUL over every step at the end; 16-bit data goes through f32
// copies. Every
// tensor is bound with its own rank-2 shape and strides (no axis merging), so the shaders find a
// row's four gate columns through the column stride.
#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ops.h"

namespace sy_vk {
namespace {

struct CellShape {
  int64_t batch = 0;   // B
  int64_t hidden = 0;  // H
};

// B and H from the [B, 4H] tensor `gates` (LSTM_CELL's gates, or the backward's act).
Status cell_shape(const OpContext& ctx, const sy_tensor_desc& gates, const char* role,
                  CellShape* shape) {
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, gates.dtype, role));
  if (gates.rank != 2 || gates.shape[1] % 4 != 0) {
    return invalid_argument(std::string(op_name(ctx.call.op)) + ": " + role + " has shape " +
                            shape_text(gates) +
                            ", expected [B, 4H] (the gates i, f, g, o, each H wide)");
  }
  *shape = CellShape{gates.shape[0], gates.shape[1] / 4};
  return ok_status();
}

// `t` must have shape [B, H], or [B, 4H] when `gate_shaped`.
Status check_cell_shape(const OpContext& ctx, const CellShape& shape, const sy_tensor_desc& gates,
                        const char* gates_role, const sy_tensor_desc& t, const char* role,
                        bool gate_shaped) {
  const int64_t width = gate_shaped ? 4 * shape.hidden : shape.hidden;
  if (t.rank == 2 && t.shape[0] == shape.batch && t.shape[1] == width) return ok_status();
  return invalid_argument(std::string(op_name(ctx.call.op)) + ": " + role + " has shape " +
                          shape_text(t) + ", expected [" + std::to_string(shape.batch) + ", " +
                          std::to_string(width) + "] (B = " + std::to_string(shape.batch) +
                          ", H = " + std::to_string(shape.hidden) + " from " + gates_role + " " +
                          shape_text(gates) + ")");
}

// Binds the call's tensors as they are (rank 2) and dispatches `module`.<dtype> over B * H items.
Status run_cell_shader(const OpContext& ctx, const char* module, const CellShape& shape,
                       const std::vector<sy_tensor_desc>& tensors,
                       const std::vector<const char*>& roles) {
  ParamBlock params;
  std::vector<BufferBinding> bindings(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, tensors[i], roles[i], &bindings[i], &params.t[i]));
  }
  const int64_t count = shape.batch * shape.hidden;
  if (count == 0) return ok_status();
  params.count = static_cast<uint32_t>(count);
  params.mode = ctx.call.op;
  params.u[0] = static_cast<uint32_t>(shape.hidden);
  return run_shader(ctx, std::string(module) + "." + float_variant(tensors[0].dtype), params,
                    bindings, groups_for(static_cast<uint64_t>(count)));
}

}  // namespace

Status run_lstm_cell(const OpContext& ctx) {
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, 2, 3));
  const sy_tensor_desc& gates = ctx.call.inputs[0];
  const sy_tensor_desc& c_prev = ctx.call.inputs[1];
  const sy_tensor_desc& h = ctx.call.outputs[0];
  const sy_tensor_desc& c = ctx.call.outputs[1];
  const sy_tensor_desc& act = ctx.call.outputs[2];
  CellShape shape;
  SY_VK_RETURN_IF_ERROR(cell_shape(ctx, gates, "gates", &shape));
  SY_VK_RETURN_IF_ERROR(
      check_same_dtype(ctx, {&gates, &c_prev, &h, &c, &act}, {"gates", "c_prev", "h", "c", "act"}));
  SY_VK_RETURN_IF_ERROR(check_cell_shape(ctx, shape, gates, "gates", c_prev, "c_prev", false));
  SY_VK_RETURN_IF_ERROR(check_cell_shape(ctx, shape, gates, "gates", h, "h", false));
  SY_VK_RETURN_IF_ERROR(check_cell_shape(ctx, shape, gates, "gates", c, "c", false));
  SY_VK_RETURN_IF_ERROR(check_cell_shape(ctx, shape, gates, "gates", act, "act", true));
  return run_cell_shader(ctx, "lstm_cell", shape, {gates, c_prev, h, c, act},
                         {"gates", "c_prev", "h", "c", "act"});
}

Status run_lstm_cell_backward(const OpContext& ctx) {
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, 5, 2));
  const sy_tensor_desc& grad_h = ctx.call.inputs[0];
  const sy_tensor_desc& grad_c = ctx.call.inputs[1];
  const sy_tensor_desc& act = ctx.call.inputs[2];
  const sy_tensor_desc& c_prev = ctx.call.inputs[3];
  const sy_tensor_desc& c = ctx.call.inputs[4];
  const sy_tensor_desc& grad_gates = ctx.call.outputs[0];
  const sy_tensor_desc& grad_c_prev = ctx.call.outputs[1];
  CellShape shape;
  SY_VK_RETURN_IF_ERROR(cell_shape(ctx, act, "act", &shape));
  SY_VK_RETURN_IF_ERROR(
      check_same_dtype(ctx, {&act, &grad_h, &grad_c, &c_prev, &c, &grad_gates, &grad_c_prev},
                       {"act", "grad_h", "grad_c", "c_prev", "c", "grad_gates", "grad_c_prev"}));
  SY_VK_RETURN_IF_ERROR(check_cell_shape(ctx, shape, act, "act", grad_h, "grad_h", false));
  SY_VK_RETURN_IF_ERROR(check_cell_shape(ctx, shape, act, "act", grad_c, "grad_c", false));
  SY_VK_RETURN_IF_ERROR(check_cell_shape(ctx, shape, act, "act", c_prev, "c_prev", false));
  SY_VK_RETURN_IF_ERROR(check_cell_shape(ctx, shape, act, "act", c, "c", false));
  SY_VK_RETURN_IF_ERROR(check_cell_shape(ctx, shape, act, "act", grad_gates, "grad_gates", true));
  SY_VK_RETURN_IF_ERROR(
      check_cell_shape(ctx, shape, act, "act", grad_c_prev, "grad_c_prev", false));
  return run_cell_shader(ctx, "lstm_cell_backward", shape,
                         {grad_h, grad_c, act, c_prev, c, grad_gates, grad_c_prev},
                         {"grad_h", "grad_c", "act", "c_prev", "c", "grad_gates", "grad_c_prev"});
}

namespace {

// One MATMUL or COPY of a sequence op, run as an op of its own on this queue.
Status run_part(const OpContext& ctx, Status (*run)(const OpContext&), uint32_t op,
                std::initializer_list<sy_tensor_desc> inputs, const sy_tensor_desc& out,
                const sy_op_params& params = {}) {
  sy_op_call call{};
  call.op = op;
  call.num_inputs = static_cast<uint32_t>(inputs.size());
  call.num_outputs = 1;
  std::copy(inputs.begin(), inputs.end(), call.inputs);
  call.outputs[0] = out;
  call.params = params;
  return run(OpContext{ctx.device, ctx.queue, call});
}

// out = a b^T.
Status product_bt(const OpContext& ctx, const sy_tensor_desc& a, const sy_tensor_desc& b,
                  const sy_tensor_desc& out) {
  sy_op_params params{};
  params.matmul.transpose_b = 1;
  return run_part(ctx, run_matmul, SY_OP_MATMUL, {a, b}, out, params);
}

// out = in, converting the dtype where they differ.
Status copy(const OpContext& ctx, const sy_tensor_desc& in, const sy_tensor_desc& out) {
  return run_part(ctx, run_copy, SY_OP_COPY, {in}, out);
}

// Row `row` of a rank-3 tensor as a rank-2 view.
sy_tensor_desc row_view(const sy_tensor_desc& t, int64_t row) {
  sy_tensor_desc v = t;
  v.offset_bytes += static_cast<uint64_t>(row * t.strides[0]) * dtype_size(t.dtype);
  v.rank = 2;
  v.shape[0] = t.shape[1];
  v.shape[1] = t.shape[2];
  v.strides[0] = t.strides[1];
  v.strides[1] = t.strides[2];
  return v;
}

using Buffers = std::vector<std::unique_ptr<ScratchBuffer>>;

// Binds `tensors` (by their roles) and dispatches `module` over the B * H elements of a step's
// state with u[0] = H and the given further u words.
Status run_step(const OpContext& ctx, const char* module,
                const std::vector<sy_tensor_desc>& tensors, const std::vector<const char*>& roles,
                int64_t batch, int64_t hidden, std::initializer_list<uint32_t> words = {}) {
  ParamBlock params;
  std::vector<BufferBinding> bindings(tensors.size());
  for (size_t k = 0; k < tensors.size(); ++k) {
    SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, tensors[k], roles[k], &bindings[k], &params.t[k]));
  }
  params.count = static_cast<uint32_t>(batch * hidden);
  params.u[0] = static_cast<uint32_t>(hidden);
  std::copy(words.begin(), words.end(), params.u + 1);
  return run_shader(ctx, module, params, bindings,
                    groups_for(static_cast<uint64_t>(batch * hidden)));
}

// `t` itself where it is f32, else a dense f32 scratch tensor of its shape (kept alive by
// `buffers`), holding t's values where `fill`.
Status f32_version(const OpContext& ctx, const sy_tensor_desc& t, bool fill, Buffers& buffers,
                   sy_tensor_desc* out) {
  if (t.dtype == SY_DTYPE_F32) {
    *out = t;
    return ok_status();
  }
  buffers.push_back(std::make_unique<ScratchBuffer>(ctx.device));
  SY_VK_RETURN_IF_ERROR(buffers.back()->allocate(static_cast<uint64_t>(element_count(t)) * 4));
  *out = buffers.back()->f32_tensor(std::span<const int64_t>(t.shape, t.rank));
  return fill ? copy(ctx, t, *out) : ok_status();
}

// A dense [T, B, W] tensor as the [T * B, W] matrix of its rows.
sy_tensor_desc flat_rows(const sy_tensor_desc& t) {
  sy_tensor_desc v = t;
  v.rank = 2;
  v.shape[0] = t.shape[0] * t.shape[1];
  v.shape[1] = t.shape[2];
  v.strides[0] = t.shape[2];
  v.strides[1] = 1;
  return v;
}

// Rows [first, first + count) of a rank-3 tensor's first axis.
sy_tensor_desc slab_view(const sy_tensor_desc& t, int64_t first, int64_t count) {
  sy_tensor_desc v = t;
  v.offset_bytes += static_cast<uint64_t>(first * t.strides[0]) * dtype_size(t.dtype);
  v.shape[0] = count;
  return v;
}

// Columns [first, first + count) of a rank-2 tensor.
sy_tensor_desc column_view(const sy_tensor_desc& t, int64_t first, int64_t count) {
  sy_tensor_desc v = t;
  v.offset_bytes += static_cast<uint64_t>(first * t.strides[1]) * dtype_size(t.dtype);
  v.shape[1] = count;
  return v;
}

// A bias [4H] as the one row of a [1, 4H] matrix.
sy_tensor_desc as_row(const sy_tensor_desc& bias) {
  sy_tensor_desc v = bias;
  v.rank = 2;
  v.shape[1] = bias.shape[0];
  v.strides[1] = bias.strides[0];
  v.shape[0] = 1;
  v.strides[0] = 0;
  return v;
}

}  // namespace

// LSTM_SEQUENCE and GRU_SEQUENCE: the same loop with 4 or 3 gates and with or without c.
Status run_rnn_sequence(const OpContext& ctx) {
  const bool lstm = ctx.call.op == SY_OP_LSTM_SEQUENCE;
  const int64_t gate_count = lstm ? 4 : 3;
  const sy_rnn_params& p = ctx.call.params.rnn;
  const std::string name = op_name(ctx.call.op);
  if (p.has_bias > 1 || p.reverse > 1 || p.hidden_size < 1) {
    return invalid_argument(name + ": params.rnn needs hidden_size >= 1 and reverse and " +
                            "has_bias 0 or 1; got " + std::to_string(p.hidden_size) + ", " +
                            std::to_string(p.reverse) + ", " + std::to_string(p.has_bias));
  }
  // Inputs x, h0 [, c0], w_ih, w_hh [, b_ih, b_hh]; outputs y, h_n [, c_n] [, ws].
  const uint32_t weights = lstm ? 3 : 2;
  const uint32_t outputs = lstm ? 3 : 2;
  const bool with_ws = ctx.call.num_outputs == outputs + 1;
  SY_VK_RETURN_IF_ERROR(
      check_counts(ctx, weights + 2 + (p.has_bias ? 2 : 0), outputs + (with_ws ? 1 : 0)));
  const sy_tensor_desc& x = ctx.call.inputs[0];
  if (x.rank != 3 || x.shape[0] < 1 || x.shape[1] < 1) {
    return invalid_argument(name + ": x " + shape_text(x) +
                            " must be [T, B, in] with T and B at least 1");
  }
  const int64_t T = x.shape[0], B = x.shape[1], in = x.shape[2], H = p.hidden_size;
  const int64_t G = gate_count * H;
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, x.dtype, "x"));
  for (uint32_t k = 1; k < ctx.call.num_inputs + ctx.call.num_outputs; ++k) {
    const sy_tensor_desc& t =
        k < ctx.call.num_inputs ? ctx.call.inputs[k] : ctx.call.outputs[k - ctx.call.num_inputs];
    if (t.dtype != x.dtype) {
      return invalid_argument(
          name + ": every tensor must have x's dtype (" + dtype_name(x.dtype) + "); " +
          (k < ctx.call.num_inputs ? "input " : "output ") +
          std::to_string(k < ctx.call.num_inputs ? k : k - ctx.call.num_inputs) + " is " +
          dtype_name(t.dtype));
    }
  }
  const sy_tensor_desc& w_ih = ctx.call.inputs[weights];
  const sy_tensor_desc& w_hh = ctx.call.inputs[weights + 1];
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, ctx.call.inputs[1], "h0", {B, H}));
  if (lstm) SY_VK_RETURN_IF_ERROR(check_shape(ctx, ctx.call.inputs[2], "c0", {B, H}));
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, w_ih, "w_ih", {G, in}));
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, w_hh, "w_hh", {G, H}));
  if (p.has_bias) {
    SY_VK_RETURN_IF_ERROR(check_shape(ctx, ctx.call.inputs[weights + 2], "b_ih", {G}));
    SY_VK_RETURN_IF_ERROR(check_shape(ctx, ctx.call.inputs[weights + 3], "b_hh", {G}));
  }
  const sy_tensor_desc& y = ctx.call.outputs[0];
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, y, "y", {T, B, H}));
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, ctx.call.outputs[1], "h_n", {B, H}));
  if (lstm) SY_VK_RETURN_IF_ERROR(check_shape(ctx, ctx.call.outputs[2], "c_n", {B, H}));
  if (with_ws) {
    SY_VK_RETURN_IF_ERROR(
        check_shape(ctx, ctx.call.outputs[outputs], "ws", {T, B, (gate_count + 1) * H}));
  }

  // 16-bit data: x, the weights and biases are read through f32 copies and y is written to an
  // f32 one, so that every step computes in f32 and each output is rounded once (section 17).
  Buffers copies;
  auto as_f32 = [&](const sy_tensor_desc& t, sy_tensor_desc* out, bool fill) {
    return f32_version(ctx, t, fill, copies, out);
  };
  sy_tensor_desc x32, w_ih32, w_hh32, y32, b_ih32, b_hh32, ws32;
  SY_VK_RETURN_IF_ERROR(as_f32(x, &x32, true));
  SY_VK_RETURN_IF_ERROR(as_f32(w_ih, &w_ih32, true));
  SY_VK_RETURN_IF_ERROR(as_f32(w_hh, &w_hh32, true));
  SY_VK_RETURN_IF_ERROR(as_f32(y, &y32, false));
  if (with_ws) SY_VK_RETURN_IF_ERROR(as_f32(ctx.call.outputs[outputs], &ws32, false));
  if (p.has_bias) {
    SY_VK_RETURN_IF_ERROR(as_f32(ctx.call.inputs[weights + 2], &b_ih32, true));
    SY_VK_RETURN_IF_ERROR(as_f32(ctx.call.inputs[weights + 3], &b_hh32, true));
  }

  // f32 scratch: every step's projection gx [T, B, G], one step's gates [B, G], h and c [B, H].
  ScratchBuffer gx_buffer(ctx.device), gates_buffer(ctx.device), h_buffer(ctx.device),
      c_buffer(ctx.device);
  SY_VK_RETURN_IF_ERROR(gx_buffer.allocate(static_cast<uint64_t>(T * B * G) * 4));
  SY_VK_RETURN_IF_ERROR(gates_buffer.allocate(static_cast<uint64_t>(B * G) * 4));
  SY_VK_RETURN_IF_ERROR(h_buffer.allocate(static_cast<uint64_t>(B * H) * 4));
  if (lstm) SY_VK_RETURN_IF_ERROR(c_buffer.allocate(static_cast<uint64_t>(B * H) * 4));
  const int64_t gx_shape[] = {T, B, G}, gates_shape[] = {B, G}, state_shape[] = {B, H};
  const sy_tensor_desc gx = gx_buffer.f32_tensor(gx_shape);
  const sy_tensor_desc gates = gates_buffer.f32_tensor(gates_shape);
  const sy_tensor_desc h = h_buffer.f32_tensor(state_shape);
  const sy_tensor_desc c = lstm ? c_buffer.f32_tensor(state_shape) : h;
  SY_VK_RETURN_IF_ERROR(product_bt(ctx, x32, w_ih32, gx));
  SY_VK_RETURN_IF_ERROR(copy(ctx, ctx.call.inputs[1], h));
  if (lstm) SY_VK_RETURN_IF_ERROR(copy(ctx, ctx.call.inputs[2], c));
  const sy_tensor_desc b_ih = p.has_bias ? as_row(b_ih32) : gates;
  const sy_tensor_desc b_hh = p.has_bias ? as_row(b_hh32) : gates;
  for (int64_t t = 0; t < T; ++t) {
    const int64_t position = p.reverse ? T - 1 - t : t;
    SY_VK_RETURN_IF_ERROR(product_bt(ctx, h, w_hh32, gates));
    std::vector<sy_tensor_desc> tensors = {gates, row_view(gx, position), h};
    std::vector<const char*> roles = {"gates", "gx", "h"};
    if (lstm) {
      tensors.push_back(c);
      roles.push_back("c");
    }
    tensors.insert(tensors.end(), {row_view(y32, position), b_ih, b_hh,
                                   with_ws ? row_view(ws32, position) : gates});
    roles.insert(roles.end(), {"y", "b_ih", "b_hh", "ws"});
    SY_VK_RETURN_IF_ERROR(run_step(ctx, lstm ? "lstm_step.f32" : "gru_step.f32", tensors, roles, B,
                                   H, {p.has_bias, with_ws ? 1u : 0u}));
  }
  if (y.dtype != SY_DTYPE_F32) SY_VK_RETURN_IF_ERROR(copy(ctx, y32, y));
  if (with_ws && ws32.dtype != ctx.call.outputs[outputs].dtype) {
    SY_VK_RETURN_IF_ERROR(copy(ctx, ws32, ctx.call.outputs[outputs]));
  }
  SY_VK_RETURN_IF_ERROR(copy(ctx, h, ctx.call.outputs[1]));
  return lstm ? copy(ctx, c, ctx.call.outputs[2]) : ok_status();
}

// LSTM_SEQUENCE_BACKWARD and GRU_SEQUENCE_BACKWARD: per step, last processed to first, the step
// shader and one MATMUL with W_hh (the gradient reaching the previous step's h), then w_hh's
// gradient as one MATMUL of the stacked gate gradients with the stacked previous states.
Status run_rnn_sequence_backward(const OpContext& ctx) {
  const bool lstm = ctx.call.op == SY_OP_LSTM_SEQUENCE_BACKWARD;
  const std::string name = op_name(ctx.call.op);
  const sy_rnn_params& p = ctx.call.params.rnn;
  // LSTM: (h0, c0, w_hh, y, ws, grad_y, grad_c_n [, grad_h_n]) -> grad_gates, grad_h0, grad_c0
  // [, grad_w_hh]. GRU: (h0, w_hh, y, ws, grad_y [, grad_h_n]) -> grad_gx, grad_gh, grad_h0
  // [, grad_w_hh].
  const uint32_t base_inputs = lstm ? 7 : 5;
  const uint32_t in_count = ctx.call.num_inputs, out_count = ctx.call.num_outputs;
  if ((in_count != base_inputs && in_count != base_inputs + 1) ||
      (out_count != 3 && out_count != 4)) {
    return invalid_argument(name + ": takes " + std::to_string(base_inputs) + " or " +
                            std::to_string(base_inputs + 1) + " inputs and 3 or 4 outputs, got " +
                            std::to_string(in_count) + " and " + std::to_string(out_count));
  }
  if (p.reverse > 1) {
    return invalid_argument(name + ": params.rnn.reverse must be 0 or 1, got " +
                            std::to_string(p.reverse));
  }
  const uint32_t y_index = lstm ? 3 : 2;
  const sy_tensor_desc& y = ctx.call.inputs[y_index];
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, y.dtype, "y"));
  if (y.rank != 3 || y.shape[0] < 1 || y.shape[1] < 1 || y.shape[2] < 1 ||
      y.shape[2] != p.hidden_size) {
    return invalid_argument(name + ": y " + shape_text(y) +
                            " must be [T, B, H] with T, B >= 1 and H = hidden_size " +
                            std::to_string(p.hidden_size));
  }
  const int64_t T = y.shape[0], B = y.shape[1], H = y.shape[2];
  const int64_t G = (lstm ? 4 : 3) * H, W = G + H;
  for (uint32_t k = 0; k < in_count + out_count; ++k) {
    const sy_tensor_desc& t = k < in_count ? ctx.call.inputs[k] : ctx.call.outputs[k - in_count];
    if (t.dtype != y.dtype) {
      return invalid_argument(name + ": every tensor must have y's dtype (" + dtype_name(y.dtype) +
                              "); " + (k < in_count ? "input " : "output ") +
                              std::to_string(k < in_count ? k : k - in_count) + " is " +
                              dtype_name(t.dtype));
    }
  }
  const uint32_t w_index = lstm ? 2 : 1, ws_index = y_index + 1, grad_y_index = y_index + 2;
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, ctx.call.inputs[0], "h0", {B, H}));
  if (lstm) SY_VK_RETURN_IF_ERROR(check_shape(ctx, ctx.call.inputs[1], "c0", {B, H}));
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, ctx.call.inputs[w_index], "w_hh", {G, H}));
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, ctx.call.inputs[ws_index], "ws", {T, B, W}));
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, ctx.call.inputs[grad_y_index], "grad_y", {T, B, H}));
  if (lstm) SY_VK_RETURN_IF_ERROR(check_shape(ctx, ctx.call.inputs[6], "grad_c_n", {B, H}));
  const bool with_grad_h_n = in_count == base_inputs + 1;
  if (with_grad_h_n) {
    SY_VK_RETURN_IF_ERROR(check_shape(ctx, ctx.call.inputs[base_inputs], "grad_h_n", {B, H}));
  }
  const uint32_t gate_outputs = lstm ? 1 : 2;  // grad_gates, or grad_gx and grad_gh
  for (uint32_t k = 0; k < gate_outputs; ++k) {
    SY_VK_RETURN_IF_ERROR(check_shape(ctx, ctx.call.outputs[k], "gate gradient", {T, B, G}));
  }
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, ctx.call.outputs[gate_outputs], "grad_h0", {B, H}));
  if (lstm) SY_VK_RETURN_IF_ERROR(check_shape(ctx, ctx.call.outputs[2], "grad_c0", {B, H}));
  if (out_count == 4)
    SY_VK_RETURN_IF_ERROR(check_shape(ctx, ctx.call.outputs[3], "grad_w_hh", {G, H}));

  // f32 copies of 16-bit inputs, and f32 scratch for everything the steps write.
  Buffers buffers;
  auto scratch = [&](std::initializer_list<int64_t> shape, sy_tensor_desc* out) -> Status {
    int64_t count = 1;
    for (int64_t n : shape) count *= n;
    buffers.push_back(std::make_unique<ScratchBuffer>(ctx.device));
    SY_VK_RETURN_IF_ERROR(buffers.back()->allocate(static_cast<uint64_t>(count) * 4));
    *out = buffers.back()->f32_tensor(std::span<const int64_t>(shape.begin(), shape.size()));
    return ok_status();
  };
  auto as_f32 = [&](const sy_tensor_desc& t, sy_tensor_desc* out) {
    return f32_version(ctx, t, true, buffers, out);
  };
  sy_tensor_desc w_hh, ws, grad_y, prev_h, dh, dc, carried, gates[2];
  SY_VK_RETURN_IF_ERROR(as_f32(ctx.call.inputs[w_index], &w_hh));
  SY_VK_RETURN_IF_ERROR(as_f32(ctx.call.inputs[ws_index], &ws));
  SY_VK_RETURN_IF_ERROR(as_f32(ctx.call.inputs[grad_y_index], &grad_y));
  // prev_h [T, B, H]: the state each position started from (y of the position processed before
  // it, h0 for the first), for the steps and for w_hh's gradient.
  SY_VK_RETURN_IF_ERROR(scratch({T, B, H}, &prev_h));
  SY_VK_RETURN_IF_ERROR(scratch({B, H}, &dh));  // LSTM: dh; GRU: mm
  SY_VK_RETURN_IF_ERROR(scratch({B, H}, lstm ? &dc : &carried));
  for (uint32_t k = 0; k < gate_outputs; ++k) {
    SY_VK_RETURN_IF_ERROR(scratch({T, B, G}, &gates[k]));
  }
  const int64_t first = p.reverse ? T - 1 : 0;  // the position processed first
  SY_VK_RETURN_IF_ERROR(copy(ctx, ctx.call.inputs[0], row_view(prev_h, first)));
  if (T > 1) {
    const sy_tensor_desc& y_in = ctx.call.inputs[y_index];
    if (p.reverse) {
      SY_VK_RETURN_IF_ERROR(copy(ctx, slab_view(y_in, 1, T - 1), slab_view(prev_h, 0, T - 1)));
    } else {
      SY_VK_RETURN_IF_ERROR(copy(ctx, slab_view(y_in, 0, T - 1), slab_view(prev_h, 1, T - 1)));
    }
  }
  sy_op_params fill{};
  fill.fill.value = 0.0;
  if (with_grad_h_n) {
    SY_VK_RETURN_IF_ERROR(copy(ctx, ctx.call.inputs[base_inputs], dh));
  } else {
    SY_VK_RETURN_IF_ERROR(run_part(ctx, run_fill, SY_OP_FILL, {}, dh, fill));
  }
  if (lstm) {
    SY_VK_RETURN_IF_ERROR(copy(ctx, ctx.call.inputs[6], dc));
  } else {
    SY_VK_RETURN_IF_ERROR(run_part(ctx, run_fill, SY_OP_FILL, {}, carried, fill));
  }
  for (int64_t step = T - 1; step >= 0; --step) {
    const int64_t t = p.reverse ? T - 1 - step : step;
    std::vector<sy_tensor_desc> tensors;
    std::vector<const char*> roles;
    if (lstm) {
      // c before the step: ws's c column of the position processed before, or c0.
      const int64_t previous = p.reverse ? t + 1 : t - 1;
      const sy_tensor_desc c_prev =
          step == 0 ? ctx.call.inputs[1] : column_view(row_view(ws, previous), G, H);
      sy_tensor_desc c_prev32;
      SY_VK_RETURN_IF_ERROR(as_f32(c_prev, &c_prev32));
      tensors = {row_view(ws, t), c_prev32, row_view(grad_y, t), dh, dc, row_view(gates[0], t)};
      roles = {"ws", "c_prev", "grad_y", "dh", "dc", "grad_gates"};
    } else {
      tensors = {row_view(ws, t), row_view(prev_h, t),   row_view(grad_y, t),  dh,
                 carried,         row_view(gates[0], t), row_view(gates[1], t)};
      roles = {"ws", "h_prev", "grad_y", "mm", "carried", "grad_gx", "grad_gh"};
    }
    SY_VK_RETURN_IF_ERROR(run_step(ctx, lstm ? "lstm_seq_backward.f32" : "gru_seq_backward.f32",
                                   tensors, roles, B, H));
    // The gradient reaching the previous step's h through this step's product.
    const sy_tensor_desc& recurrent = lstm ? gates[0] : gates[1];
    SY_VK_RETURN_IF_ERROR(
        run_part(ctx, run_matmul, SY_OP_MATMUL, {row_view(recurrent, t), w_hh}, dh));
  }
  for (uint32_t k = 0; k < gate_outputs; ++k) {
    SY_VK_RETURN_IF_ERROR(copy(ctx, gates[k], ctx.call.outputs[k]));
  }
  if (lstm) {
    SY_VK_RETURN_IF_ERROR(copy(ctx, dh, ctx.call.outputs[1]));
    SY_VK_RETURN_IF_ERROR(copy(ctx, dc, ctx.call.outputs[2]));
  } else {
    // grad_h0 = mm + carried.
    sy_tensor_desc sum;
    SY_VK_RETURN_IF_ERROR(scratch({B, H}, &sum));
    SY_VK_RETURN_IF_ERROR(run_part(ctx, run_binary, SY_OP_ADD, {dh, carried}, sum));
    SY_VK_RETURN_IF_ERROR(copy(ctx, sum, ctx.call.outputs[2]));
  }
  if (out_count == 4) {
    // grad_w_hh = (gate gradients of the recurrent part)^T prev_h over every step and row.
    sy_tensor_desc grad_w;
    SY_VK_RETURN_IF_ERROR(scratch({G, H}, &grad_w));
    sy_op_params params{};
    params.matmul.transpose_a = 1;
    SY_VK_RETURN_IF_ERROR(run_part(ctx, run_matmul, SY_OP_MATMUL,
                                   {flat_rows(gates[lstm ? 0 : 1]), flat_rows(prev_h)}, grad_w,
                                   params));
    SY_VK_RETURN_IF_ERROR(copy(ctx, grad_w, ctx.call.outputs[3]));
  }
  return ok_status();
}

}  // namespace sy_vk
