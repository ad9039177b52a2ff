// COPY (45), FILL (46) and RANDOM_UNIFORM / RANDOM_NORMAL (47-48).
#include "ops.h"

namespace sy_cuda {

Status run_copy(const OpContext& ctx) {
  SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, 1, 1));
  SY_CUDA_RETURN_IF_ERROR(expect_same_shape(ctx, ctx.in(0), "x", ctx.out(0), "out"));
  const sy_tensor_desc& x = ctx.in(0);
  const sy_tensor_desc& out = ctx.out(0);
  bool identical =
      x.buffer == out.buffer && x.offset_bytes == out.offset_bytes && x.dtype == out.dtype;
  for (uint32_t d = 0; identical && d < x.rank; ++d) identical = x.strides[d] == out.strides[d];
  if (identical) return ok_status();  // copying a tensor onto itself changes nothing
  return enqueue_copy(ctx, out, ctx.address(out), x, ctx.address(x));
}

Status run_fill(const OpContext& ctx) {
  SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, 0, 1));
  return enqueue_fill(ctx, ctx.out(0), ctx.call.params.fill.value);
}

Status run_random(const OpContext& ctx) {
  SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, 0, 1));
  const sy_tensor_desc& out = ctx.out(0);
  if (!is_float_dtype(out.dtype)) {
    return invalid_argument(std::string(ctx.name) + ": out must be f32, f16 or bf16, got " +
                            describe(out));
  }
  const sy_random_params& p = ctx.call.params.random;
  if (ctx.call.op == SY_OP_RANDOM_NORMAL && !(p.b >= 0.0)) {  // as the reference rejects it
    return invalid_argument(std::string(ctx.name) +
                            ": the standard deviation (random.b) must be >= 0, got " +
                            std::to_string(p.b));
  }
  SyRandomArgs args{};
  args.iter = make_iter(out.rank, out.shape);
  if (args.iter.numel == 0) return ok_status();
  args.out = operand(ctx.address(out), out.dtype, out.strides, out.rank);
  args.seed = p.seed;
  args.offset = p.offset;
  args.a = static_cast<float>(p.a);
  args.b = static_cast<float>(p.b);
  args.normal = ctx.call.op == SY_OP_RANDOM_NORMAL ? 1 : 0;
  SyOperand* ops[1] = {&args.out};
  coalesce(&args.iter, ops, 1);  // keeps row-major order, so the linear index is the logical one
  return ctx.launch(Kernel::sy_random, ctx.linear(args.iter.numel), args);
}

}  // namespace sy_cuda
