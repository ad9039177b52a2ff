// SCALED_DOT_PRODUCT_ATTENTION and its backward (docs/ops.md section 18) on shaders/attention.comp:
// the forward is one dispatch (a workgroup per query row, keys in tiles, online softmax), the
// backward four (D_i = dO_i . O_i into f32 scratch, then dQ per query row, dK and dV per key row,
// each rebuilding the probabilities from the forward's lse). Every tensor is bound with its own
// rank-4 shape and strides, so the [B, T, H, D] views of projections split into heads, broadcast
// masks and padded outputs are used in place, in f32, f16 and bf16 (all arithmetic in f32).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops.h"

namespace sy_vk {
namespace {

constexpr uint32_t kPassForward = 0, kPassDelta = 1, kPassDq = 2, kPassDk = 3, kPassDv = 4;
constexpr int kSlots = 8;

struct Problem {
  int64_t b = 0, h = 0, tq = 0, tk = 0, d = 0, dv = 0;
};

Status fail(const OpContext& ctx, const std::string& what) {
  return invalid_argument(std::string(op_name(ctx.call.op)) + ": " + what);
}

// Params, q, k, v (inputs first..first+2) and the mask (input mask_index) checked.
Status check_problem(const OpContext& ctx, uint32_t first, uint32_t mask_index, Problem* pr) {
  const sy_attention_params& p = ctx.call.params.attention;
  if (p.causal > 1 || p.has_mask > 1) {
    return fail(ctx, "params.attention.causal and has_mask must be 0 or 1, got " +
                         std::to_string(p.causal) + " and " + std::to_string(p.has_mask));
  }
  if (!(p.scale > 0.0) || !std::isfinite(p.scale)) {
    return fail(
        ctx, "params.attention.scale must be positive and finite, got " + std::to_string(p.scale));
  }
  if (!(p.dropout_p >= 0.0 && p.dropout_p < 1.0)) {
    return fail(ctx,
                "params.attention.dropout_p must be in [0, 1), got " + std::to_string(p.dropout_p));
  }
  const sy_tensor_desc& q = ctx.call.inputs[first];
  const sy_tensor_desc& k = ctx.call.inputs[first + 1];
  const sy_tensor_desc& v = ctx.call.inputs[first + 2];
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, q.dtype, "q"));
  SY_VK_RETURN_IF_ERROR(check_same_dtype(ctx, {&q, &k, &v}, {"q", "k", "v"}));
  if (q.rank != 4 || k.rank != 4 || v.rank != 4) {
    return fail(ctx, "q, k and v must be [B, H, T, D], got " + shape_text(q) + ", " +
                         shape_text(k) + " and " + shape_text(v));
  }
  *pr = Problem{q.shape[0], q.shape[1], q.shape[2], k.shape[2], q.shape[3], v.shape[3]};
  if (pr->b < 1 || pr->h < 1 || pr->tq < 1 || pr->tk < 1 || pr->d < 1 || pr->dv < 1) {
    return fail(ctx, "needs at least one query, one key and D, Dv >= 1; got q " + shape_text(q) +
                         " and v " + shape_text(v));
  }
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, k, "k", {pr->b, pr->h, pr->tk, pr->d}));
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, v, "v", {pr->b, pr->h, pr->tk, pr->dv}));
  if (p.has_mask != 0) {
    const sy_tensor_desc& mask = ctx.call.inputs[mask_index];
    SY_VK_RETURN_IF_ERROR(check_same_dtype(ctx, {&q, &mask}, {"q", "mask"}));
    SY_VK_RETURN_IF_ERROR(check_shape(ctx, mask, "mask", {pr->b, pr->h, pr->tq, pr->tk}));
  }
  const double scores = static_cast<double>(pr->b * pr->h) * static_cast<double>(pr->tq) *
                        static_cast<double>(std::max(pr->tk, pr->d) + pr->dv);
  if (scores >= 4294967296.0) {
    return unimplemented(std::string(op_name(ctx.call.op)) +
                         ": the shaders index with 32 bits; this call has " +
                         std::to_string(pr->b * pr->h * pr->tq * pr->tk) + " scores");
  }
  return ok_status();
}

// One pass over `rows` rows with the tensors in their slots.
Status run_pass(const OpContext& ctx, uint32_t pass, const Problem& pr, int64_t rows,
                const std::vector<sy_tensor_desc>& slots, bool write_lse) {
  static const char* const kRoles[kSlots] = {"q",        "k",   "v",     "mask",
                                             "grad_out", "lse", "delta", "result"};
  const sy_attention_params& p = ctx.call.params.attention;
  ParamBlock params;
  std::vector<BufferBinding> bindings(kSlots);
  for (int s = 0; s < kSlots; ++s) {
    SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, slots[static_cast<size_t>(s)], kRoles[s],
                                      &bindings[static_cast<size_t>(s)], &params.t[s]));
  }
  params.count = static_cast<uint32_t>(rows);
  params.mode = pass;
  const int64_t u[] = {pr.h, pr.tq, pr.tk, pr.d, pr.dv};
  for (int n = 0; n < 5; ++n) params.u[n] = static_cast<uint32_t>(u[n]);
  params.u[5] = p.causal;
  params.u[6] = p.has_mask;
  params.u[7] = write_lse ? 1u : 0u;
  params.u[8] = static_cast<uint32_t>(p.seed);
  params.u[9] = static_cast<uint32_t>(p.seed >> 32);
  params.u[10] = static_cast<uint32_t>(p.offset);
  params.u[11] = static_cast<uint32_t>(p.offset >> 32);
  params.u[12] = p.dropout_p > 0.0 ? 1u : 0u;
  params.f[0] = static_cast<float>(p.scale);
  params.f[1] = static_cast<float>(p.dropout_p);
  params.f[2] = static_cast<float>(1.0 / (1.0 - p.dropout_p));
  const auto groups_x = static_cast<uint32_t>(std::min<int64_t>(rows, 65535));
  const auto groups_y = static_cast<uint32_t>((rows + groups_x - 1) / groups_x);
  const std::string module = std::string("attention.") + float_variant(slots[0].dtype);
  return run_shader(ctx, module, params, bindings, groups_x, groups_y);
}

}  // namespace

