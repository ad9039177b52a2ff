// Mixed precision ("autocast"): model code written in f32 runs its matrix products in bf16 or f16.
//
// While an AutocastGuard for bf16 or f16 is alive on a thread, the ops of ops.h choose their
// compute dtype as follows (inputs are cast with Tensor::to, which autograd differentiates, so
// gradients reach f32 parameters in f32):
//   - matmul, linear, conv2d: floating inputs are cast to the low dtype; the backends accumulate
//     in f32 (docs/ops.md) and round the result to the low dtype;
//   - softmax, log_softmax, cross_entropy, mse_loss, layer_norm, sum, mean: inputs are cast to f32,
//     so normalisations, reductions and losses keep f32's range and precision;
//   - binary elementwise ops with two floating dtypes compute in the wider one (bf16 + f32 -> f32);
//   - everything else runs in its input's dtype (relu, pooling, dropout stay low after a matmul).
// Parameters, gradients of parameters and optimizer state stay f32: keep them f32 and wrap only
// the forward pass. Backward may run inside or outside the guard; it follows the recorded dtypes.
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include "switchyard/dtype.h"

namespace switchyard {

// The low dtype in effect on this thread, or DType::kF32 when autocast is off.
DType autocast_dtype();

// Turns autocast on (bf16 or f16) or off (f32) for its scope on this thread and restores the
// previous mode after. Throws INVALID_ARGUMENT for a non-floating dtype.
class AutocastGuard {
 public:
  explicit AutocastGuard(DType low_dtype);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  DType previous_;
};

}  // namespace switchyard

#pragma GCC visibility pop
