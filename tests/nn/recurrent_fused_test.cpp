// The whole-sequence recurrent ops (LSTM_SEQUENCE, GRU_SEQUENCE) against the composed path they
// replace: the LSTM and GRU layers give the same outputs and final states both ways, for one and
// two layers, one and two directions, with and without biases, given and zero initial states,
// batch 1 and 3, batch-first or not; and the profile names the path that ran. Training on the
// fused ops (the forward with ws, then LSTM_SEQUENCE_BACKWARD or GRU_SEQUENCE_BACKWARD) gives the
// composed path's gradients, and passes a finite-difference check.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "backend_support.h"
#include "nn/fused_test_support.h"
#include "nn/recurrent_sequence.h"
#include "switchyard/autograd.h"
#include "switchyard/nn.h"
#include "switchyard/nn_sequence.h"
#include "switchyard/profile.h"
#include "tensor/tensor_test_support.h"

namespace switchyard {
namespace {

using testing::max_abs_difference;
using testing::optional_device;
using testing::spans_of;

struct Variant {
  bool lstm;
  int layers;
  bool bidirectional;
  bool bias;
  bool initial_state;
  int64_t batch;
  bool batch_first;
};

std::string describe(const Variant& v) {
  return std::string(v.lstm ? "LSTM" : "GRU") + " layers=" + std::to_string(v.layers) +
         " bidirectional=" + (v.bidirectional ? "1" : "0") + " bias=" + (v.bias ? "1" : "0") +
         " initial_state=" + (v.initial_state ? "1" : "0") + " batch=" + std::to_string(v.batch) +
         " batch_first=" + (v.batch_first ? "1" : "0");
}

// A variant's layer (weights from `seed`), its input and its initial states (undefined where the
// variant has none).
struct Setup {
  std::shared_ptr<RecurrentBase> layer;
  Tensor x, h0, c0;
  Shape state;
};

Setup make_setup(const std::shared_ptr<Device>& device, const Variant& v, int64_t steps,
                 int64_t input, int64_t hidden, uint64_t seed) {
  InitContext init{device, InitScheme::kKaimingUniform, seed};
  RecurrentOptions options;
  options.input_size = input;
  options.hidden_size = hidden;
  options.num_layers = v.layers;
  options.bias = v.bias;
  options.bidirectional = v.bidirectional;
  options.batch_first = v.batch_first;
  Setup s;
  if (v.lstm) {
    s.layer = std::make_shared<LSTM>(init, options);
  } else {
    s.layer = std::make_shared<GRU>(init, options);
  }
  const Shape input_shape =
      v.batch_first ? Shape{v.batch, steps, input} : Shape{steps, v.batch, input};
  s.x = rand_uniform(input_shape, -1.0, 1.0, 3, 0, device);
  s.state = Shape{v.layers * (v.bidirectional ? 2 : 1), v.batch, hidden};
  if (v.initial_state) s.h0 = rand_uniform(s.state, -1.0, 1.0, 4, 0, device);
  if (v.initial_state && v.lstm) s.c0 = rand_uniform(s.state, -1.0, 1.0, 5, 0, device);
  return s;
}

void check_variant(const std::shared_ptr<Device>& device, const Variant& v) {
  INFO(describe(v) << " on " << device->info().name);
  const Setup setup = make_setup(device, v, 5, 4, 6, 11);
  const std::shared_ptr<RecurrentBase>& layer = setup.layer;
  const Tensor &x = setup.x, &h0 = setup.h0, &c0 = setup.c0;
  const Shape& state = setup.state;

  NoGradGuard no_grad;
  RecurrentResult fused;
  const std::vector<std::string> fused_spans = spans_of([&] { fused = layer->run(x, h0, c0); });
  RecurrentResult composed;
  std::vector<std::string> composed_spans;
  {
    detail::ComposedRecurrentScope force_composed;
    composed_spans = spans_of([&] { composed = layer->run(x, h0, c0); });
  }
  const std::string prefix = v.lstm ? "lstm_sequence: " : "gru_sequence: ";
  const size_t sequences = static_cast<size_t>(state[0]);
  CHECK(std::count(fused_spans.begin(), fused_spans.end(), prefix + "fused") ==
        static_cast<std::ptrdiff_t>(sequences));
  CHECK(std::count(composed_spans.begin(), composed_spans.end(), prefix + "composed") ==
        static_cast<std::ptrdiff_t>(sequences));
  // f32 products summed in different orders, over at most 2 layers x 5 steps of values near 1.
  constexpr double kTolerance = 2e-5;
  CHECK(max_abs_difference(fused.output, composed.output) <= kTolerance);
  CHECK(max_abs_difference(fused.h_n, composed.h_n) <= kTolerance);
  if (v.lstm) CHECK(max_abs_difference(fused.c_n, composed.c_n) <= kTolerance);
  // Not vacuous: the outputs move away from zero.
  CHECK(max_abs_difference(fused.output, zeros_like(fused.output)) > 0.01);
}

// kinds: true for the LSTM, false for the GRU (a device may have only one of the two ops).
void check_all_variants(const std::shared_ptr<Device>& device,
                        std::initializer_list<bool> kinds = {true, false}) {
  for (bool lstm : kinds) {
    for (int layers : {1, 2}) {
      for (bool bidirectional : {false, true}) {
        for (bool bias : {true, false}) {
          for (bool initial_state : {true, false}) {
            for (int64_t batch : {int64_t{1}, int64_t{3}}) {
              const bool batch_first = batch == 3 && layers == 2;
              check_variant(device,
                            {lstm, layers, bidirectional, bias, initial_state, batch, batch_first});
            }
          }
        }
      }
    }
  }
}

TEST_CASE("fused and composed LSTM/GRU agree on reference", "[nn][recurrent]") {
  const std::shared_ptr<Device> device = optional_device("reference");
  if (device == nullptr) return;
  REQUIRE(device->supports(SY_OP_LSTM_SEQUENCE, SY_DTYPE_F32));
  check_all_variants(device);
}

TEST_CASE("fused and composed LSTM/GRU agree on onednn", "[nn][recurrent][onednn]") {
  const std::shared_ptr<Device> device = optional_device("onednn");
  if (device == nullptr) return;
  REQUIRE(device->supports(SY_OP_GRU_SEQUENCE, SY_DTYPE_F32));
  check_all_variants(device);
}

TEST_CASE("fused and composed LSTM/GRU agree on vulkan", "[nn][recurrent][vulkan]") {
  const std::shared_ptr<Device> device = optional_device("vulkan");
  if (device == nullptr) return;
  REQUIRE(device->supports(SY_OP_LSTM_SEQUENCE, SY_DTYPE_F32));
  REQUIRE(device->supports(SY_OP_GRU_SEQUENCE, SY_DTYPE_F32));
  check_all_variants(device);
}

TEST_CASE("onednn sees weights rewritten in place between fused calls", "[nn][recurrent][onednn]") {
  // The plugin keeps converted weights by buffer; a changed weight must not reuse them. Batch 2
  // runs an LSTM on the plugin's own recurrence (packed W_hh), batch 9 on oneDNN's primitive.
  const std::shared_ptr<Device> device = optional_device("onednn");
  if (device == nullptr) return;
  InitContext init{device, InitScheme::kKaimingUniform, 11};
  RecurrentOptions options;
  options.input_size = 8;
  options.hidden_size = 16;
  for (const auto& [lstm, batch] : {std::pair{true, 2}, std::pair{true, 9}, std::pair{false, 2}}) {
    INFO((lstm ? "LSTM" : "GRU") << " batch " << batch);
    std::shared_ptr<RecurrentBase> layer;
    if (lstm) {
      layer = std::make_shared<LSTM>(init, options);
    } else {
      layer = std::make_shared<GRU>(init, options);
    }
    const Tensor x = rand_uniform({6, batch, 8}, -1.0, 1.0, 3, 0, device);
    NoGradGuard no_grad;
    const Tensor before = layer->run(x).output;
    for (Tensor& parameter : layer->parameters()) {
      parameter.copy_(rand_uniform(parameter.shape(), -0.5, 0.5, 9, 0, device));
    }
    const Tensor after = layer->run(x).output;
    Tensor composed;
    {
      detail::ComposedRecurrentScope force_composed;
      composed = layer->run(x).output;
    }
    CHECK(max_abs_difference(after, composed) <= 2e-5);
    CHECK(max_abs_difference(after, before) > 0.01);
  }
}

// Every gradient of a recurrent layer's training pass: the input's, the initial states' and each
// parameter's, from a loss that reads the output and the final states.
struct LayerGradients {
  std::vector<Tensor> grads;
  std::vector<std::string> spans;
};

LayerGradients layer_gradients(RecurrentBase& layer, const Tensor& x, const Tensor& h0,
                               const Tensor& c0, const std::shared_ptr<Device>& device) {
  layer.zero_grad();
  Tensor xi = x.detach().set_requires_grad(true);
  Tensor h0i = h0.defined() ? h0.detach().set_requires_grad(true) : Tensor();
  Tensor c0i = c0.defined() ? c0.detach().set_requires_grad(true) : Tensor();
  LayerGradients result;
  result.spans = spans_of([&] {
    const RecurrentResult r = layer.run(xi, h0i, c0i);
    const Tensor w_out = rand_uniform(r.output.shape(), -1.0, 1.0, 21, 0, device);
    const Tensor w_h = rand_uniform(r.h_n.shape(), -1.0, 1.0, 22, 0, device);
    Tensor loss = sum(r.output * w_out) + sum(r.h_n * w_h);
    if (r.c_n.defined()) {
      loss = loss + sum(r.c_n * rand_uniform(r.c_n.shape(), -1.0, 1.0, 23, 0, device));
    }
    loss.backward();
  });
  result.grads.push_back(xi.grad());
  if (h0i.defined()) result.grads.push_back(h0i.grad());
  if (c0i.defined()) result.grads.push_back(c0i.grad());
  for (const Tensor& parameter : layer.parameters()) result.grads.push_back(parameter.grad());
  return result;
}

void check_training_variant(const std::shared_ptr<Device>& device, const Variant& v) {
  INFO(describe(v) << " on " << device->info().name);
  const Setup setup = make_setup(device, v, 6, 5, 7, 13);
  RecurrentBase& layer = *setup.layer;
  const Tensor &x = setup.x, &h0 = setup.h0, &c0 = setup.c0;
  const Shape& state = setup.state;
  const LayerGradients fused = layer_gradients(layer, x, h0, c0, device);
  LayerGradients composed;
  {
    detail::ComposedRecurrentScope force_composed;
    composed = layer_gradients(layer, x, h0, c0, device);
  }
  const auto sequences = static_cast<std::ptrdiff_t>(state[0]);
  const std::string prefix = v.lstm ? "lstm_sequence: " : "gru_sequence: ";
  CHECK(std::count(fused.spans.begin(), fused.spans.end(), prefix + "fused") == sequences);
  CHECK(std::count(composed.spans.begin(), composed.spans.end(), prefix + "composed") == sequences);
  REQUIRE(fused.grads.size() == composed.grads.size());
  for (size_t k = 0; k < fused.grads.size(); ++k) {
    INFO("gradient " << k);
    REQUIRE(fused.grads[k].defined());
    REQUIRE(composed.grads[k].defined());
    // f32 products summed in different orders through 6 steps and up to 2 layers.
    CHECK(max_abs_difference(fused.grads[k], composed.grads[k]) <= 1e-4);
    // Not vacuous: every gradient moves away from zero.
    CHECK(max_abs_difference(fused.grads[k], zeros_like(fused.grads[k])) > 1e-3);
  }
}

void check_training_variants(const std::shared_ptr<Device>& device) {
  REQUIRE(device->supports(SY_OP_LSTM_SEQUENCE_BACKWARD, SY_DTYPE_F32));
  REQUIRE(device->supports(SY_OP_GRU_SEQUENCE_BACKWARD, SY_DTYPE_F32));
  for (bool lstm : {true, false}) {
    for (int layers : {1, 2}) {
      for (bool bidirectional : {false, true}) {
        for (bool bias : {true, false}) {
          for (bool initial_state : {true, false}) {
            for (int64_t batch : {int64_t{1}, int64_t{5}}) {
              const bool batch_first = batch == 5 && layers == 2;
              check_training_variant(
                  device, {lstm, layers, bidirectional, bias, initial_state, batch, batch_first});
            }
          }
        }
      }
    }
  }
}

TEST_CASE("LSTM/GRU training on the fused ops gives the composed gradients on reference",
          "[nn][recurrent]") {
  const std::shared_ptr<Device> device = optional_device("reference");
  if (device == nullptr) return;
  check_training_variants(device);
}

TEST_CASE("LSTM/GRU training on the fused ops gives the composed gradients on onednn",
          "[nn][recurrent][onednn]") {
  const std::shared_ptr<Device> device = optional_device("onednn");
  if (device == nullptr) return;
  check_training_variants(device);
}

// Central differences through one fused sequence, both directions, every input differentiated.
void check_fused_finite_differences(const std::shared_ptr<Device>& device, bool lstm) {
  for (bool reverse : {false, true}) {
    INFO((lstm ? "LSTM" : "GRU") << " reverse " << reverse << " on " << device->info().name);
    constexpr int64_t kSteps = 4, kBatch = 2, kInput = 3, kHidden = 3;
    const int64_t gates = (lstm ? 4 : 3) * kHidden;
    std::vector<Tensor> inputs{rand_uniform({kSteps, kBatch, kInput}, -1.0, 1.0, 31, 0, device),
                               rand_uniform({kBatch, kHidden}, -1.0, 1.0, 32, 0, device)};
    if (lstm) inputs.push_back(rand_uniform({kBatch, kHidden}, -1.0, 1.0, 33, 0, device));
    inputs.push_back(rand_uniform({gates, kInput}, -0.6, 0.6, 34, 0, device));
    inputs.push_back(rand_uniform({gates, kHidden}, -0.6, 0.6, 35, 0, device));
    inputs.push_back(rand_uniform({gates}, -0.6, 0.6, 36, 0, device));
    inputs.push_back(rand_uniform({gates}, -0.6, 0.6, 37, 0, device));
    const TensorFunction run = [&](const std::vector<Tensor>& in) {
      if (lstm) {
        const detail::RecurrentWeights w{in[3], in[4], in[5], in[6]};
        return detail::lstm_sequence(in[0], in[1], in[2], w, reverse);
      }
      const detail::RecurrentWeights w{in[2], in[3], in[4], in[5]};
      return detail::gru_sequence(in[0], in[1], w, reverse);
    };
    const std::vector<std::string> spans = spans_of([&] {
      const GradCheckResult result = check_gradients(run, inputs);
      INFO(result.detail);
      CHECK(result.passed);
    });
    const std::string prefix = lstm ? "lstm_sequence: " : "gru_sequence: ";
    CHECK(std::count(spans.begin(), spans.end(), prefix + "fused") > 0);
    CHECK(std::count(spans.begin(), spans.end(), prefix + "composed") == 0);
  }
}

TEST_CASE("the fused LSTM and GRU sequences pass a finite-difference gradient check",
          "[nn][recurrent][onednn][vulkan]") {
  for (const char* backend : {"reference", "onednn", "vulkan"}) {
    const std::shared_ptr<Device> device = optional_device(backend);
    if (device == nullptr) continue;
    check_fused_finite_differences(device, true);
    check_fused_finite_differences(device, false);
  }
}

TEST_CASE("LSTM/GRU training on the fused ops gives the composed gradients on vulkan",
          "[nn][recurrent][vulkan]") {
  const std::shared_ptr<Device> device = optional_device("vulkan");
  if (device == nullptr) return;
  check_training_variants(device);
}

}  // namespace
}  // namespace switchyard
