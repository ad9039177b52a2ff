// The regression and multi-label losses against PyTorch's formulas (the expected numbers come from
// tests/tensor/loss_expected.py), and their gradients against finite differences.
#include <catch2/catch.hpp>

#include "autograd/gradcheck.h"
#include "switchyard/ops.h"
#include "tensor/tensor_test_support.h"

using namespace switchyard;
using switchyard::testing::tensor_of;

namespace {

// The inputs of loss_expected.py. The distances |prediction - target| are 0.5, 2.25, 2.5, 0, 2.5
// and 0.2: some below and some above each beta and delta, and one exactly 0.
Tensor prediction() {
  return tensor_of({0.5f, -1.25f, 3.0f, 0.1f, -0.4f, 2.2f}, {2, 3});
}
Tensor target() {
  return tensor_of({0.0f, 1.0f, 0.5f, 0.1f, -2.9f, 2.0f}, {2, 3});
}

// Gradient inputs away from the kinks (|d| = 0 and |d| = beta).
std::vector<Tensor> gradient_inputs() {
  return {tensor_of({0.5f, -1.25f, 3.0f, 0.3f, -0.4f, 2.6f}, {2, 3}),
          tensor_of({0.0f, 1.0f, 0.5f, 0.1f, -2.9f, 2.0f}, {2, 3})};
}

}  // namespace

TEST_CASE("l1_loss is the mean or sum of absolute differences", "[losses]") {
  CHECK(l1_loss(prediction(), target()).item() == Approx(1.325));
  CHECK(l1_loss(prediction(), target(), Reduction::kSum).item() == Approx(7.95));
}

TEST_CASE("smooth_l1_loss matches PyTorch for several betas", "[losses]") {
  CHECK(smooth_l1_loss(prediction(), target()).item() == Approx(0.9825));
  CHECK(smooth_l1_loss(prediction(), target(), 0.5).item() == Approx(1.13166667));
  CHECK(smooth_l1_loss(prediction(), target(), 2.0).item() == Approx(0.720416667));
  CHECK(smooth_l1_loss(prediction(), target(), 2.0, Reduction::kSum).item() == Approx(4.3225));
  // beta 0 is the L1 loss, as in PyTorch.
  CHECK(smooth_l1_loss(prediction(), target(), 0.0).item() == Approx(1.325));
}

TEST_CASE("huber_loss is delta times smooth_l1_loss with beta = delta", "[losses]") {
  CHECK(huber_loss(prediction(), target()).item() == Approx(0.9825));
  CHECK(huber_loss(prediction(), target(), 0.5).item() == Approx(0.565833333));
  CHECK(huber_loss(prediction(), target(), 2.0).item() == Approx(1.44083333));
  CHECK(huber_loss(prediction(), target(), 0.5, Reduction::kSum).item() == Approx(3.395));
  CHECK(huber_loss(prediction(), target(), 2.0, Reduction::kSum).item() == Approx(8.645));
}

TEST_CASE("binary_cross_entropy_with_logits is stable for large logits", "[losses]") {
  const Tensor logits = tensor_of({-30.0f, -2.0f, -0.3f, 0.0f, 0.7f, 4.0f, 25.0f, 1.5f}, {2, 4});
  const Tensor labels = tensor_of({0.0f, 1.0f, 0.0f, 1.0f, 1.0f, 0.25f, 1.0f, 0.0f}, {2, 4});
  CHECK(binary_cross_entropy_with_logits(logits, labels).item() == Approx(1.06214746));
  CHECK(binary_cross_entropy_with_logits(logits, labels, Reduction::kSum).item() ==
        Approx(8.49717969));
  // A confident right answer costs almost nothing and a confident wrong one its margin, never inf.
  const Tensor extreme = tensor_of({100.0f, -100.0f}, {2});
  CHECK(binary_cross_entropy_with_logits(extreme, tensor_of({1.0f, 0.0f}, {2})).item() ==
        Approx(0.0).margin(1e-6));
  CHECK(binary_cross_entropy_with_logits(extreme, tensor_of({0.0f, 1.0f}, {2})).item() ==
        Approx(100.0));
}

TEST_CASE("gaussian_kl_divergence is the KL per sample, summed over the code", "[losses][vae]") {
  // Two samples of a 3-number code: mu = prediction(), logvar = target().
  CHECK(gaussian_kl_divergence(prediction(), target()).item() == Approx(5.75968833));
  CHECK(gaussian_kl_divergence(prediction(), target(), Reduction::kSum).item() ==
        Approx(11.5193767));
  // N(0, 1) itself: no divergence.
  const Tensor zero = tensor_of({0.0f, 0.0f, 0.0f, 0.0f}, {2, 2});
  CHECK(gaussian_kl_divergence(zero, zero).item() == Approx(0.0).margin(1e-7));
  CHECK_THROWS_WITH(gaussian_kl_divergence(zero, tensor_of({0.0f, 0.0f}, {2})),
                    Catch::Contains("gaussian_kl_divergence") && Catch::Contains("differ"));
}

TEST_CASE("the losses' gradients agree with finite differences", "[losses][gradcheck]") {
  const std::vector<std::pair<std::string, TensorFunction>> losses = {
      {"l1", [](const std::vector<Tensor>& in) { return l1_loss(in[0], in[1]); }},
      {"smooth_l1 beta 1",
       [](const std::vector<Tensor>& in) { return smooth_l1_loss(in[0], in[1], 1.0); }},
      {"smooth_l1 beta 0.5 sum",
       [](const std::vector<Tensor>& in) {
         return smooth_l1_loss(in[0], in[1], 0.5, Reduction::kSum);
       }},
      {"huber delta 2",
       [](const std::vector<Tensor>& in) { return huber_loss(in[0], in[1], 2.0); }},
      {"bce_with_logits",
       [](const std::vector<Tensor>& in) {
         return binary_cross_entropy_with_logits(in[0], sigmoid(in[1]));
       }},
      {"gaussian_kl (mu, logvar)",
       [](const std::vector<Tensor>& in) { return gaussian_kl_divergence(in[0], in[1] * 0.5); }},
  };
  for (const auto& [name, function] : losses) {
    INFO(name);
    const GradCheckResult result = check_gradients(function, gradient_inputs());
    INFO(result.detail);
    CHECK(result.passed);
  }
}

TEST_CASE("the losses refuse targets of another shape and bad parameters", "[losses]") {
  const Tensor column = tensor_of({1.0f, 2.0f}, {2, 1});
  const Tensor flat = tensor_of({1.0f, 2.0f}, {2});
  CHECK_THROWS_WITH(l1_loss(column, flat), Catch::Contains("l1_loss") && Catch::Contains("differ"));
  CHECK_THROWS_WITH(binary_cross_entropy_with_logits(column, flat), Catch::Contains("differ"));
  CHECK_THROWS_WITH(huber_loss(flat, flat, 0.0), Catch::Contains("delta must be"));
  CHECK_THROWS_WITH(smooth_l1_loss(flat, flat, -1.0), Catch::Contains("beta must be"));
}
