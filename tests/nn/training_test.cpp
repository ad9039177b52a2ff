// Optimizers, schedules and a tiny end-to-end training loop.
#include <catch2/catch.hpp>
#include <cmath>

#include "switchyard/autograd.h"
#include "switchyard/nn.h"
#include "switchyard/optim.h"
#include "tensor/tensor_test_support.h"

using namespace switchyard;
using switchyard::testing::check_values;
using switchyard::testing::tensor_of;
using switchyard::testing::test_device;

TEST_CASE("SGD with momentum and Nesterov matches the update written out", "[optim]") {
  Tensor p = tensor_of({1.0, -1.0}, {2}).set_requires_grad();
  Sgd sgd({p}, SgdOptions{0.1, 0.9, 0.0, 0.01, true});
  p.set_grad(tensor_of({0.5, 0.25}, {2}));
  sgd.step();
  // g = grad + wd p; buf = g; g = g + m buf; p -= lr g
  const double g0 = 0.5 + 0.01, g1 = 0.25 - 0.01;
  const double p0 = 1.0 - 0.1 * (g0 + 0.9 * g0), p1 = -1.0 - 0.1 * (g1 + 0.9 * g1);
  check_values(p, {static_cast<float>(p0), static_cast<float>(p1)});
  p.set_grad(tensor_of({0.5, 0.25}, {2}));
  sgd.step();
  const double h0 = 0.5 + 0.01 * p0, h1 = 0.25 + 0.01 * p1;
  const double b0 = 0.9 * g0 + h0, b1 = 0.9 * g1 + h1;
  check_values(p, {static_cast<float>(p0 - 0.1 * (h0 + 0.9 * b0)),
                   static_cast<float>(p1 - 0.1 * (h1 + 0.9 * b1))});
  CHECK(sgd.step_count() == 2);
  CHECK(sgd.state_dict().size() == 2);
  CHECK(sgd.state_dict()[0].first == "0.momentum_buffer");
}

TEST_CASE("Adam and AdamW follow the bias-corrected update", "[optim]") {
  for (bool decoupled : {false, true}) {
    Tensor p = tensor_of({1.0}, {1}).set_requires_grad();
    AdamOptions options{0.01, 0.9, 0.999, 1e-8, 0.1, decoupled};
    std::unique_ptr<Optimizer> adam;
    if (decoupled) {
      adam = std::make_unique<AdamW>(std::vector<Tensor>{p}, options);
    } else {
      adam = std::make_unique<Adam>(std::vector<Tensor>{p}, options);
    }
    p.set_grad(tensor_of({0.5}, {1}));
    adam->step();
    // Step 1: m_hat = g, v_hat = g^2, so the step is lr * g / (|g| + eps) = lr (sign of g).
    const double g = decoupled ? 0.5 : 0.5 + 0.1 * 1.0;
    const double start = decoupled ? 1.0 * (1.0 - 0.01 * 0.1) : 1.0;
    check_values(p, {static_cast<float>(start - 0.01 * g / (g + 1e-8))}, 1e-6);
    const NamedTensors state = adam->state_dict();
    REQUIRE(state.size() == 3);
    check_values(state[0].second, {static_cast<float>(0.1 * g)});
    check_values(state[1].second, {static_cast<float>(0.001 * g * g)});
    CHECK(state[2].first == "step");
    CHECK(state[2].second.item() == 1.0);
  }
}

TEST_CASE("optimizer state round-trips through state_dict", "[optim]") {
  Tensor p = tensor_of({1.0, 2.0}, {2}).set_requires_grad();
  Adam adam({p}, AdamOptions{});
  p.set_grad(tensor_of({0.1, -0.2}, {2}));
  adam.step();
  adam.step();
  Tensor q = tensor_of({1.0, 2.0}, {2}).set_requires_grad();
  Adam restored({q}, AdamOptions{});
  NamedTensors state;
  for (const auto& [name, tensor] : adam.state_dict()) state.emplace_back(name, tensor.clone());
  restored.load_state_dict(state);
  CHECK(restored.step_count() == 2);
  CHECK(restored.state_dict()[0].second.to_host_float() ==
        adam.state_dict()[0].second.to_host_float());
  state.erase(state.begin());
  CHECK_THROWS_WITH(restored.load_state_dict(state), Catch::Contains("missing key '0.exp_avg'"));
}

