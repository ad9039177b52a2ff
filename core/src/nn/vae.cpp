// VaeLatent: a variational autoencoder's Gaussian latent layer (nn.h).
#include <cmath>
#include <sstream>

#include "switchyard/nn.h"
#include "switchyard/ops.h"
#include "switchyard/status.h"

namespace switchyard {

VaeLatent::VaeLatent(InitContext& init, int64_t in_features, int64_t latent, double beta,
                     uint64_t seed)
    : latent_(latent), beta_(beta), seed_(seed) {
  if (latent < 1) {
    throw_error(invalid_argument("VaeLatent: latent must be >= 1, got " + std::to_string(latent)));
  }
  if (!(beta >= 0) || !std::isfinite(beta)) {
    throw_error(invalid_argument("VaeLatent: beta must be a finite number >= 0, got " +
                                 std::to_string(beta)));
  }
  mu_ = std::make_shared<Linear>(init, in_features, latent);
  logvar_ = std::make_shared<Linear>(init, in_features, latent);
  register_module("mu", mu_);
  register_module("logvar", logvar_);
}

Tensor VaeLatent::forward(const Tensor& input) {
  if (input.rank() != 2) {
    throw_error(invalid_argument("VaeLatent: expected [batch, features], got " +
                                 input.shape().to_string()));
  }
  const Tensor mu = mu_->forward(input);
  const Tensor logvar = logvar_->forward(input);
  last_kl_ = gaussian_kl_divergence(mu, logvar);
  if (!is_training()) return mu;
  const uint64_t offset = offset_;
  // Whole Philox blocks per call, like Dropout, so that calls never share a counter.
  offset_ += (static_cast<uint64_t>(mu.numel()) + 3u) & ~uint64_t{3};
  const Tensor eps = rand_normal(mu.shape(), 0.0, 1.0, seed_, offset, mu.device(), mu.dtype());
  return mu + exp(logvar * 0.5) * eps;
}

Tensor VaeLatent::kl_loss() const {
  if (!last_kl_.defined()) {
    throw_error(failed_precondition("VaeLatent: kl_loss() before the first forward"));
  }
  return beta_ == 1.0 ? last_kl_ : last_kl_ * beta_;
}

std::string VaeLatent::describe() const {
  std::ostringstream text;
  text << "VaeLatent(latent=" << latent_ << ", beta=" << beta_ << ")";
  return text.str();
}

void VaeLatent::set_random_state(uint64_t seed, uint64_t offset) {
  seed_ = seed;
  offset_ = offset;
}

}  // namespace switchyard
