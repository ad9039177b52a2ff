// VaeLatent: the reparameterised sample and its KL term against the formulas of PyTorch's VAE
// example evaluated on the host in double with the same eps (drawn by RANDOM_NORMAL at the
// layer's seed and offset), and its gradients: closed form for the heads' parameters, finite
// differences for the input.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "switchyard/nn.h"
#include "switchyard/ops.h"
#include "tensor/tensor_test_support.h"

using namespace switchyard;
using switchyard::testing::tensor_of;
using switchyard::testing::test_device;

namespace {

constexpr int64_t kBatch = 4, kIn = 3, kLatent = 2;
constexpr double kBeta = 0.7;
constexpr uint64_t kSeed = 11, kOffset = 8;

const std::vector<float> kInput = {0.3f,  -1.2f, 0.8f,  1.5f, 0.1f, -0.4f,
                                   -0.7f, 0.9f,  0.25f, 0.0f, 2.0f, -1.1f};

// What the layer computes, on the host in double.
struct HostVae {
  std::vector<double> mu, logvar, eps, z;
  double kl = 0;  // per sample, averaged over the batch
};

std::vector<float> parameter(const VaeLatent& layer, const std::string& name) {
  for (const auto& [key, tensor] : layer.named_parameters()) {
    if (key == name) return tensor.to_host_float();
  }
  FAIL("no parameter " << name);
  return {};
}

// x W^T + b.
std::vector<double> host_linear(const std::vector<float>& w, const std::vector<float>& b) {
  std::vector<double> out(static_cast<size_t>(kBatch * kLatent));
  for (int64_t i = 0; i < kBatch; ++i) {
    for (int64_t j = 0; j < kLatent; ++j) {
      double value = b[static_cast<size_t>(j)];
      for (int64_t k = 0; k < kIn; ++k) {
        value += static_cast<double>(kInput[static_cast<size_t>(i * kIn + k)]) *
                 static_cast<double>(w[static_cast<size_t>(j * kIn + k)]);
      }
      out[static_cast<size_t>(i * kLatent + j)] = value;
    }
  }
  return out;
}

HostVae host_vae(const VaeLatent& layer) {
  HostVae h;
  h.mu = host_linear(parameter(layer, "mu.weight"), parameter(layer, "mu.bias"));
  h.logvar = host_linear(parameter(layer, "logvar.weight"), parameter(layer, "logvar.bias"));
  const std::vector<float> eps =
      rand_normal(Shape{kBatch, kLatent}, 0.0, 1.0, kSeed, kOffset, test_device()).to_host_float();
  for (size_t e = 0; e < h.mu.size(); ++e) {
    h.eps.push_back(eps[e]);
    h.z.push_back(h.mu[e] + std::exp(0.5 * h.logvar[e]) * static_cast<double>(eps[e]));
    h.kl += -0.5 * (1 + h.logvar[e] - h.mu[e] * h.mu[e] - std::exp(h.logvar[e]));
  }
  h.kl /= static_cast<double>(kBatch);
  return h;
}

void check_close(const std::vector<float>& got, const std::vector<double>& expected,
                 double margin) {
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == Approx(expected[i]).margin(margin));
  }
}

}  // namespace

TEST_CASE("vae_latent samples mu + exp(logvar / 2) * eps while training and gives mu in eval",
          "[nn][vae]") {
  InitContext init{test_device(), InitScheme::kKaimingUniform, 3};
  VaeLatent layer(init, kIn, kLatent, kBeta, kSeed);
  std::vector<std::string> names;
  for (const auto& [name, tensor] : layer.named_parameters()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"mu.weight", "mu.bias", "logvar.weight", "logvar.bias"});

  const HostVae h = host_vae(layer);
  const Tensor x = tensor_of(kInput, {kBatch, kIn});
  layer.set_random_state(kSeed, kOffset);
  const Tensor z = layer.forward(x);
  REQUIRE(z.shape() == Shape{kBatch, kLatent});
  check_close(z.to_host_float(), h.z, 1e-5);
  CHECK(layer.last_kl().item() == Approx(h.kl).epsilon(1e-5));
  CHECK(layer.kl_loss().item() == Approx(kBeta * h.kl).epsilon(1e-5));
  // The next training call draws other numbers: its offset moved on.
  CHECK(layer.offset() == kOffset + 8);
  const std::vector<float> again = layer.forward(x).to_host_float();
  CHECK(again != z.to_host_float());

  layer.eval();
  check_close(layer.forward(x).to_host_float(), h.mu, 1e-5);
  CHECK(layer.last_kl().item() == Approx(h.kl).epsilon(1e-5));  // the same mu and logvar
}

