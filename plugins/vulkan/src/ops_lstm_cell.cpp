// LSTM_CELL and LSTM_CELL_BACKWARD (docs/ops.md section 16): one dispatch each, one invocation per
// element of the [B, H] state. Every tensor is bound with its own rank-2 shape and strides (no axis
// merging), so the shaders find a row's four gate columns through the column stride.
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

}  // namespace sy_vk
