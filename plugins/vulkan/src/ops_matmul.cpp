// MATMUL: batched, broadcast over leading axes, transposes folded into strides, optional bias.
#include <algorithm>
#include <vector>

#include "ops.h"
#include "tensor_layout.h"

namespace sy_vk {
namespace {

// Swaps the last two axes of `desc` (a transposed view).
void transpose_last_two(sy_tensor_desc* desc) {
  const uint32_t r = desc->rank;
  std::swap(desc->shape[r - 2], desc->shape[r - 1]);
  std::swap(desc->strides[r - 2], desc->strides[r - 1]);
}

// The batch axes of `desc` only (all but the last two).
sy_tensor_desc batch_part(const sy_tensor_desc& desc) {
  sy_tensor_desc batch = desc;
  batch.rank = desc.rank - 2;
  return batch;
}

// `operand` seen with the output's batch shape: broadcast batch axes, then its own last two.
Status operand_view(const OpContext& ctx, const sy_tensor_desc& operand, const char* role,
                    const sy_tensor_desc& out, sy_tensor_desc* view) {
  const uint32_t batch_rank = out.rank - 2;
  SY_VK_RETURN_IF_ERROR(
      broadcast_view(ctx, batch_part(operand), role, out.shape, batch_rank, view));
  view->rank = out.rank;
  for (int i = 0; i < 2; ++i) {
    view->shape[batch_rank + i] = operand.shape[operand.rank - 2 + i];
    view->strides[batch_rank + i] = operand.strides[operand.rank - 2 + i];
  }
  return ok_status();
}

// Checks the call and gives the operands with their transposes folded in, and M, K, N.
Status check_matmul(const OpContext& ctx, sy_tensor_desc* a, sy_tensor_desc* b, int64_t* M,
                    int64_t* K, int64_t* N) {
  const sy_matmul_params& p = ctx.call.params.matmul;
  SY_VK_RETURN_IF_ERROR(check_counts(ctx, p.has_bias ? 3 : 2, 1));
  *a = ctx.call.inputs[0];
  *b = ctx.call.inputs[1];
  const sy_tensor_desc& out = ctx.call.outputs[0];
  SY_VK_RETURN_IF_ERROR(check_float_dtype(ctx, a->dtype, "a"));
  SY_VK_RETURN_IF_ERROR(check_same_dtype(ctx, {a, b, &out}, {"a", "b", "out"}));
  if (p.has_bias) {
    SY_VK_RETURN_IF_ERROR(check_same_dtype(ctx, {a, &ctx.call.inputs[2]}, {"a", "bias"}));
  }
  if (a->rank < 2 || b->rank < 2 || a->rank > SY_MAX_RANK || b->rank > SY_MAX_RANK) {
    return invalid_argument("MATMUL: a " + shape_text(*a) + " and b " + shape_text(*b) +
                            " must both have rank >= 2");
  }
  if (p.transpose_a) transpose_last_two(a);
  if (p.transpose_b) transpose_last_two(b);
  *M = a->shape[a->rank - 2];
  *K = a->shape[a->rank - 1];
  *N = b->shape[b->rank - 1];
  if (b->shape[b->rank - 2] != *K) {
    return invalid_argument("MATMUL: inner dimensions differ: a " + shape_text(ctx.call.inputs[0]) +
                            " (K=" + std::to_string(*K) + ") vs b " +
                            shape_text(ctx.call.inputs[1]) +
                            " (K=" + std::to_string(b->shape[b->rank - 2]) + ")");
  }
  sy_tensor_desc expected = out;
  if (!broadcast_shapes(batch_part(*a), batch_part(*b), expected.shape, &expected.rank)) {
    return invalid_argument("MATMUL: batch axes of a " + shape_text(ctx.call.inputs[0]) +
                            " and b " + shape_text(ctx.call.inputs[1]) + " do not broadcast");
  }
  expected.shape[expected.rank] = *M;
  expected.shape[expected.rank + 1] = *N;
  expected.rank += 2;
  return check_same_shape(ctx, out, "out", expected, "the product");
}

}  // namespace

Status run_matmul(const OpContext& ctx) {
  const sy_matmul_params& p = ctx.call.params.matmul;
  const sy_tensor_desc& out = ctx.call.outputs[0];
  sy_tensor_desc a, b;
  int64_t M = 0, K = 0, N = 0;
  SY_VK_RETURN_IF_ERROR(check_matmul(ctx, &a, &b, &M, &K, &N));
  ParamBlock params;
  sy_tensor_desc views[4];
  SY_VK_RETURN_IF_ERROR(operand_view(ctx, a, "a", out, &views[0]));
  SY_VK_RETURN_IF_ERROR(operand_view(ctx, b, "b", out, &views[1]));
  views[2] = out;
  if (p.has_bias) {
    SY_VK_RETURN_IF_ERROR(
        broadcast_view(ctx, ctx.call.inputs[2], "bias", out.shape, out.rank, &views[2]));
  }
  views[3] = out;
  const char* roles[] = {"a", "b", "bias", "out"};
  std::vector<BufferBinding> bindings(4);
  for (int i = 0; i < 4; ++i) {
    SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, views[i], roles[i], &bindings[i], &params.t[i]));
  }
  const int64_t batch = element_count(batch_part(out));
  if (M == 0 || N == 0 || batch == 0) return ok_status();
  params.u[0] = p.has_bias ? 1u : 0u;
  params.u[1] = static_cast<uint32_t>(M);
  params.u[2] = static_cast<uint32_t>(N);
  params.u[3] = static_cast<uint32_t>(K);
  params.u[4] = static_cast<uint32_t>(batch);
  params.u[5] = out.rank - 2;
  return run_shader(ctx, std::string("matmul.") + float_variant(out.dtype), params, bindings,
                    gemm_groups(N), gemm_groups(M),
                    static_cast<uint32_t>(std::min<int64_t>(batch, 65535)));
}

}  // namespace sy_vk
