// The autograd engine's leaf-ready hook (autograd/engine.h), which data-parallel training uses to
// start each bucket's allreduce while backward goes on: it fires once per leaf, only after every
// contribution to the leaf's gradient has been added, and before backward has finished.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "autograd/engine.h"
#include "switchyard/autograd.h"
#include "switchyard/ops.h"
#include "tensor/tensor_test_support.h"

using namespace switchyard;
using switchyard::testing::test_device;

TEST_CASE("the leaf-ready hook fires once per leaf, with the final gradient", "[autograd]") {
  const auto device = test_device();
  Tensor w = Tensor::from_host({1, 2, 3}, {3}, device).set_requires_grad();
  Tensor b = Tensor::from_host({0.5f, 0.5f, 0.5f}, {3}, device).set_requires_grad();
  const Tensor x = Tensor::from_host({1, 1, 1}, {3}, device);
  // w is used twice (w * x and w * w): its gradient is final only after both terms.
  // loss = sum(w * x + b) + sum(w * w): d/dw = x + 2w = {3, 5, 7}, d/db = {1, 1, 1}.
  const Tensor first = sum(w * x + b);
  const Tensor second = sum(w * w);
  const Tensor loss = first + second;
  std::vector<std::string> order;
  std::vector<std::vector<float>> at_hook;
  {
    const LeafGradientReadyScope scope([&](const Tensor& leaf) {
      if (!leaf.defined()) return;  // the progress call after every node
      order.push_back(leaf.impl() == w.impl() ? "w" : leaf.impl() == b.impl() ? "b" : "?");
      at_hook.push_back(leaf.grad().to_host_float());
    });
    loss.backward();
  }
  REQUIRE(order.size() == 2);
  CHECK(((order[0] == "w" && order[1] == "b") || (order[0] == "b" && order[1] == "w")));
  const size_t wi = order[0] == "w" ? 0 : 1;
  CHECK(at_hook[wi] == std::vector<float>{3, 5, 7});
  CHECK(at_hook[1 - wi] == std::vector<float>{1, 1, 1});
  CHECK(w.grad().to_host_float() == std::vector<float>{3, 5, 7});
}

TEST_CASE("the leaf-ready hook is off outside its scope", "[autograd]") {
  const auto device = test_device();
  Tensor w = Tensor::from_host({1, 2}, {2}, device).set_requires_grad();
  int calls = 0;
  {
    const LeafGradientReadyScope scope(
        [&](const Tensor& leaf) { calls += leaf.defined() ? 1 : 0; });
    sum(w * w).backward();
  }
  CHECK(calls == 1);
  sum(w * w).backward();
  CHECK(calls == 1);
}