Status run_attention(const OpContext& ctx) {
  const sy_attention_params& p = ctx.call.params.attention;
  const uint32_t inputs = p.has_mask != 0 ? 4 : 3;
  const bool with_lse = ctx.call.num_outputs == 2;
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, inputs, with_lse ? 2 : 1));
  Problem pr;
  SY_VK_RETURN_IF_ERROR(check_problem(ctx, 0, 3, &pr));
  const sy_tensor_desc& q = ctx.call.inputs[0];
  const sy_tensor_desc& out = ctx.call.outputs[0];
  SY_VK_RETURN_IF_ERROR(check_same_dtype(ctx, {&q, &out}, {"q", "out"}));
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, out, "out", {pr.b, pr.h, pr.tq, pr.dv}));
  ScratchBuffer placeholder(ctx.device);
  sy_tensor_desc lse;
  if (with_lse) {
    lse = ctx.call.outputs[1];
    if (lse.dtype != SY_DTYPE_F32) {
      return fail(ctx, "lse must be f32, got " + std::string(dtype_name(lse.dtype)));
    }
    SY_VK_RETURN_IF_ERROR(check_shape(ctx, lse, "lse", {pr.b, pr.h, pr.tq}));
  } else {
    SY_VK_RETURN_IF_ERROR(placeholder.allocate(4));
    const int64_t one[] = {1};
    lse = placeholder.f32_tensor(one);
  }
  const sy_tensor_desc& mask = p.has_mask != 0 ? ctx.call.inputs[3] : q;
  return run_pass(ctx, kPassForward, pr, pr.b * pr.h * pr.tq,
                  {q, ctx.call.inputs[1], ctx.call.inputs[2], mask, q, lse, lse, out}, with_lse);
}

Status run_attention_backward(const OpContext& ctx) {
  const sy_attention_params& p = ctx.call.params.attention;
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, p.has_mask != 0 ? 7 : 6, 3));
  Problem pr;
  SY_VK_RETURN_IF_ERROR(check_problem(ctx, 1, 6, &pr));
  const sy_tensor_desc& grad = ctx.call.inputs[0];
  const sy_tensor_desc& q = ctx.call.inputs[1];
  const sy_tensor_desc& k = ctx.call.inputs[2];
  const sy_tensor_desc& v = ctx.call.inputs[3];
  const sy_tensor_desc& out = ctx.call.inputs[4];
  const sy_tensor_desc& lse = ctx.call.inputs[5];
  SY_VK_RETURN_IF_ERROR(check_same_dtype(
      ctx, {&q, &grad, &out, &ctx.call.outputs[0], &ctx.call.outputs[1], &ctx.call.outputs[2]},
      {"q", "grad_out", "out", "grad_q", "grad_k", "grad_v"}));
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, grad, "grad_out", {pr.b, pr.h, pr.tq, pr.dv}));
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, out, "out", {pr.b, pr.h, pr.tq, pr.dv}));
  if (lse.dtype != SY_DTYPE_F32) {
    return fail(ctx, "lse must be f32, got " + std::string(dtype_name(lse.dtype)));
  }
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, lse, "lse", {pr.b, pr.h, pr.tq}));
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, ctx.call.outputs[0], "grad_q", {pr.b, pr.h, pr.tq, pr.d}));
  SY_VK_RETURN_IF_ERROR(check_shape(ctx, ctx.call.outputs[1], "grad_k", {pr.b, pr.h, pr.tk, pr.d}));
  SY_VK_RETURN_IF_ERROR(
      check_shape(ctx, ctx.call.outputs[2], "grad_v", {pr.b, pr.h, pr.tk, pr.dv}));
  ScratchBuffer delta_buffer(ctx.device);
  SY_VK_RETURN_IF_ERROR(delta_buffer.allocate(static_cast<uint64_t>(pr.b * pr.h * pr.tq) * 4));
  const int64_t delta_shape[] = {pr.b, pr.h, pr.tq};
  const sy_tensor_desc delta = delta_buffer.f32_tensor(delta_shape);
  const sy_tensor_desc& mask = p.has_mask != 0 ? ctx.call.inputs[6] : q;
  const int64_t query_rows = pr.b * pr.h * pr.tq, key_rows = pr.b * pr.h * pr.tk;
  SY_VK_RETURN_IF_ERROR(
      run_pass(ctx, kPassDelta, pr, query_rows, {q, k, v, mask, grad, lse, delta, out}, false));
  SY_VK_RETURN_IF_ERROR(run_pass(ctx, kPassDq, pr, query_rows,
                                 {q, k, v, mask, grad, lse, delta, ctx.call.outputs[0]}, false));
  SY_VK_RETURN_IF_ERROR(run_pass(ctx, kPassDk, pr, key_rows,
                                 {q, k, v, mask, grad, lse, delta, ctx.call.outputs[1]}, false));
  return run_pass(ctx, kPassDv, pr, key_rows,
                  {q, k, v, mask, grad, lse, delta, ctx.call.outputs[2]}, false);
}

}  // namespace sy_vk
