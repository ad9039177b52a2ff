// The same model code on every backend built here: identical initial weights from the same seed
// and the same loss (to a stated tolerance) after a few training steps. Backends that are not
// built or have no usable device on this machine are reported and skipped.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>

#include "backend_support.h"
#include "switchyard/nn.h"
#include "switchyard/nn_sequence.h"
#include "switchyard/optim.h"
#include "switchyard/plugin.h"
#include "switchyard/status.h"
#include "tensor/tensor_test_support.h"

using namespace switchyard;
using switchyard::testing::optional_device;
using switchyard::testing::test_device;

namespace {

struct RunResult {
  std::vector<std::vector<float>> initial_weights;
  std::vector<double> losses;
};

// A 16-32-4 MLP, five SGD steps on fixed data.
RunResult train_briefly(const std::shared_ptr<Device>& device) {
  InitContext init{device, InitScheme::kKaimingUniform, 77};
  Sequential model;
  model.emplace<Linear>(init, 16, 32);
  model.emplace<ReLU>();
  model.emplace<Linear>(init, 32, 4);
  RunResult result;
  for (const Tensor& p : model.parameters()) result.initial_weights.push_back(p.to_host_float());
  const Tensor x = rand_uniform({24, 16}, -1.0, 1.0, 5, 0, device);
  std::vector<int64_t> labels;
  for (int i = 0; i < 24; ++i) labels.push_back(i % 4);
  const Tensor y = Tensor::from_host(labels, {24}, device);
  Sgd sgd(model.parameters(), SgdOptions{0.1, 0.9});
  for (int step = 0; step < 5; ++step) {
    sgd.zero_grad();
    const Tensor loss = cross_entropy(model(x), y);
    loss.backward();
    sgd.step();
    result.losses.push_back(loss.item());
  }
  return result;
}

}  // namespace

TEST_CASE("every built backend draws the same initial weights and follows the same losses",
          "[nn][cross-backend]") {
  const RunResult expected = train_briefly(test_device());
  for (const std::string backend : {"onednn", "vulkan", "cuda"}) {
    const std::shared_ptr<Device> device = optional_device(backend);
    if (device == nullptr) continue;
    INFO("backend " << backend << " (" << device->info().name << ")");
    const RunResult got = train_briefly(device);
    REQUIRE(got.initial_weights.size() == expected.initial_weights.size());
    for (size_t i = 0; i < got.initial_weights.size(); ++i) {
      CHECK(got.initial_weights[i] == expected.initial_weights[i]);
    }
    for (size_t step = 0; step < got.losses.size(); ++step) {
      INFO("step " << step);
      // Reordered f32 accumulation is the only allowed difference: 1e-4 relative is ample.
      CHECK(got.losses[step] == Approx(expected.losses[step]).epsilon(1e-4));
    }
  }
}

TEST_CASE("an Embedding index outside the table is an error or a NaN row on every backend",
          "[nn][cross-backend][embedding]") {
  // A synchronous backend's GATHER refuses it; an asynchronous one (vulkan, cuda) skips the row,
  // which handed on whatever its memory held. The row is NaN there now, the others exact.
  for (const std::string backend : {"reference", "onednn", "vulkan", "cuda"}) {
    const std::shared_ptr<Device> device = optional_device(backend);
    if (device == nullptr) continue;
    INFO("backend " << backend);
    InitContext init{device, InitScheme::kKaimingUniform, 5};
    Embedding embedding(init, 4, 3);
    const std::vector<float> table = embedding.parameters()[0].to_host_float();
    const bool asynchronous = (device->plugin().capabilities() & SY_CAP_ASYNC) != 0;
    for (const int64_t outside : {int64_t{4}, int64_t{-1}, int64_t{1} << 40}) {
      INFO("index " << outside);
      const Tensor ids = Tensor::from_host(std::vector<int64_t>{2, outside, 0}, {3}, device);
      if (!asynchronous) {
        CHECK_THROWS(embedding.forward(ids).to_host_float());
        continue;
      }
      const std::vector<float> rows = embedding.forward(ids).to_host_float();
      REQUIRE(rows.size() == 9);
      for (size_t k = 0; k < 3; ++k) {
        CHECK(rows[k] == table[6 + k]);
        CHECK(std::isnan(rows[3 + k]));
        CHECK(rows[6 + k] == table[k]);
      }
    }
  }
}

TEST_CASE("index_select_or_nan refuses an index outside for integer data on every backend",
          "[nn][cross-backend]") {
  // Integer data has no NaN: an asynchronous backend reads the indices back and refuses.
  for (const std::string backend : {"reference", "onednn", "vulkan", "cuda"}) {
    const std::shared_ptr<Device> device = optional_device(backend);
    if (device == nullptr) continue;
    INFO("backend " << backend);
    const Tensor data = Tensor::from_host(std::vector<int64_t>{10, 11, 12}, {3}, device);
    const auto pick = [&](int64_t index) {
      return index_select_or_nan(data, 0,
                                 Tensor::from_host(std::vector<int64_t>{2, index}, {2}, device))
          .to_host_int64();
    };
    CHECK(pick(0) == std::vector<int64_t>{12, 10});
    CHECK_THROWS_WITH(pick(3), Catch::Contains("3") && Catch::Contains("outside [0, 3)"));
  }
}
