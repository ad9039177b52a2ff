// Modules shared between threads for inference (nn.h, "Threads"): a model in eval mode, its
// forward pass run by many threads at once, gives every thread the bits one thread gets, on every
// backend built here. Under ThreadSanitizer (tools/test --tsan, label "threads") the same calls
// prove the absence of data races in the core's tensor, autograd and dispatch code and in the
// reference plugin: with gradients recorded too, since eval-mode forward passes that record
// separate graphs over shared parameters are allowed.
#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend_support.h"
#include "switchyard/autograd.h"
#include "switchyard/nn.h"
#include "switchyard/nn_sequence.h"
#include "tensor/tensor_test_support.h"
#include "threads/thread_calls.h"

namespace switchyard {
namespace {

using testing::optional_device;
using testing::test_device;

constexpr int kThreads = 6;

struct Case {
  std::string name;
  std::shared_ptr<Module> model;
  Tensor input;
};

std::vector<Case> make_cases(const std::shared_ptr<Device>& device) {
  std::vector<Case> cases;
  {
    InitContext init{device, InitScheme::kKaimingUniform, 11};
    auto cnn = std::make_shared<Sequential>();
    cnn->emplace<Conv2d>(init, 3, 8, 3, 1, 1);
    cnn->emplace<BatchNorm>(init, 8, 2);
    cnn->emplace<ReLU>();
    cnn->emplace<MaxPool2d>(2);
    cnn->emplace<Conv2d>(init, 8, 8, 3, 1, 1, 1, true, 8);  // depthwise
    cnn->emplace<AvgPool2d>(2);
    cnn->emplace<Flatten>();
    cnn->emplace<Dropout>(0.3, 5);
    cnn->emplace<Linear>(init, 8 * 4 * 4, 10);
    const Tensor x = rand_uniform({3, 3, 16, 16}, -1.0, 1.0, 21, 0, device);
    {  // one training-mode pass moves BatchNorm's running statistics off their initial values
      NoGradGuard no_grad;
      (*cnn)(x);
    }
    cases.push_back({"cnn", cnn, x});
  }
  {
    InitContext init{device, InitScheme::kKaimingUniform, 12};
    const RecurrentOptions options{.input_size = 6,
                                   .hidden_size = 8,
                                   .num_layers = 2,
                                   .batch_first = true,
                                   .dropout = 0.2,
                                   .bidirectional = true};
    cases.push_back({"lstm", std::make_shared<LSTM>(init, options),
                     rand_uniform({2, 7, 6}, -1.0, 1.0, 22, 0, device)});
    cases.push_back({"gru", std::make_shared<GRU>(init, options),
                     rand_uniform({2, 7, 6}, -1.0, 1.0, 23, 0, device)});
  }
  {
    InitContext init{device, InitScheme::kKaimingUniform, 13};
    const TransformerEncoderOptions layer{
        .d_model = 16, .nhead = 2, .dim_feedforward = 32, .batch_first = true};
    cases.push_back({"transformer", std::make_shared<TransformerEncoder>(init, layer, 2, true),
                     rand_uniform({2, 5, 16}, -1.0, 1.0, 24, 0, device)});
  }
  for (Case& c : cases) c.model->eval();
  return cases;
}

// Runs `model` on `input` from kThreads threads at once, each `calls` times, with gradients
// recorded or not, and returns the first result of every call that differs from `expected`.
std::vector<std::string> mismatches(Module& model, const Tensor& input,
                                    const std::vector<float>& expected, bool record_gradients) {
  const int calls = testing::thread_calls(50, 2);
  return testing::problems_on_threads(kThreads, [&](int t) -> std::string {
    std::optional<NoGradGuard> no_grad;
    if (!record_gradients) no_grad.emplace();
    for (int call = 0; call < calls; ++call) {
      const Tensor y = model(input);
      if (y.to_host_float() != expected) {
        return "thread " + std::to_string(t) + " call " + std::to_string(call) + " differs";
      }
    }
    return "";
  });
}

// The one-thread result with and without recording: onednn's LSTM and GRU run a training kernel
// when gradients are recorded (it keeps what backward needs) and an inference kernel otherwise,
// which may differ in the last bit (docs/determinism.md), so each mode has its own expectation.
std::vector<float> one_thread(Module& model, const Tensor& input, bool record_gradients) {
  std::optional<NoGradGuard> no_grad;
  if (!record_gradients) no_grad.emplace();
  return model(input).to_host_float();
}

void check_shared_inference(const std::shared_ptr<Device>& device) {
  for (Case& c : make_cases(device)) {
    for (bool record : {false, true}) {
      INFO(c.name << " on " << device->info().name << ", "
                  << (record ? "recording gradients" : "under NoGradGuard"));
      const std::vector<float> expected = one_thread(*c.model, c.input, record);
      REQUIRE_FALSE(expected.empty());
      CHECK(mismatches(*c.model, c.input, expected, record) == std::vector<std::string>{});
    }
  }
}

TEST_CASE("a model in eval mode shared by many threads gives each the one-thread bits",
          "[threads][nn]") {
  check_shared_inference(test_device());
  for (const std::string backend : {"onednn", "vulkan", "cuda"}) {
    if (!testing::plugin_built(backend) && !testing::backend_required(backend)) continue;
    const std::shared_ptr<Device> device = optional_device(backend);
    if (device != nullptr) check_shared_inference(device);
  }
}

}  // namespace
}  // namespace switchyard
