// Elementwise unary (1-10), unary backward (11-14) and binary (15-23) ops: validation, then one
// sy_elementwise launch over the coalesced output shape.
#include "ops.h"

namespace sy_cuda {
namespace {

Status check_binary_shape(const OpContext& ctx) {
  const sy_tensor_desc& a = ctx.in(0);
  const sy_tensor_desc& out = ctx.out(0);
  if (ctx.call.params.binary.use_scalar) return expect_same_shape(ctx, a, "a", out, "out");
  const sy_tensor_desc& b = ctx.in(1);
  uint32_t rank = 0;
  int64_t shape[SY_MAX_RANK] = {};
  if (!broadcast_shapes(a.rank, a.shape, b.rank, b.shape, &rank, shape)) {
    return invalid_argument(std::string(ctx.name) + ": a " + shape_text(a) + " and b " +
                            shape_text(b) + " do not broadcast");
  }
  bool same = rank == out.rank;
  for (uint32_t d = 0; same && d < rank; ++d) same = shape[d] == out.shape[d];
  if (!same) {
    return invalid_argument(std::string(ctx.name) + ": out " + shape_text(out) + " should be " +
                            shape_text(rank, shape) + ", the broadcast of a " + shape_text(a) +
                            " and b " + shape_text(b));
  }
  return ok_status();
}

}  // namespace

Status run_elementwise(const OpContext& ctx) {
  const uint32_t op = ctx.call.op;
  if (op <= SY_OP_SIGN) {
    SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, 1, 1));
    SY_CUDA_RETURN_IF_ERROR(expect_float_same(ctx, {&ctx.in(0), &ctx.out(0)}));
    SY_CUDA_RETURN_IF_ERROR(expect_same_shape(ctx, ctx.in(0), "x", ctx.out(0), "out"));
    return enqueue_binary(ctx, static_cast<int32_t>(op), ctx.out(0), ctx.in(0), nullptr, 0.0f);
  }
  if (op <= SY_OP_TANH_BACKWARD) {
    SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, 2, 1));
    SY_CUDA_RETURN_IF_ERROR(expect_float_same(ctx, {&ctx.in(0), &ctx.in(1), &ctx.out(0)}));
    SY_CUDA_RETURN_IF_ERROR(expect_same_shape(ctx, ctx.in(0), "grad_out", ctx.in(1), "saved"));
    SY_CUDA_RETURN_IF_ERROR(expect_same_shape(ctx, ctx.in(0), "grad_out", ctx.out(0), "grad_in"));
    return enqueue_binary(ctx, static_cast<int32_t>(op), ctx.out(0), ctx.in(0), &ctx.in(1), 0.0f);
  }
  const bool scalar = ctx.call.params.binary.use_scalar != 0;
  SY_CUDA_RETURN_IF_ERROR(expect_counts(ctx, scalar ? 1 : 2, 1));
  if (scalar) {
    SY_CUDA_RETURN_IF_ERROR(expect_float_same(ctx, {&ctx.in(0), &ctx.out(0)}));
  } else {
    SY_CUDA_RETURN_IF_ERROR(expect_float_same(ctx, {&ctx.in(0), &ctx.in(1), &ctx.out(0)}));
  }
  SY_CUDA_RETURN_IF_ERROR(check_binary_shape(ctx));
  return enqueue_binary(ctx, static_cast<int32_t>(op), ctx.out(0), ctx.in(0),
                        scalar ? nullptr : &ctx.in(1),
                        static_cast<float>(ctx.call.params.binary.scalar));
}

}  // namespace sy_cuda
