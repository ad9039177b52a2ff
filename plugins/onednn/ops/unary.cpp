// Elementwise unary ops and their backward ops (docs/ops.md sections 3-4).
//
// Plain loops for small tensors and for the cheap ops (relu, neg, abs, sign, relu backward, whose
// exact NaN rules oneDNN does not promise); oneDNN eltwise for large transcendental ones.
#include "ops/elementwise_functors.h"
#include "ops/elementwise_kernels.h"
#include "ops/eltwise_dnnl.h"
#include "ops/ops.h"

namespace sy_onednn {
namespace {

// Elements per thread worth waking a worker for: fewer for the libm-bound ops.
int64_t min_elements_per_thread(uint32_t op) {
  switch (op) {
    case SY_OP_RELU:
    case SY_OP_NEG:
    case SY_OP_ABS:
    case SY_OP_SIGN:
    case SY_OP_RELU_BACKWARD:
    case SY_OP_SIGMOID_BACKWARD:
    case SY_OP_TANH_BACKWARD:
      return kMinMemoryBoundElements;
    default:
      return kMinTranscendentalElements;
  }
}

template <typename Fn>
void with_unary_functor(uint32_t op, Fn&& fn) {
  switch (op) {
    case SY_OP_RELU:
      fn(fn::Relu{});
      break;
    case SY_OP_GELU:
      fn(fn::Gelu{});
      break;
    case SY_OP_SIGMOID:
      fn(fn::Sigmoid{});
      break;
    case SY_OP_TANH:
      fn(fn::Tanh{});
      break;
    case SY_OP_EXP:
      fn(fn::Exp{});
      break;
    case SY_OP_LOG:
      fn(fn::Log{});
      break;
    case SY_OP_SQRT:
      fn(fn::Sqrt{});
      break;
    case SY_OP_NEG:
      fn(fn::Neg{});
      break;
    case SY_OP_ABS:
      fn(fn::Abs{});
      break;
    case SY_OP_SIGN:
      fn(fn::Sign{});
      break;
    default:
      break;
  }
}

template <typename Fn>
void with_backward_functor(uint32_t op, Fn&& fn) {
  switch (op) {
    case SY_OP_RELU_BACKWARD:
      fn(fn::ReluBackward{});
      break;
    case SY_OP_GELU_BACKWARD:
      fn(fn::GeluBackward{});
      break;
    case SY_OP_SIGMOID_BACKWARD:
      fn(fn::SigmoidBackward{});
      break;
    case SY_OP_TANH_BACKWARD:
      fn(fn::TanhBackward{});
      break;
    default:
      break;
  }
}

}  // namespace

void run_unary(OpContext& ctx) {
  ctx.require_counts(1, 1);
  const TensorView& x = ctx.in[0];
  const TensorView& out = ctx.out[0];
  ctx.require_float(x, "x");
  ctx.require_same_dtype(x, "x", out, "out");
  ctx.require_same_shape(x, "x", out, "out");
  if (out.numel() == 0 || try_eltwise_dnnl(ctx)) return;
  const int threads = ctx.threads_for(out.numel(), min_elements_per_thread(ctx.op));
  visit_float_dtype(x.dtype, [&](auto type_tag) {
    using T = decltype(type_tag);
    with_unary_functor(ctx.op, [&](const auto& f) { run_unary_kernel<T>(out, x, threads, f); });
  });
}

void run_unary_backward(OpContext& ctx) {
  ctx.require_counts(2, 1);
  const TensorView& grad_out = ctx.in[0];
  const TensorView& saved = ctx.in[1];
  const TensorView& grad_in = ctx.out[0];
  ctx.require_float(grad_out, "grad_out");
  ctx.require_same_dtype(grad_out, "grad_out", saved, "saved");
  ctx.require_same_dtype(grad_out, "grad_out", grad_in, "grad_in");
  ctx.require_same_shape(grad_out, "grad_out", saved, "saved");
  ctx.require_same_shape(grad_out, "grad_out", grad_in, "grad_in");
  if (grad_in.numel() == 0 || try_eltwise_dnnl(ctx)) return;
  const int threads = ctx.threads_for(grad_in.numel(), min_elements_per_thread(ctx.op));
  visit_float_dtype(grad_in.dtype, [&](auto type_tag) {
    using T = decltype(type_tag);
    with_backward_functor(
        ctx.op, [&](const auto& f) { run_binary_kernel<T>(grad_in, grad_out, saved, threads, f); });
  });
}

}  // namespace sy_onednn
