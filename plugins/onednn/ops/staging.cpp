// f16 and bf16 through f32 for the oneDNN-backed ops. Converting to f32, computing and rounding
// the results back once is exactly the storage-type semantics of docs/ops.md (compute in f32,
// round once), so staging changes speed, never results beyond f32 rounding.
#include <oneapi/dnnl/dnnl.hpp>

#include "ops/ops.h"

namespace sy_onednn {

void run_through_f32(OpContext& ctx, void (*runner)(OpContext&), uint32_t dtype) {
  OpContext staged(ctx.device, ctx.queue, ctx.op, ctx.params);
  staged.num_inputs = ctx.num_inputs;
  staged.num_outputs = ctx.num_outputs;
  for (int i = 0; i < ctx.num_inputs; ++i) {
    const TensorView& in = ctx.in[i];
    staged.in[i] = in.dtype == dtype ? dense_copy(ctx, in, SY_DTYPE_F32) : in;
  }
  for (int i = 0; i < ctx.num_outputs; ++i) {
    const TensorView& out = ctx.out[i];
    staged.out[i] = out.dtype == dtype ? ctx.scratch_view(SY_DTYPE_F32, out.rank, out.shape) : out;
  }
  runner(staged);
  for (int i = 0; i < ctx.num_outputs; ++i) {
    if (ctx.out[i].dtype == dtype) {
      copy_view(staged.out[i], ctx.out[i], ctx.threads_for(ctx.out[i].numel()));
    }
  }
}

void run_dnnl_backed(OpContext& ctx, void (*runner)(OpContext&)) {
  const uint32_t dtype = ctx.in[0].dtype;
  if (dtype == SY_DTYPE_F16) return run_through_f32(ctx, runner, dtype);
  if (dtype != SY_DTYPE_BF16) return runner(ctx);
  std::atomic<bool>& staged = ctx.device.bf16_through_f32[ctx.op];
  if (staged.load(std::memory_order_relaxed)) return run_through_f32(ctx, runner, dtype);
  try {
    runner(ctx);  // a missing kernel fails while the primitive is created, before any output write
  } catch (const dnnl::error& e) {
    if (e.status != dnnl_unimplemented) throw;
    staged.store(true, std::memory_order_relaxed);
    run_through_f32(ctx, runner, dtype);
  }
}

}  // namespace sy_onednn
