// MATMUL: batched, broadcast over leading axes, transposes folded into strides, optional bias.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "device.h"
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

// Whether the batch axes of `view` (rank R, batch rank R - 2) and its row axis (R - 2) are one
// strided axis: each batch axis steps over whole copies of the axes after it. True for a
// contiguous [B, T, F] activation and for a view that broadcasts over all of them (strides 0).
bool rows_fold(const sy_tensor_desc& view) {
  for (int d = static_cast<int>(view.rank) - 3; d >= 0; --d) {
    if (view.strides[d] != view.strides[d + 1] * view.shape[d + 1]) return false;
  }
  return true;
}

// Folds the batch axes into the rows when B is the same matrix for every batch (a Linear layer on
// [batch, time, features]: x @ W^T): one [batch * M, K] @ [K, N] product, which the tiled kernel
// fills with full tiles, instead of `batch` products of M rows each padded to a 64-row tile
// (8-step sequences: 8 of 64 rows used). Returns false, changing nothing, when the views do not
// allow it.
bool fold_batch_into_rows(sy_tensor_desc* views, bool has_bias, int64_t* M, int64_t* batch) {
  const uint32_t rank = views[3].rank;
  if (rank <= 2 || *batch <= 1) return false;
  for (uint32_t d = 0; d + 2 < rank; ++d) {
    if (views[1].strides[d] != 0) return false;
  }
  for (int i : {0, 2, 3}) {
    if ((i != 2 || has_bias) && !rows_fold(views[i])) return false;
  }
  for (int i = 0; i < 4; ++i) {
    sy_tensor_desc& v = views[i];
    const int64_t rows = i == 1 ? v.shape[rank - 2] : *M * *batch;
    const int64_t cols = v.shape[rank - 1];
    const int64_t row_stride = v.strides[rank - 2], col_stride = v.strides[rank - 1];
    v.rank = 2;
    v.shape[0] = rows;
    v.shape[1] = cols;
    v.strides[0] = row_stride;
    v.strides[1] = col_stride;
  }
  *M *= *batch;
  *batch = 1;
  return true;
}

// ParamBlock::mode bit: SMALL_PRODUCT in shaders/matmul.comp.
constexpr uint32_t kSmallProduct = 1u << 17;

// Whether the per-element kernel beats the tiled one for this product. The tiled kernel computes
// whole 64x64 tiles over K in steps of 32, padding included, so its work is the padded volume; the
// per-element kernel does the product's own M*N*K multiply-adds but reads both operands from
// memory for each, taken as kSmallCostFactor times slower per multiply-add (an estimate, not a
// per-shape measurement: it sends attention's [B*heads, 8, 8] products and narrow layers' short
// products to the per-element kernel and leaves 64x96x80 and larger on the tiles).
// `tile` and `depth` are the tiled kernel's output tile edge and K step: 64 and 32 (GEMM_BM,
// GEMM_BK of gemm_tile.glsl), 128 and 16 (its GEMM_WIDE form), 128 and 32 (gemm_coopmat.glsl):
// GemmKernel's tile and depth.
bool prefer_small_product(int64_t batch, int64_t M, int64_t N, int64_t K, int64_t tile,
                          int64_t depth) {
  constexpr double kSmallCostFactor = 4.0;
  const auto round_up = [](int64_t v, int64_t to) { return (v + to - 1) / to * to; };
  const double tiled = static_cast<double>(batch) * static_cast<double>(round_up(M, tile)) *
                       static_cast<double>(round_up(N, tile)) *
                       static_cast<double>(round_up(std::max<int64_t>(K, 1), depth));
  const double small = kSmallCostFactor * static_cast<double>(batch) * static_cast<double>(M) *
                       static_cast<double>(N) * static_cast<double>(std::max<int64_t>(K, 1));
  return small < tiled;
}

// The unit-stride axes of A and B for the cooperative-matrix form (kRowsFastA, kColumnsFastB).
uint32_t fast_axes(const sy_tensor_desc* views) {
  const uint32_t r = views[3].rank - 2;
  uint32_t mode = 0;
  if (views[0].strides[r] == 1 && views[0].strides[r + 1] != 1) mode |= kRowsFastA;
  if (views[1].strides[r + 1] == 1 || views[1].strides[r] != 1) mode |= kColumnsFastB;
  return mode;
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
  int64_t batch = element_count(batch_part(out));
  const bool empty = M == 0 || N == 0 || batch == 0;
  if (!empty) fold_batch_into_rows(views, p.has_bias, &M, &batch);
  const char* roles[] = {"a", "b", "bias", "out"};
  std::vector<BufferBinding> bindings(4);
  for (int i = 0; i < 4; ++i) {
    SY_VK_RETURN_IF_ERROR(bind_tensor(ctx, views[i], roles[i], &bindings[i], &params.t[i]));
  }
  if (empty) return ok_status();
  params.u[0] = p.has_bias ? 1u : 0u;
  params.u[1] = static_cast<uint32_t>(M);
  params.u[2] = static_cast<uint32_t>(N);
  params.u[3] = static_cast<uint32_t>(K);
  params.u[4] = static_cast<uint32_t>(batch);
  params.u[5] = views[3].rank - 2;
  const std::string module = std::string("matmul.") + float_variant(out.dtype);
  constexpr int64_t kSmallColumns = 8;  // SMALL_COLUMNS in matmul.comp
  const int64_t small_items = batch * M * ((N + kSmallColumns - 1) / kSmallColumns);
  const auto batch_groups = static_cast<uint32_t>(std::min<int64_t>(batch, 65535));
  const GemmKernel kernel = choose_gemm_kernel(ctx, out.dtype, M, N);
  if (prefer_small_product(batch, M, N, K, kernel.tile, kernel.depth) &&
      small_items <= int64_t{UINT32_MAX}) {
    params.mode |= kSmallProduct;
    params.count = static_cast<uint32_t>(small_items);
    constexpr int64_t kGroupSize = 64;  // GEMM_TS * GEMM_TS invocations
    const auto groups = std::clamp<int64_t>((small_items + kGroupSize - 1) / kGroupSize, 1, 65535);
    ctx.device.count_gemm(/*cooperative=*/false);
    return run_shader(ctx, module, params, bindings, static_cast<uint32_t>(groups));
  }
  if (kernel.cooperative) params.mode |= fast_axes(views);
  return run_gemm(ctx, module, kernel, params, bindings, M, N, batch_groups);
}

}  // namespace sy_vk
