// LSTM_CELL and LSTM_CELL_BACKWARD (docs/ops.md section 16): one dispatch each, one invocation per
// element of the [B, H] state. LSTM_SEQUENCE and GRU_SEQUENCE (section 17): one MATMUL projects
// every step's input, then per step one MATMUL of the f32 state with W_hh^T and one lstm_step or
// gru_step dispatch; 16-bit data goes through f32 copies. Every
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
  // Inputs x, h0 [, c0], w_ih, w_hh [, b_ih, b_hh]; outputs y, h_n [, c_n].
  const uint32_t weights = lstm ? 3 : 2;
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, weights + 2 + (p.has_bias ? 2 : 0), lstm ? 3 : 2));
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

  // 16-bit data: x, the weights and biases are read through f32 copies and y is written to an
  // f32 one, so that every step computes in f32 and each output is rounded once (section 17).
  std::vector<std::unique_ptr<ScratchBuffer>> copies;
  auto as_f32 = [&](const sy_tensor_desc& t, sy_tensor_desc* out, bool fill) -> Status {
    if (t.dtype == SY_DTYPE_F32) {
      *out = t;
      return ok_status();
    }
    copies.push_back(std::make_unique<ScratchBuffer>(ctx.device));
    SY_VK_RETURN_IF_ERROR(copies.back()->allocate(static_cast<uint64_t>(element_count(t)) * 4));
    *out = copies.back()->f32_tensor(std::span<const int64_t>(t.shape, t.rank));
    return fill ? copy(ctx, t, *out) : ok_status();
  };
  sy_tensor_desc x32, w_ih32, w_hh32, y32, b_ih32, b_hh32;
  SY_VK_RETURN_IF_ERROR(as_f32(x, &x32, true));
  SY_VK_RETURN_IF_ERROR(as_f32(w_ih, &w_ih32, true));
  SY_VK_RETURN_IF_ERROR(as_f32(w_hh, &w_hh32, true));
  SY_VK_RETURN_IF_ERROR(as_f32(y, &y32, false));
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
    tensors.insert(tensors.end(), {row_view(y32, position), b_ih, b_hh});
    roles.insert(roles.end(), {"y", "b_ih", "b_hh"});
    ParamBlock params;
    std::vector<BufferBinding> bindings(tensors.size());
    for (size_t k = 0; k < tensors.size(); ++k) {
      SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, tensors[k], roles[k], &bindings[k], &params.t[k]));
    }
    params.count = static_cast<uint32_t>(B * H);
    params.u[0] = static_cast<uint32_t>(H);
    params.u[1] = p.has_bias;
    SY_VK_RETURN_IF_ERROR(run_shader(ctx, lstm ? "lstm_step.f32" : "gru_step.f32", params, bindings,
                                     groups_for(static_cast<uint64_t>(B * H))));
  }
  if (y.dtype != SY_DTYPE_F32) SY_VK_RETURN_IF_ERROR(copy(ctx, y32, y));
  SY_VK_RETURN_IF_ERROR(copy(ctx, h, ctx.call.outputs[1]));
  return lstm ? copy(ctx, c, ctx.call.outputs[2]) : ok_status();
}

}  // namespace sy_vk
