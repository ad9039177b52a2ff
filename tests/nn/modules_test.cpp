// nn: module structure, names, initialisation and state.
#include <catch2/catch.hpp>
#include <cmath>

#include "switchyard/nn.h"
#include "switchyard/status.h"
#include "tensor/tensor_test_support.h"

using namespace switchyard;
using switchyard::testing::check_values;
using switchyard::testing::tensor_of;
using switchyard::testing::test_device;

namespace {

std::shared_ptr<Sequential> make_mlp(uint64_t seed,
                                     InitScheme scheme = InitScheme::kKaimingUniform) {
  InitContext init{test_device(), scheme, seed};
  auto model = std::make_shared<Sequential>();
  model->emplace<Linear>(init, 64, 256);
  model->emplace<ReLU>();
  model->emplace<Linear>(init, 256, 256);
  model->emplace<ReLU>();
  model->emplace<Linear>(init, 256, 10);
  return model;
}

}  // namespace

TEST_CASE("named_parameters are stable, ordered names", "[nn]") {
  const auto model = make_mlp(1);
  std::vector<std::string> names;
  for (const auto& [name, tensor] : model->named_parameters()) names.push_back(name);
  CHECK(names ==
        std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"});
  CHECK(model->parameter_count() == 64 * 256 + 256 + 256 * 256 + 256 + 256 * 10 + 10);
  CHECK(model->named_parameters()[0].second.shape() == Shape{256, 64});
  for (const Tensor& p : model->parameters()) CHECK(p.requires_grad());
  CHECK_THAT(model->summary(), Catch::Contains("(0): Linear(in_features=64, out_features=256"));
}

TEST_CASE("the same seed gives bit-identical initial weights; another seed does not", "[nn]") {
  const auto a = make_mlp(42);
  const auto b = make_mlp(42);
  const auto c = make_mlp(43);
  for (size_t i = 0; i < a->parameters().size(); ++i) {
    CHECK(a->parameters()[i].to_host_float() == b->parameters()[i].to_host_float());
    CHECK(a->parameters()[i].to_host_float() != c->parameters()[i].to_host_float());
  }
}

TEST_CASE("Kaiming-uniform bounds follow PyTorch's defaults", "[nn]") {
  const auto model = make_mlp(3);
  const std::vector<float> w = model->named_parameters()[0].second.to_host_float();
  const std::vector<float> b = model->named_parameters()[1].second.to_host_float();
  const double weight_bound = std::sqrt(6.0 / (6.0 * 64.0));  // a = sqrt(5): 1 / sqrt(fan_in)
  double w_max = 0.0, b_max = 0.0;
  for (float v : w) w_max = std::max(w_max, static_cast<double>(std::abs(v)));
  for (float v : b) b_max = std::max(b_max, static_cast<double>(std::abs(v)));
  CHECK(w_max <= weight_bound);
  CHECK(w_max > 0.95 * weight_bound);  // 16384 draws come close to the bound
  CHECK(b_max <= 1.0 / 8.0);
  CHECK(b_max > 0.9 / 8.0);
  const auto xavier = make_mlp(3, InitScheme::kXavierUniform);
  const std::vector<float> xw = xavier->named_parameters()[0].second.to_host_float();
  double x_max = 0.0;
  for (float v : xw) x_max = std::max(x_max, static_cast<double>(std::abs(v)));
  CHECK(x_max <= std::sqrt(6.0 / (64.0 + 256.0)) * (1.0 + 1e-6));  // f32 rounding of the bound
  CHECK(x_max > 0.95 * std::sqrt(6.0 / (64.0 + 256.0)));
  check_values(xavier->named_parameters()[1].second, std::vector<float>(256, 0.0f), 0.0);
}

TEST_CASE("load_state_dict copies values and rejects mismatches by name", "[nn]") {
  const auto source = make_mlp(5);
  const auto target = make_mlp(6);
  target->load_state_dict(source->state_dict());
  for (size_t i = 0; i < source->parameters().size(); ++i) {
    CHECK(source->parameters()[i].to_host_float() == target->parameters()[i].to_host_float());
    CHECK_FALSE(source->parameters()[i].shares_storage_with(target->parameters()[i]));
  }
  NamedTensors state = source->state_dict();
  state[2].second = zeros({3, 3}, test_device());
  CHECK_THROWS_WITH(target->load_state_dict(state), Catch::Contains("'2.weight'") &&
                                                        Catch::Contains("[3, 3]") &&
                                                        Catch::Contains("[256, 256]"));
  state = source->state_dict();
  state.pop_back();
  CHECK_THROWS_WITH(target->load_state_dict(state), Catch::Contains("missing key '4.bias'"));
  state = source->state_dict();
  state.emplace_back("9.weight", zeros({1}, test_device()));
  CHECK_THROWS_WITH(target->load_state_dict(state), Catch::Contains("unexpected key '9.weight'"));
}

TEST_CASE("a small conv net runs forward with the expected shapes", "[nn]") {
  InitContext init{test_device(), InitScheme::kKaimingUniform, 7};
  Sequential net;
  net.emplace<Conv2d>(init, 1, 4, 3, 1, 1);
  net.emplace<ReLU>();
  net.emplace<MaxPool2d>(2);
  net.emplace<AvgPool2d>(2, 1);
  net.emplace<Flatten>();
  net.emplace<LayerNorm>(init, std::vector<int64_t>{36});
  net.emplace<GELU>();
  net.emplace<Linear>(init, 36, 10);
  net.emplace<Tanh>();
  net.emplace<Sigmoid>();
  const Tensor x = rand_uniform({5, 1, 8, 8}, -1.0, 1.0, 1, 0, test_device());
  const Tensor y = net(x);
  CHECK(y.shape() == Shape{5, 10});
  std::vector<std::string> names;
  for (const auto& [name, tensor] : net.named_parameters()) names.push_back(name);
  CHECK(names ==
        std::vector<std::string>{"0.weight", "0.bias", "5.weight", "5.bias", "7.weight", "7.bias"});
  CHECK(net.named_parameters()[0].second.shape() == Shape{4, 1, 3, 3});
}

TEST_CASE("Dropout acts only in training mode and advances its counter", "[nn]") {
  Sequential net;
  Dropout& drop = net.emplace<Dropout>(0.5, 11);
  const Tensor x = ones({100}, test_device());
  const std::vector<float> first = net(x).to_host_float();
  CHECK(drop.offset() == 100);
  const std::vector<float> second = net(x).to_host_float();
  CHECK(first != second);
  drop.set_random_state(11, 0);
  CHECK(net(x).to_host_float() == first);
  net.eval();
  CHECK_FALSE(drop.is_training());
  CHECK(net(x).to_host_float() == std::vector<float>(100, 1.0f));
}
