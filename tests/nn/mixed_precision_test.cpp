// Mixed precision: which dtype each op computes in under autocast, that gradients reach f32
// parameters in f32, and dynamic loss scaling (skip on overflow, unscale, grow, back off).
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "switchyard/autocast.h"
#include "switchyard/autograd.h"
#include "switchyard/nn.h"
#include "switchyard/ops.h"
#include "switchyard/optim.h"
#include "tensor/tensor_test_support.h"

using namespace switchyard;
using switchyard::testing::check_values;
using switchyard::testing::tensor_of;
using switchyard::testing::test_device;

TEST_CASE("autocast runs products in the low dtype and losses and reductions in f32",
          "[autocast]") {
  for (const DType low : {DType::kBF16, DType::kF16}) {
    INFO(dtype_name(low));
    const Tensor x = tensor_of({1, 2, 3, 4, 5, 6}, {2, 3});
    const Tensor w = tensor_of({0.5, -1, 0.25, 2, 0, 1}, {2, 3});
    const Tensor b = tensor_of({0.125, -0.5}, {2});
    const Tensor labels = Tensor::from_host(std::vector<int32_t>{1, 0}, Shape{2}, test_device());
    CHECK(autocast_dtype() == DType::kF32);
    {
      const AutocastGuard autocast(low);
      CHECK(autocast_dtype() == low);
      const Tensor y = linear(x, w, b);
      CHECK(y.dtype() == low);
      CHECK(matmul(x, w, false, true).dtype() == low);
      CHECK(relu(y).dtype() == low);  // elementwise ops keep their input's dtype
      CHECK(softmax(y).dtype() == DType::kF32);
      CHECK(log_softmax(y).dtype() == DType::kF32);
      CHECK(cross_entropy(y, labels).dtype() == DType::kF32);
      CHECK(sum(y).dtype() == DType::kF32);
      CHECK(mean(y).dtype() == DType::kF32);
      CHECK(mse_loss(y, y).dtype() == DType::kF32);
      CHECK((y + b).dtype() == DType::kF32);  // mixed float dtypes meet in the wider one
      const Tensor image =
          Tensor::from_host(std::vector<float>(16, 1.0f), Shape{1, 1, 4, 4}, test_device());
      const Tensor kernel =
          Tensor::from_host(std::vector<float>(4, 0.5f), Shape{1, 1, 2, 2}, test_device());
      CHECK(conv2d(image, kernel, Tensor()).dtype() == low);
      // The values are the f32 ones rounded: these products are exact in both low dtypes.
      check_values(y.to(DType::kF32), {-0.625, 4.5, -1.375, 13.5});
      {
        const AutocastGuard off(DType::kF32);
        CHECK(linear(x, w, b).dtype() == DType::kF32);
      }
      CHECK(autocast_dtype() == low);  // the inner guard restored the outer mode
    }
    CHECK(autocast_dtype() == DType::kF32);
    // Without autocast, mixed dtypes are still an error naming both.
    CHECK_THROWS_WITH(add(x.to(low), x), Catch::Contains("dtypes differ"));
  }
  CHECK_THROWS_WITH(AutocastGuard(DType::kI32), Catch::Contains("autocast"));
}

TEST_CASE("gradients through autocast reach f32 parameters in f32", "[autocast]") {
  Tensor w = tensor_of({0.5, -1, 0.25, 2, 0, 1}, {2, 3}).set_requires_grad();
  Tensor b = tensor_of({0.125, -0.5}, {2}).set_requires_grad();
  const Tensor x = tensor_of({1, 2, 3, 4, 5, 6}, {2, 3});
  {
    const AutocastGuard autocast(DType::kBF16);
    sum(linear(x, w, b)).backward();
  }
  REQUIRE(w.grad().defined());
  CHECK(w.grad().dtype() == DType::kF32);
  CHECK(b.grad().dtype() == DType::kF32);
  // d sum(x w^T + b) / dw[o, i] = sum over rows of x[:, i]; / db[o] = rows.
  check_values(w.grad(), {5, 7, 9, 5, 7, 9});
  check_values(b.grad(), {2, 2});
}

namespace {

// One f32 parameter with a gradient set by hand, for the scaler tests.
struct ScalerFixture {
  Tensor parameter = tensor_of({1.0, 2.0}, {2}).set_requires_grad();
  Sgd sgd{{parameter}, SgdOptions{0.5, 0.0, 0.0, 0.0, false}};
};

}  // namespace

