// MATMUL (0): cuBLASLt when it is available and the layout allows it, else the tiled kernel.
#include "cublaslt_matmul.h"
#include "matmul_plan.h"
#include "ops.h"

namespace sy_cuda {
namespace {

constexpr uint64_t kLtWorkspaceBytes = 32ull << 20;  // cuBLAS's recommendation for Hopper
constexpr int64_t kTile = 64;                        // matches kTileM / kTileN in matmul.cu

Status workspace_for(const OpContext& ctx, CudaBuffer** out) {
  if (ctx.queue.lt_workspace == nullptr) {
    SY_CUDA_RETURN_IF_ERROR(
        ctx.device.allocator->allocate(kLtWorkspaceBytes, &ctx.queue.lt_workspace));
  }
  SY_CUDA_RETURN_IF_ERROR(ctx.device.allocator->use_on(ctx.queue.lt_workspace, ctx.queue.stream));
  *out = ctx.queue.lt_workspace;
  return ok_status();
}

Status run_cublaslt(const OpContext& ctx, const LtPlan& plan) {
  CudaBuffer* workspace = nullptr;
  SY_CUDA_RETURN_IF_ERROR(workspace_for(ctx, &workspace));
  const sy_tensor_desc& a = ctx.in(0);
  const uint64_t esize = element_size(a.dtype);
  int64_t outer_count = 1;
  for (uint32_t d = 0; d < plan.outer_rank; ++d) outer_count *= plan.outer_shape[d];
  for (int64_t outer = 0; outer < outer_count; ++outer) {
    int64_t rest = outer, a_off = 0, b_off = 0, out_off = 0;
    for (int d = static_cast<int>(plan.outer_rank) - 1; d >= 0; --d) {
      const int64_t c = rest % plan.outer_shape[d];
      rest /= plan.outer_shape[d];
      a_off += c * plan.outer_a[d];
      b_off += c * plan.outer_b[d];
      out_off += c * plan.outer_out[d];
    }
    SY_CUDA_RETURN_IF_ERROR(ctx.device.lt->run(
        plan, a.dtype, ctx.device.options.tf32, ctx.address(ctx.in(1)) + b_off * esize,
        ctx.address(a) + a_off * esize, ctx.address(ctx.out(0)) + out_off * esize, ctx.queue.stream,
        workspace->ptr, kLtWorkspaceBytes));
  }
  return ok_status();
}

SyTensorArg batch_view(uint64_t address, uint32_t dtype, const MatmulGeometry& g,
                       const int64_t* strides) {
  SyTensorArg t{};
  t.data = address;
  t.dtype = static_cast<int32_t>(dtype);
  t.rank = static_cast<int32_t>(g.batch_rank);
  for (uint32_t d = 0; d < g.batch_rank; ++d) {
    t.shape[d] = g.batch_shape[d];
    t.strides[d] = strides[d];
  }
  return t;
}

Status run_tiled(const OpContext& ctx, const MatmulGeometry& g) {
  const uint32_t dtype = ctx.in(0).dtype;
  SyMatmulArgs a{};
  a.a_batch = batch_view(ctx.address(ctx.in(0)), dtype, g, g.a_batch);
  a.b_batch = batch_view(ctx.address(ctx.in(1)), dtype, g, g.b_batch);
  a.out_batch = batch_view(ctx.address(ctx.out(0)), dtype, g, g.out_batch);
  if (g.has_bias) {
    a.bias_batch = batch_view(ctx.address(ctx.in(2)), dtype, g, g.bias_batch);
    a.has_bias = 1;
    a.bias_stride_m = g.bias_stride_m;
    a.bias_stride_n = g.bias_stride_n;
  }
  a.m = g.m;
  a.n = g.n;
  a.k = g.k;
  a.a_stride_m = g.a_stride_m;
  a.a_stride_k = g.a_stride_k;
  a.b_stride_k = g.b_stride_k;
  a.b_stride_n = g.b_stride_n;
  a.out_stride_m = g.out_stride_m;
  a.out_stride_n = g.out_stride_n;
  const int64_t m_tiles = (g.m + kTile - 1) / kTile;
  const int64_t n_tiles = (g.n + kTile - 1) / kTile;
  if (m_tiles > 65535 || n_tiles > 0x7fffffff) {
    return unimplemented("MATMUL: M = " + std::to_string(g.m) +
                         " is too large for the tiled kernel");
  }
  int64_t batches = 1;
  for (uint32_t d = 0; d < g.batch_rank; ++d) batches *= g.batch_shape[d];
  for (int64_t begin = 0; begin < batches; begin += 65535) {
    LaunchShape shape;
    shape.grid_x = static_cast<uint32_t>(n_tiles);
    shape.grid_y = static_cast<uint32_t>(m_tiles);
    shape.grid_z = static_cast<uint32_t>(std::min<int64_t>(batches - begin, 65535));
    shape.block = 256;
    a.batch_begin = begin;
    SY_CUDA_RETURN_IF_ERROR(ctx.launch(Kernel::sy_matmul_tiled, shape, a));
  }
  return ok_status();
}

}  // namespace

Status run_matmul(const OpContext& ctx) {
  MatmulGeometry g;
  SY_CUDA_RETURN_IF_ERROR(matmul_geometry(ctx.call, &g));
  const sy_tensor_desc& out = ctx.out(0);
  if (numel(out) == 0) return ok_status();
  const sy_tensor_desc* bias = g.has_bias ? &ctx.in(2) : nullptr;
  if (g.k == 0) {  // an empty sum: out = 0 (+ bias)
    SY_CUDA_RETURN_IF_ERROR(enqueue_fill(ctx, out, 0.0));
    return bias != nullptr ? enqueue_binary(ctx, SY_OP_ADD, out, out, bias, 0.0f) : ok_status();
  }
  LtPlan plan;
  std::string why_not;
  if (ctx.device.lt != nullptr && plan_cublaslt(g, &plan, &why_not) &&
      run_cublaslt(ctx, plan).ok()) {
    return bias != nullptr ? enqueue_binary(ctx, SY_OP_ADD, out, out, bias, 0.0f) : ok_status();
  }
  return run_tiled(ctx, g);
}

}  // namespace sy_cuda
