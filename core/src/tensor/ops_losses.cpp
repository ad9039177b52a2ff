// The regression and multi-label losses, composed of elementwise ops and reductions so that
// their gradients come from autograd and they run on every backend (definitions in ops.h).
#include <cmath>
#include <string>

#include "switchyard/ops.h"
#include "switchyard/status.h"
#include "tensor/op_helpers.h"

namespace switchyard {
namespace {

// Losses are computed in f32 under autocast (as mse_loss and cross_entropy are); the inputs must
// have one shape (no broadcasting: a [N] target against an [N, 1] prediction is a mistake).
void require_same_shape(const Tensor& prediction, const Tensor& target, const char* op) {
  require_float(prediction, op);
  if (prediction.shape() != target.shape()) {
    throw_error(invalid_argument(std::string(op) + ": prediction " +
                                 prediction.shape().to_string() + " and target " +
                                 target.shape().to_string() + " differ"));
  }
}

Tensor reduce(const Tensor& elements, Reduction reduction) {
  return reduction == Reduction::kSum ? sum(elements) : mean(elements);
}

// The elementwise Huber term q (d - q / 2) with q = min(d, delta), d = |prediction - target|:
// d^2 / 2 below delta, delta (d - delta / 2) above, with the gradient of whichever part applies.
Tensor huber_elements(const Tensor& prediction, const Tensor& target, double delta) {
  const Tensor distance = abs(sub(prediction, target));
  const Tensor quadratic_part = minimum(distance, delta);
  return mul(quadratic_part, sub(distance, mul(quadratic_part, 0.5)));
}

}  // namespace

Tensor l1_loss(const Tensor& prediction, const Tensor& target, Reduction reduction) {
  require_same_shape(prediction, target, "l1_loss");
  return reduce(abs(sub(autocast_f32(prediction), autocast_f32(target))), reduction);
}

Tensor smooth_l1_loss(const Tensor& prediction, const Tensor& target, double beta,
                      Reduction reduction) {
  require_same_shape(prediction, target, "smooth_l1_loss");
  if (!(beta >= 0) || !std::isfinite(beta)) {
    throw_error(invalid_argument("smooth_l1_loss: beta must be a finite number >= 0, got " +
                                 std::to_string(beta)));
  }
  if (beta == 0) return l1_loss(prediction, target, reduction);  // PyTorch's rule for beta 0
  const Tensor elements = huber_elements(autocast_f32(prediction), autocast_f32(target), beta);
  return reduce(mul(elements, 1.0 / beta), reduction);
}

Tensor huber_loss(const Tensor& prediction, const Tensor& target, double delta,
                  Reduction reduction) {
  require_same_shape(prediction, target, "huber_loss");
  if (!(delta > 0) || !std::isfinite(delta)) {
    throw_error(invalid_argument("huber_loss: delta must be a finite number > 0, got " +
                                 std::to_string(delta)));
  }
  return reduce(huber_elements(autocast_f32(prediction), autocast_f32(target), delta), reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& logits_in, const Tensor& target_in,
                                        Reduction reduction) {
  require_same_shape(logits_in, target_in, "binary_cross_entropy_with_logits");
  const Tensor logits = autocast_f32(logits_in);
  const Tensor target = autocast_f32(target_in);
  const Tensor softplus_of_minus_abs = log(add(exp(neg(abs(logits))), 1.0));
  const Tensor elements =
      add(sub(maximum(logits, 0.0), mul(logits, target)), softplus_of_minus_abs);
  return reduce(elements, reduction);
}

Tensor gaussian_kl_divergence(const Tensor& mu_in, const Tensor& logvar_in, Reduction reduction) {
  require_same_shape(mu_in, logvar_in, "gaussian_kl_divergence");
  if (mu_in.rank() < 1) {
    throw_error(invalid_argument("gaussian_kl_divergence: mu and logvar need at least one axis"));
  }
  const Tensor mu = autocast_f32(mu_in);
  const Tensor logvar = autocast_f32(logvar_in);
  // 1 + logvar - mu^2 - exp(logvar), summed over the latent (last) axis: one KL per sample.
  const Tensor elements = sub(sub(add(logvar, 1.0), mul(mu, mu)), exp(logvar));
  const Tensor per_sample = mul(sum(elements, {-1}), -0.5);
  return reduce(per_sample, reduction);
}

}  // namespace switchyard