TEST_CASE("StepLR and cosine annealing give the closed-form rates", "[optim]") {
  Tensor p = tensor_of({1.0}, {1}).set_requires_grad();
  Sgd sgd({p}, SgdOptions{0.1});
  StepLR step(sgd, 3, 0.5);
  for (int epoch = 0; epoch < 3; ++epoch) step.step();
  CHECK(sgd.lr() == Approx(0.05));
  step.set_epoch(7);
  CHECK(sgd.lr() == Approx(0.025));
  Sgd other({p}, SgdOptions{1.0});
  CosineAnnealingLR cosine(other, 10, 0.1);
  cosine.set_epoch(5);
  CHECK(other.lr() == Approx(0.55));
  cosine.set_epoch(10);
  CHECK(other.lr() == Approx(0.1));
  CHECK(cosine.lr_at(0) == Approx(1.0));
}

TEST_CASE("a tiny MLP's loss decreases over a few SGD steps", "[train]") {
  InitContext init{test_device(), InitScheme::kKaimingUniform, 2024};
  Sequential model;
  model.emplace<Linear>(init, 4, 16);
  model.emplace<ReLU>();
  model.emplace<Linear>(init, 16, 3);
  // Three well-separated clusters, labelled by which coordinate is large.
  std::vector<float> xs;
  std::vector<int64_t> ys;
  for (int i = 0; i < 30; ++i) {
    const int label = i % 3;
    for (int j = 0; j < 4; ++j)
      xs.push_back(j == label ? 2.0f : 0.1f * static_cast<float>((i + j) % 5));
    ys.push_back(label);
  }
  const Tensor x = Tensor::from_host(xs, {30, 4}, test_device());
  const Tensor y = Tensor::from_host(ys, {30}, test_device());
  Sgd sgd(model.parameters(), SgdOptions{0.1, 0.9});
  std::vector<double> losses;
  for (int step = 0; step < 20; ++step) {
    sgd.zero_grad();
    const Tensor loss = cross_entropy(model(x), y);
    loss.backward();
    sgd.step();
    losses.push_back(loss.item());
  }
  CHECK(losses.back() < 0.5 * losses.front());
  CHECK(losses[5] < losses[0]);
  NoGradGuard no_grad;
  CHECK(accuracy(model(x), y) == 1.0);
}

TEST_CASE("a bf16 model runs forward and backward with bf16 gradients", "[train]") {
  InitContext init{test_device(), InitScheme::kKaimingUniform, 5, 0, DType::kBF16};
  Sequential model;
  model.emplace<Linear>(init, 8, 4);
  model.emplace<GELU>();
  model.emplace<Dropout>(0.25, 3);
  model.emplace<Linear>(init, 4, 3);
  const Tensor x = rand_uniform({6, 8}, -1.0, 1.0, 9, 0, test_device(), DType::kBF16);
  const Tensor y = Tensor::from_host(std::vector<int32_t>{0, 1, 2, 0, 1, 2}, {6}, test_device());
  const Tensor loss = cross_entropy(model(x), y);
  CHECK(loss.dtype() == DType::kBF16);
  loss.backward();
  for (const auto& [name, p] : model.named_parameters()) {
    INFO(name);
    REQUIRE(p.grad().defined());
    CHECK(p.grad().dtype() == DType::kBF16);
    CHECK(p.grad().shape() == p.shape());
  }
  // The same seed in f32 draws the same numbers before rounding: bf16 weights are the rounded
  // f32 ones.
  InitContext f32_init{test_device(), InitScheme::kKaimingUniform, 5};
  Linear f32_layer(f32_init, 8, 4);
  const std::vector<float> rounded = f32_layer.weight().to(DType::kBF16).to_host_float();
  CHECK(model.named_parameters()[0].second.to_host_float() == rounded);
}
