// Autograd: accumulation into leaves, no-grad scopes, broadcasting gradients, graph structure.
#include <catch2/catch.hpp>

#include "switchyard/autograd.h"
#include "switchyard/ops.h"
#include "switchyard/status.h"
#include "tensor/tensor_test_support.h"

using namespace switchyard;
using switchyard::testing::check_values;
using switchyard::testing::tensor_of;
using switchyard::testing::test_device;

TEST_CASE("gradients accumulate across backward calls until zero_grad", "[autograd]") {
  Tensor x = tensor_of({1, 2, 3}, {3}).set_requires_grad();
  CHECK(x.is_leaf());
  sum(mul(x, x)).backward();  // d/dx sum(x^2) = 2x
  check_values(x.grad(), {2, 4, 6});
  sum(mul(x, 3.0)).backward();
  check_values(x.grad(), {5, 7, 9});
  x.zero_grad();
  CHECK_FALSE(x.grad().defined());
  sum(x).backward();
  check_values(x.grad(), {1, 1, 1});
}

TEST_CASE("a tensor used along two paths gets the sum of both gradients", "[autograd]") {
  Tensor x = tensor_of({0.5, -1.0}, {2}).set_requires_grad();
  const Tensor y = tanh(x);
  const Tensor z = sum(y * y + y * 2.0);  // dz/dx = (2y + 2)(1 - y^2)
  z.backward();
  const std::vector<float> y_host = y.to_host_float();
  std::vector<float> expected;
  for (float v : y_host) expected.push_back((2 * v + 2) * (1 - v * v));
  check_values(x.grad(), expected);
}

TEST_CASE("broadcast inputs get gradients summed back to their own shape", "[autograd]") {
  Tensor a = tensor_of({1, 2, 3, 4, 5, 6}, {2, 3}).set_requires_grad();
  Tensor bias = tensor_of({1, 1, 1}, {3}).set_requires_grad();
  Tensor scale = tensor_of({2, 3}, {2, 1}).set_requires_grad();
  sum((a + bias) * scale).backward();
  CHECK(bias.grad().shape() == Shape{3});
  check_values(bias.grad(), {5, 5, 5});
  CHECK(scale.grad().shape() == Shape{2, 1});
  check_values(scale.grad(), {9, 18});
  check_values(a.grad(), {2, 2, 2, 3, 3, 3});
}

TEST_CASE("NoGradGuard records nothing and restores the previous mode", "[autograd]") {
  Tensor w = tensor_of({1, 2}, {2}).set_requires_grad();
  {
    NoGradGuard guard;
    CHECK_FALSE(is_grad_enabled());
    const Tensor y = w * 2.0;
    CHECK_FALSE(y.requires_grad());
    CHECK(y.grad_fn_name().empty());
  }
  CHECK(is_grad_enabled());
  const Tensor y = w * 2.0;
  CHECK(y.requires_grad());
  CHECK(y.grad_fn_name() == "mul_scalar");
  CHECK_FALSE(y.is_leaf());
}

TEST_CASE("detach cuts the graph and backward needs a graph", "[autograd]") {
  Tensor x = tensor_of({1, 2}, {2}).set_requires_grad();
  const Tensor d = (x * 2.0).detach();
  CHECK_FALSE(d.requires_grad());
  CHECK_THROWS_WITH(sum(d).backward(), Catch::Contains("does not require a gradient"));
  CHECK_THROWS_WITH((x * 2.0).backward(), Catch::Contains("one-element"));
  CHECK_THROWS_WITH((x * 2.0).set_requires_grad(false), Catch::Contains("only leaves"));
}

TEST_CASE("views pass gradients back to the viewed tensor", "[autograd]") {
  Tensor x = tensor_of({1, 2, 3, 4, 5, 6}, {2, 3}).set_requires_grad();
  const Tensor picked = x.t().narrow(0, 1, 2).reshape({4});  // elements 2, 5, 3, 6
  sum(picked * tensor_of({1, 2, 3, 4}, {4})).backward();
  check_values(x.grad(), {0, 1, 3, 0, 2, 4});
}

TEST_CASE("cross_entropy gradient is softmax minus one-hot over N", "[autograd]") {
  Tensor logits = tensor_of({1, 2, 3, 0, 0, 0}, {2, 3}).set_requires_grad();
  const Tensor labels = Tensor::from_host(std::vector<int32_t>{2, 1}, {2}, test_device());
  cross_entropy(logits, labels).backward();
  const std::vector<float> p = softmax(logits.detach()).to_host_float();
  check_values(logits.grad(),
               {p[0] / 2, p[1] / 2, (p[2] - 1) / 2, p[3] / 2, (p[4] - 1) / 2, p[5] / 2});
}
