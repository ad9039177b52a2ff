// GATHER (43, index_select) and SCATTER_ADD (44, index_add_) along one axis.
#include "ops.h"

namespace sy_cuda {
namespace {

// `data` must be `other` with the extent of `axis` replaced by the number of indices.
Status check_index_call(const OpContext& ctx, const sy_tensor_desc& data, const char* data_role,
                        const sy_tensor_desc& other, const char* other_role) {
  SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, 2, 1));
  const sy_tensor_desc& indices = ctx.in(1);
  const int32_t axis = ctx.call.params.index.axis;
  if (axis < 0 || static_cast<uint32_t>(axis) >= other.rank) {
    return invalid_argument(std::string(ctx.name) + ": axis " + std::to_string(axis) +
                            " is outside [0, " + std::to_string(other.rank) + ") for " +
                            other_role + " " + shape_text(other));
  }
  if (indices.rank != 1 || (indices.dtype != SY_DTYPE_I32 && indices.dtype != SY_DTYPE_I64)) {
    return invalid_argument(std::string(ctx.name) +
                            ": indices must be a rank-1 i32/i64 tensor, got " + describe(indices));
  }
  if (data.dtype != other.dtype) {
    return invalid_argument(std::string(ctx.name) + ": " + data_role + " " + describe(data) +
                            " and " + other_role + " " + describe(other) + " must share a dtype");
  }
  bool ok = data.rank == other.rank;
  for (uint32_t d = 0; ok && d < data.rank; ++d) {
    ok = data.shape[d] == (static_cast<int32_t>(d) == axis ? indices.shape[0] : other.shape[d]);
  }
  if (ok) return ok_status();
  return invalid_argument(std::string(ctx.name) + ": " + data_role + " " + shape_text(data) +
                          " should be " + other_role + " " + shape_text(other) + " with axis " +
                          std::to_string(axis) + " of length " + std::to_string(indices.shape[0]));
}

SyIndexArgs index_args(const OpContext& ctx, const sy_tensor_desc& iterated,
                       uint64_t indexed_address, const sy_tensor_desc& indexed) {
  SyIndexArgs a{};
  a.iterated = tensor_arg(ctx.address(iterated), iterated);
  a.indexed = tensor_arg(indexed_address, indexed);
  a.indices = tensor_arg(ctx.address(ctx.in(1)), ctx.in(1));
  a.numel = numel(iterated);
  a.axis = ctx.call.params.index.axis;
  a.indexed_axis_size = indexed.shape[a.axis];
  return a;
}

// Adds src into the f32 or integer tensor `target` at target_address.
Status launch_scatter_add(const OpContext& ctx, const sy_tensor_desc& src, uint64_t target_address,
                          const sy_tensor_desc& target) {
  // Float atomics add in whatever order threads arrive; a deterministic device gathers per output
  // element instead (integer addition is associative, so integers keep the atomics).
  if (ctx.device.options.deterministic && target.dtype == SY_DTYPE_F32) {
    SyIndexArgs a{};
    a.iterated = tensor_arg(target_address, target);
    a.indexed = tensor_arg(ctx.address(src), src);
    a.indices = tensor_arg(ctx.address(ctx.in(1)), ctx.in(1));
    a.numel = numel(target);
    a.axis = ctx.call.params.index.axis;
    a.indexed_axis_size = target.shape[a.axis];
    return ctx.launch(Kernel::sy_scatter_add_ordered, ctx.linear(numel(target)), a);
  }
  return ctx.launch(Kernel::sy_scatter_add, ctx.linear(numel(src)),
                    index_args(ctx, src, target_address, target));
}

Status run_scatter_add(const OpContext& ctx) {
  const sy_tensor_desc& src = ctx.in(0);
  const sy_tensor_desc& out = ctx.out(0);
  SY_CUDA_RETURN_IF_ERROR(check_index_call(ctx, src, "src", out, "out"));
  if (numel(src) == 0) return ok_status();
  if (out.dtype != SY_DTYPE_F16 && out.dtype != SY_DTYPE_BF16) {
    return launch_scatter_add(ctx, src, ctx.address(out), out);
  }
  // f16/bf16: every output element gathers its contributions in f32 and is rounded once.
  CudaBuffer* wide = nullptr;
  SY_CUDA_RETURN_IF_ERROR(ctx.scratch(static_cast<uint64_t>(numel(out)) * sizeof(float), &wide));
  const sy_tensor_desc wide_desc = contiguous_f32(out, reinterpret_cast<sy_buffer>(wide));
  Status status = enqueue_copy(ctx, wide_desc, wide->ptr, out, ctx.address(out));
  if (status.ok()) {
    status = launch_scatter_add(ctx, src, wide->ptr, wide_desc);
  }
  if (status.ok()) status = enqueue_copy(ctx, out, ctx.address(out), wide_desc, wide->ptr);
  ctx.release(wide);
  return status;
}

}  // namespace

Status run_index(const OpContext& ctx) {
  if (ctx.call.op == SY_OP_SCATTER_ADD) return run_scatter_add(ctx);
  const sy_tensor_desc& x = ctx.in(0);
  const sy_tensor_desc& out = ctx.out(0);
  SY_CUDA_RETURN_IF_ERROR(check_index_call(ctx, out, "out", x, "x"));
  if (numel(out) == 0) return ok_status();
  return ctx.launch(Kernel::sy_gather, ctx.linear(numel(out)),
                    index_args(ctx, out, ctx.address(x), x));
}

}  // namespace sy_cuda
