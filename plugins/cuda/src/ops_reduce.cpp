// REDUCE_SUM / REDUCE_MEAN / REDUCE_MAX / ARGMAX (24-27): one group of threads per output
// element, the reduced axes walked with x's strides.
#include "ops.h"

namespace sy_cuda {
namespace {

Status check_output_shape(const OpContext& ctx, const int* kept, int kept_count) {
  const sy_tensor_desc& x = ctx.in(0);
  const sy_tensor_desc& out = ctx.out(0);
  const bool keep_dims = ctx.call.params.reduce.keep_dims != 0;
  const uint32_t mask = ctx.call.params.reduce.axes_mask;
  int64_t expected[SY_MAX_RANK] = {};
  uint32_t rank = 0;
  if (keep_dims) {
    for (uint32_t d = 0; d < x.rank; ++d) expected[rank++] = (mask >> d & 1u) ? 1 : x.shape[d];
  } else {
    for (int i = 0; i < kept_count; ++i) expected[rank++] = x.shape[kept[i]];
  }
  bool same = out.rank == rank;
  for (uint32_t d = 0; same && d < rank; ++d) same = out.shape[d] == expected[d];
  if (same) return ok_status();
  return invalid_argument(std::string(ctx.name) + ": out " + shape_text(out) + " should be " +
                          shape_text(rank, expected) + " for x " + shape_text(x) +
                          " with axes_mask " + std::to_string(mask) +
                          (keep_dims ? " and keep_dims" : ""));
}

Status check_call(const OpContext& ctx) {
  SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, 1, 1));
  const sy_tensor_desc& x = ctx.in(0);
  const sy_tensor_desc& out = ctx.out(0);
  const uint32_t mask = ctx.call.params.reduce.axes_mask;
  if (x.rank < 32 && (mask >> x.rank) != 0) {
    return invalid_argument(std::string(ctx.name) + ": axes_mask " + std::to_string(mask) +
                            " names an axis beyond x's rank " + std::to_string(x.rank));
  }
  if (ctx.call.op == SY_OP_ARGMAX) {
    if (!is_float_dtype(x.dtype) || (out.dtype != SY_DTYPE_I32 && out.dtype != SY_DTYPE_I64)) {
      return invalid_argument("ARGMAX: x must be f32/f16/bf16 and out i32/i64, got x " +
                              describe(x) + ", out " + describe(out));
    }
    if (mask == 0 || (mask & (mask - 1)) != 0) {
      return invalid_argument("ARGMAX: axes_mask " + std::to_string(mask) +
                              " must select exactly one axis");
    }
    return ok_status();
  }
  return expect_float_same(ctx, {&x, &out});
}

}  // namespace

Status run_reduce(const OpContext& ctx) {
  SY_CUDA_RETURN_IF_ERROR(check_call(ctx));
  const sy_tensor_desc& x = ctx.in(0);
  const sy_tensor_desc& out = ctx.out(0);
  const uint32_t mask = ctx.call.params.reduce.axes_mask;
  int kept[SY_MAX_RANK], reduced[SY_MAX_RANK];
  int kept_count = 0, reduced_count = 0;
  int64_t reduced_elements = 1;
  for (uint32_t d = 0; d < x.rank; ++d) {
    if (mask >> d & 1u) {
      reduced[reduced_count++] = static_cast<int>(d);
      reduced_elements *= x.shape[d];
    } else {
      kept[kept_count++] = static_cast<int>(d);
    }
  }
  SY_CUDA_RETURN_IF_ERROR(check_output_shape(ctx, kept, kept_count));
  const int64_t outputs = numel(out);
  if (outputs == 0) return ok_status();
  if (reduced_elements == 0 && (ctx.call.op == SY_OP_REDUCE_MAX || ctx.call.op == SY_OP_ARGMAX)) {
    return invalid_argument(std::string(ctx.name) + ": x " + shape_text(x) +
                            " has an empty extent along the reduced axes");
  }
  SyReduceArgs args{};
  args.in_kept = axes_view(ctx.address(x), x, kept, kept_count);
  // The output view walks the kept axes in the same order, skipping keep_dims' size-1 axes.
  int out_axes[SY_MAX_RANK];
  for (int i = 0; i < kept_count; ++i) {
    out_axes[i] = ctx.call.params.reduce.keep_dims ? kept[i] : i;
  }
  args.out_kept = axes_view(ctx.address(out), out, out_axes, kept_count);
  args.in_reduced = axes_view(0, x, reduced, reduced_count);
  args.kept_count = outputs;
  args.reduced_count = reduced_elements;
  args.op = static_cast<int32_t>(ctx.call.op);
  args.group_size = group_size_for(reduced_elements);
  const uint32_t threads = static_cast<uint32_t>(std::max(args.group_size, 256));
  const int64_t groups_per_block = threads / args.group_size;
  LaunchShape shape = ctx.linear((outputs + groups_per_block - 1) / groups_per_block, 1);
  shape.block = threads;
  return ctx.launch(Kernel::sy_reduce, shape, args);
}

}  // namespace sy_cuda
