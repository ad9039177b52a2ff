// SOFTMAX / LOG_SOFTMAX and their backward ops (28-31), CROSS_ENTROPY and its backward (32-33).
#include "ops.h"

namespace sy_cuda {
namespace {

// The tensor as rows: every axis but `axis`, plus the stride along `axis`.
SyTensorArg rows_view(uint64_t address, const sy_tensor_desc& t, int axis, int64_t* axis_stride) {
  int axes[SY_MAX_RANK];
  int count = 0;
  for (int d = 0; d < static_cast<int>(t.rank); ++d) {
    if (d != axis) axes[count++] = d;
  }
  *axis_stride = t.strides[axis];
  return axes_view(address, t, axes, count);
}

LaunchShape row_launch(const OpContext& ctx, int64_t rows, int group_size) {
  const uint32_t threads = static_cast<uint32_t>(std::max(group_size, 256));
  const int64_t groups_per_block = threads / group_size;
  LaunchShape shape = ctx.linear((rows + groups_per_block - 1) / groups_per_block, 1);
  shape.block = threads;
  return shape;
}

}  // namespace

Status run_softmax(const OpContext& ctx) {
  const bool backward =
      ctx.call.op == SY_OP_SOFTMAX_BACKWARD || ctx.call.op == SY_OP_LOG_SOFTMAX_BACKWARD;
  SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, backward ? 2 : 1, 1));
  const sy_tensor_desc& in0 = ctx.in(0);
  const sy_tensor_desc& in1 = backward ? ctx.in(1) : ctx.in(0);
  const sy_tensor_desc& out = ctx.out(0);
  SY_CUDA_RETURN_IF_ERROR(expect_float_same(ctx, {&in0, &in1, &out}));
  SY_CUDA_RETURN_IF_ERROR(expect_same_shape(ctx, in0, backward ? "grad_out" : "x", out, "out"));
  SY_CUDA_RETURN_IF_ERROR(expect_same_shape(ctx, in0, backward ? "grad_out" : "x", in1, "y"));
  const int32_t axis = ctx.call.params.softmax.axis;
  if (axis < 0 || static_cast<uint32_t>(axis) >= in0.rank) {
    return invalid_argument(std::string(ctx.name) + ": axis " + std::to_string(axis) +
                            " is outside [0, " + std::to_string(in0.rank) + ") for " +
                            shape_text(in0));
  }
  if (numel(out) == 0) return ok_status();
  SyRowArgs args{};
  args.in0 = rows_view(ctx.address(in0), in0, axis, &args.in0_axis_stride);
  args.in1 = rows_view(ctx.address(in1), in1, axis, &args.in1_axis_stride);
  args.out = rows_view(ctx.address(out), out, axis, &args.out_axis_stride);
  args.axis_length = in0.shape[axis];
  args.rows = numel(in0) / args.axis_length;
  args.op = static_cast<int32_t>(ctx.call.op);
  args.group_size = group_size_for(args.axis_length);
  return ctx.launch(Kernel::sy_softmax, row_launch(ctx, args.rows, args.group_size), args);
}

namespace {

Status check_cross_entropy(const OpContext& ctx, bool backward) {
  SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, backward ? 3 : 2, 1));
  const sy_tensor_desc& logits = ctx.in(0);
  const sy_tensor_desc& labels = ctx.in(1);
  const sy_tensor_desc& out = ctx.out(0);
  if (ctx.call.params.cross_entropy.label_smoothing != 0.0) {
    return invalid_argument(std::string(ctx.name) + ": label_smoothing must be 0 in ABI 1, got " +
                            std::to_string(ctx.call.params.cross_entropy.label_smoothing));
  }
  if (ctx.call.params.cross_entropy.reduction > 1) {
    return invalid_argument(std::string(ctx.name) + ": reduction " +
                            std::to_string(ctx.call.params.cross_entropy.reduction) +
                            " is neither 0 (mean) nor 1 (sum)");
  }
  if (logits.rank != 2 || labels.rank != 1 || labels.shape[0] != logits.shape[0] ||
      (labels.dtype != SY_DTYPE_I32 && labels.dtype != SY_DTYPE_I64)) {
    return invalid_argument(std::string(ctx.name) +
                            ": expected logits [N, C] and i32/i64 labels [N], got logits " +
                            describe(logits) + ", labels " + describe(labels));
  }
  if (backward) {
    SY_CUDA_RETURN_IF_ERROR(expect_float_same(ctx, {&logits, &ctx.in(2), &out}));
    if (ctx.in(2).rank != 0) {
      return invalid_argument("CROSS_ENTROPY_BACKWARD: grad_loss must be rank 0, got " +
                              describe(ctx.in(2)));
    }
    return expect_same_shape(ctx, logits, "logits", out, "grad_logits");
  }
  SY_CUDA_RETURN_IF_ERROR(expect_float_same(ctx, {&logits, &out}));
  if (out.rank != 0)
    return invalid_argument("CROSS_ENTROPY: loss must be rank 0, got " + describe(out));
  return ok_status();
}

