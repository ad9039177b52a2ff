// The whole-sequence recurrent ops (LSTM_SEQUENCE, GRU_SEQUENCE) against the composed path they
// replace: the LSTM and GRU layers give the same outputs and final states both ways, for one and
// two layers, one and two directions, with and without biases, given and zero initial states,
// batch 1 and 3, batch-first or not; and the profile names the path that ran.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

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

void check_variant(const std::shared_ptr<Device>& device, const Variant& v) {
  INFO(describe(v) << " on " << device->info().name);
  constexpr int64_t kSteps = 5, kInput = 4, kHidden = 6;
  InitContext init{device, InitScheme::kKaimingUniform, 11};
  RecurrentOptions options;
  options.input_size = kInput;
  options.hidden_size = kHidden;
  options.num_layers = v.layers;
  options.bias = v.bias;
  options.bidirectional = v.bidirectional;
  options.batch_first = v.batch_first;
  std::shared_ptr<RecurrentBase> layer;
  if (v.lstm) {
    layer = std::make_shared<LSTM>(init, options);
  } else {
    layer = std::make_shared<GRU>(init, options);
  }
  const Shape input_shape =
      v.batch_first ? Shape{v.batch, kSteps, kInput} : Shape{kSteps, v.batch, kInput};
  const Tensor x = rand_uniform(input_shape, -1.0, 1.0, 3, 0, device);
  const Shape state{v.layers * (v.bidirectional ? 2 : 1), v.batch, kHidden};
  const Tensor h0 = v.initial_state ? rand_uniform(state, -1.0, 1.0, 4, 0, device) : Tensor();
  const Tensor c0 =
      v.initial_state && v.lstm ? rand_uniform(state, -1.0, 1.0, 5, 0, device) : Tensor();

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

TEST_CASE("training composes the sequence: gradients need the per-step path", "[nn][recurrent]") {
  const std::shared_ptr<Device> device = optional_device("reference");
  if (device == nullptr) return;
  InitContext init{device, InitScheme::kKaimingUniform, 11};
  RecurrentOptions options;
  options.input_size = 3;
  options.hidden_size = 4;
  LSTM layer(init, options);
  const Tensor x = rand_uniform({4, 2, 3}, -1.0, 1.0, 3, 0, device);
  const std::vector<std::string> spans = spans_of([&] { (void)layer.run(x); });
  CHECK(std::count(spans.begin(), spans.end(), "lstm_sequence: composed") == 1);
  CHECK(std::count(spans.begin(), spans.end(), "lstm_sequence: fused") == 0);
}

}  // namespace
}  // namespace switchyard
