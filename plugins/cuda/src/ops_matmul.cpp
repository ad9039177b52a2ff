// MATMUL (0): cuBLASLt when it is available and the layout allows it, else the tiled kernel.
#include <cstdio>
#include <mutex>
#include <string>

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
  SY_CUDA_RETURN_IF_ERROR(ctx.use(ctx.queue.lt_workspace));
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

std::string shape_text(const MatmulGeometry& g) {
  int64_t batches = 1;
  for (uint32_t d = 0; d < g.batch_rank; ++d) batches *= g.batch_shape[d];
  return std::to_string(batches) + " x [" + std::to_string(g.m) + " x " + std::to_string(g.k) +
         "] @ [" + std::to_string(g.k) + " x " + std::to_string(g.n) + "]";
}

// A layout cuBLASLt accepted but then failed on is not silent: the first such failure of a device
// is written to stderr (later ones only counted in the settings line's matmuls_kernel).
void note_cublaslt_failure(CudaDevice& device, const MatmulGeometry& g, const std::string& why) {
  std::lock_guard<std::mutex> lock(device.lt_failure_mutex);
  if (!device.first_lt_failure.empty()) return;
  device.first_lt_failure = "MATMUL " + shape_text(g) + ": " + why;
  std::fprintf(stderr, "switchyard cuda: cuBLASLt failed on %s; %s\n",
               device.first_lt_failure.c_str(),
               device.options.matmul == MatmulPath::kCublaslt
                   ? "the cuda option matmul=cublaslt makes that an error"
                   : "this and later such matmuls run on the plugin's own kernel");
}

// Batch axes cuBLASLt cannot take as one strided batch (attention's [B, H] over a [B, T, H, D]
// projection) become one cuBLASLt call per outer index. For small products those calls cost more
// than the work: the tiled kernel does the whole batch in one launch (grid z = batch), and in a
// captured graph that is one node instead of B.
bool looped_small_products(const MatmulGeometry& g, const LtPlan& plan) {
  constexpr int64_t kSmallProduct = int64_t{1} << 24;  // m * n * k, e.g. 256 x 256 x 256
  int64_t outer_count = 1;
  for (uint32_t d = 0; d < plan.outer_rank; ++d) outer_count *= plan.outer_shape[d];
  return outer_count > 1 && g.m * g.n * g.k <= kSmallProduct;
}

}  // namespace

Status run_product(const OpContext& ctx, const sy_tensor_desc& a, const sy_tensor_desc& b,
                   const sy_tensor_desc& out, bool transpose_b, const char* name) {
  sy_op_call call{};
  call.op = SY_OP_MATMUL;
  call.num_inputs = 2;
  call.num_outputs = 1;
  call.inputs[0] = a;
  call.inputs[1] = b;
  call.outputs[0] = out;
  call.params.matmul.transpose_b = transpose_b ? 1 : 0;
  return run_matmul(OpContext{ctx.device, ctx.queue, call, name});
}

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
  CudaDevice& device = ctx.device;
  const MatmulPath path = device.options.matmul;
  if (device.lt != nullptr) {
    LtPlan plan;
    std::string why_not;
    if (plan_cublaslt(g, &plan, &why_not) &&
        !(path == MatmulPath::kAuto && looped_small_products(g, plan))) {
      const Status ran = run_cublaslt(ctx, plan);
      if (ran.ok()) {
        device.matmuls_cublaslt.fetch_add(1, std::memory_order_relaxed);
        return bias != nullptr ? enqueue_binary(ctx, SY_OP_ADD, out, out, bias, 0.0f) : ok_status();
      }
      why_not = ran.message();
      note_cublaslt_failure(device, g, why_not);
    }
    if (path == MatmulPath::kCublaslt) {
      return unimplemented("MATMUL " + shape_text(g) + ": cuBLASLt cannot run it (" + why_not +
                           ") and the cuda option matmul=cublaslt forbids the plugin's kernel");
    }
  }
  device.matmuls_kernel.fetch_add(1, std::memory_order_relaxed);
  return run_tiled(ctx, g);
}

}  // namespace sy_cuda