Status enqueue_loss_sum(const OpContext& ctx, CudaBuffer* losses, int64_t rows) {
  SyReduceArgs reduce{};
  reduce.in_kept.data = losses->ptr;
  reduce.in_kept.dtype = SY_DTYPE_F32;
  reduce.out_kept = tensor_arg(ctx.address(ctx.out(0)), ctx.out(0));
  reduce.in_reduced.rank = 1;
  reduce.in_reduced.shape[0] = rows;
  reduce.in_reduced.strides[0] = 1;
  reduce.kept_count = 1;
  reduce.reduced_count = rows;
  reduce.op = ctx.call.params.cross_entropy.reduction == 0 ? SY_OP_REDUCE_MEAN : SY_OP_REDUCE_SUM;
  reduce.group_size = 1024;
  LaunchShape one_block;
  one_block.block = 1024;
  return ctx.launch(Kernel::sy_reduce, one_block, reduce);
}

}  // namespace

Status run_cross_entropy(const OpContext& ctx) {
  const bool backward = ctx.call.op == SY_OP_CROSS_ENTROPY_BACKWARD;
  SY_CUDA_RETURN_IF_ERROR(check_cross_entropy(ctx, backward));
  const sy_tensor_desc& logits = ctx.in(0);
  const int64_t rows = logits.shape[0];
  SyCrossEntropyArgs args{};
  SyRowArgs& r = args.rows;
  r.in0 = rows_view(ctx.address(logits), logits, 1, &r.in0_axis_stride);
  r.in1 = r.in0;
  r.in1_axis_stride = r.in0_axis_stride;
  r.rows = rows;
  r.axis_length = logits.shape[1];
  r.op = static_cast<int32_t>(ctx.call.op);
  r.group_size = group_size_for(r.axis_length);
  r.divisor = ctx.call.params.cross_entropy.reduction == 0 ? static_cast<float>(rows) : 1.0f;
  args.labels = tensor_arg(ctx.address(ctx.in(1)), ctx.in(1));
  if (backward) {
    if (numel(ctx.out(0)) == 0) return ok_status();
    r.out = rows_view(ctx.address(ctx.out(0)), ctx.out(0), 1, &r.out_axis_stride);
    args.grad_loss = operand(ctx.address(ctx.in(2)), ctx.in(2).dtype, ctx.in(2).strides, 0);
    return ctx.launch(Kernel::sy_cross_entropy, row_launch(ctx, rows, r.group_size), args);
  }
  CudaBuffer* losses = nullptr;
  SY_CUDA_RETURN_IF_ERROR(ctx.scratch(static_cast<uint64_t>(rows) * sizeof(float), &losses));
  r.out.data = losses->ptr;
  r.out.dtype = SY_DTYPE_F32;
  r.out.rank = 1;
  r.out.shape[0] = rows;
  r.out.strides[0] = 1;
  Status status =
      rows > 0 ? ctx.launch(Kernel::sy_cross_entropy, row_launch(ctx, rows, r.group_size), args)
               : ok_status();
  if (status.ok()) status = enqueue_loss_sum(ctx, losses, rows);
  ctx.release(losses);
  return status;
}

}  // namespace sy_cuda