TEST_CASE("the loss scaler unscales finite gradients and steps", "[loss_scaler]") {
  ScalerFixture f;
  LossScaler scaler(LossScalerOptions{1024.0, 2.0, 0.5, 2, 4096.0});
  CHECK(scaler.scale(tensor_of({3.0}, {1})).item() == 3072.0);
  f.parameter.set_grad(tensor_of({1024.0, -2048.0}, {2}));  // a scaled gradient of {1, -2}
  CHECK(scaler.step(f.sgd));
  check_values(f.parameter, {0.5, 3.0});  // p - 0.5 * {1, -2}
  CHECK(scaler.skipped_steps() == 0);
  CHECK(scaler.scale_value() == 1024.0);
  // The second good step in a row reaches growth_interval: the scale doubles, up to max_scale.
  f.parameter.set_grad(tensor_of({0.0, 0.0}, {2}));
  CHECK(scaler.step(f.sgd));
  CHECK(scaler.scale_value() == 2048.0);
  for (int i = 0; i < 6; ++i) {
    f.parameter.set_grad(tensor_of({0.0, 0.0}, {2}));
    scaler.step(f.sgd);
  }
  CHECK(scaler.scale_value() == 4096.0);
}

TEST_CASE("the loss scaler skips steps with inf or NaN gradients and backs off", "[loss_scaler]") {
  for (const float bad :
       {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
        std::numeric_limits<float>::quiet_NaN()}) {
    INFO(bad);
    ScalerFixture f;
    LossScaler scaler(LossScalerOptions{1024.0, 2.0, 0.5, 2, 4096.0});
    f.parameter.set_grad(tensor_of({1.0, 1.0}, {2}));
    CHECK(scaler.step(f.sgd));  // one good step: the growth tracker is 1
    CHECK(scaler.growth_tracker() == 1);
    f.parameter.set_grad(tensor_of({bad, 1.0}, {2}));
    CHECK_FALSE(scaler.step(f.sgd));
    check_values(f.parameter, {1.0f - 0.5f / 1024, 2.0f - 0.5f / 1024});  // unchanged by the skip
    CHECK(scaler.skipped_steps() == 1);
    CHECK(scaler.scale_value() == 512.0);
    CHECK(scaler.growth_tracker() == 0);
  }
  CHECK_THROWS(LossScaler(LossScalerOptions{0.0, 2.0, 0.5, 2, 4096.0}));
}

TEST_CASE("f16 training with loss scaling learns a separable problem", "[loss_scaler]") {
  // Two Gaussian blobs; an MLP under f16 autocast with the scaler, f32 master weights.
  InitContext init{test_device(), InitScheme::kKaimingUniform, 7, 0, DType::kF32};
  Sequential model;
  model.add(std::make_shared<Linear>(init, 2, 8, true));
  model.add(std::make_shared<ReLU>());
  model.add(std::make_shared<Linear>(init, 8, 2, true));
  std::vector<float> points;
  std::vector<int32_t> classes;
  for (int i = 0; i < 64; ++i) {
    const float side = i % 2 == 0 ? 1.0f : -1.0f;
    points.push_back(side * (1.0f + 0.01f * static_cast<float>(i % 7)));
    points.push_back(side * (0.5f + 0.02f * static_cast<float>(i % 5)));
    classes.push_back(i % 2);
  }
  const Tensor x = Tensor::from_host(points, Shape{64, 2}, test_device());
  const Tensor y = Tensor::from_host(classes, Shape{64}, test_device());
  Sgd sgd(model.parameters(), SgdOptions{0.1, 0.9, 0.0, 0.0, false});
  LossScaler scaler;
  double first_loss = 0, last_loss = 0;
  for (int step = 0; step < 30; ++step) {
    Tensor loss;
    {
      const AutocastGuard autocast(DType::kF16);
      loss = cross_entropy(model.forward(x), y);
    }
    if (step == 0) first_loss = loss.item();
    last_loss = loss.item();
    scaler.scale(loss).backward();
    scaler.step(sgd);
    sgd.zero_grad();
  }
  for (const Tensor& p : model.parameters()) CHECK(p.dtype() == DType::kF32);
  CHECK(last_loss < 0.5 * first_loss);
  CHECK(scaler.skipped_steps() == 0);
  CHECK(scaler.scale_value() == 65536.0);
}