TEST_CASE("vae_latent's gradients: the heads' in closed form, the input's by finite differences",
          "[nn][vae][gradcheck]") {
  InitContext init{test_device(), InitScheme::kKaimingUniform, 5};
  VaeLatent layer(init, kIn, kLatent, kBeta, kSeed);
  const HostVae h = host_vae(layer);
  // L = sum(z * g) + beta * KL with a fixed g.
  const std::vector<float> g = {0.5f, -1.0f, 0.25f, 2.0f, -0.75f, 1.5f, 1.0f, -0.5f};
  layer.set_random_state(kSeed, kOffset);
  const Tensor z = layer.forward(tensor_of(kInput, {kBatch, kIn}));
  (sum(z * tensor_of(g, {kBatch, kLatent})) + layer.kl_loss()).backward();

  // dL/dmu = g + beta mu / B; dL/dlogvar = g eps exp(logvar / 2) / 2 + beta (exp(logvar) - 1) / 2B.
  std::vector<double> d_mu, d_logvar;
  for (size_t e = 0; e < h.mu.size(); ++e) {
    d_mu.push_back(static_cast<double>(g[e]) + kBeta * h.mu[e] / kBatch);
    d_logvar.push_back(static_cast<double>(g[e]) * h.eps[e] * 0.5 * std::exp(0.5 * h.logvar[e]) +
                       kBeta * 0.5 * (std::exp(h.logvar[e]) - 1.0) / kBatch);
  }
  const auto weight_grad = [](const std::vector<double>& d_out) {
    std::vector<double> grad(static_cast<size_t>(kLatent * kIn), 0.0);
    for (int64_t i = 0; i < kBatch; ++i) {
      for (int64_t j = 0; j < kLatent; ++j) {
        for (int64_t k = 0; k < kIn; ++k) {
          grad[static_cast<size_t>(j * kIn + k)] +=
              d_out[static_cast<size_t>(i * kLatent + j)] *
              static_cast<double>(kInput[static_cast<size_t>(i * kIn + k)]);
        }
      }
    }
    return grad;
  };
  const auto bias_grad = [](const std::vector<double>& d_out) {
    std::vector<double> grad(static_cast<size_t>(kLatent), 0.0);
    for (size_t e = 0; e < d_out.size(); ++e) grad[e % kLatent] += d_out[e];
    return grad;
  };
  for (const auto& [name, tensor] : layer.named_parameters()) {
    INFO(name);
    const std::vector<double>& d = name.rfind("mu.", 0) == 0 ? d_mu : d_logvar;
    const bool weight = name.find("weight") != std::string::npos;
    check_close(tensor.grad().to_host_float(), weight ? weight_grad(d) : bias_grad(d), 1e-4);
  }

  // The input's gradient through both heads, the sample and the KL term.
  const TensorFunction function = [&layer](const std::vector<Tensor>& in) {
    layer.set_random_state(kSeed, kOffset);  // the same eps for every evaluation
    const Tensor sample = layer.forward(in[0]);
    return sample + layer.kl_loss();
  };
  const GradCheckResult result = check_gradients(function, {tensor_of(kInput, {kBatch, kIn})});
  INFO(result.detail);
  CHECK(result.passed);
}

TEST_CASE("vae_latent refuses a latent size below 1, a negative beta and non-flat input",
          "[nn][vae]") {
  InitContext init{test_device(), InitScheme::kKaimingUniform, 1};
  CHECK_THROWS_WITH(VaeLatent(init, 3, 0), Catch::Contains("latent must be >= 1"));
  CHECK_THROWS_WITH(VaeLatent(init, 3, 2, -1.0), Catch::Contains("beta"));
  VaeLatent layer(init, 3, 2);
  CHECK_THROWS_WITH(layer.forward(tensor_of(kInput, {2, 2, 3})),
                    Catch::Contains("[batch, features]"));
}
