// train.capture (docs/capture.md "Training steps"): a training run whose steps are recorded and
// replayed ends with the bits of the same run done eagerly, on every backend, for models that use
// every kind of per-step state a replay must renew: dropout masks and a VAE's noise (new seeds
// each step), Adam's step count and a schedule's learning rate, BatchNorm's running statistics and
// batch count, attention with dropout, recurrent layers. On vulkan the replays are one native
// submission each, the changing parameters written into the captured graph (graph_update).
#include <catch2/catch.hpp>

#include <cstring>

#include "backend_support.h"
#include "switchyard/config.h"
#include "switchyard/train.h"
#include "train/trainer_test_support.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

struct RunResult {
  std::vector<uint64_t> bits;  // every parameter and buffer (BatchNorm's statistics and count)
  std::vector<double> losses;  // each epoch's train loss, then its test loss
  std::string capture;         // TrainSummary::capture
};

// Every parameter's and buffer's bits, in state_dict order (BatchNorm's i64 count as it is).
std::vector<uint64_t> state_bits(Module& model) {
  std::vector<uint64_t> bits;
  for (const auto& [name, tensor] : model.state_dict()) {
    if (tensor.dtype() == DType::kI64) {
      for (const int64_t value : tensor.to_host_int64())
        bits.push_back(static_cast<uint64_t>(value));
      continue;
    }
    for (const float value : tensor.to_host_float()) {
      uint32_t word = 0;
      std::memcpy(&word, &value, sizeof(word));
      bits.push_back(word);
    }
  }
  return bits;
}

RunResult train(const std::string& yaml, const std::shared_ptr<Device>& device,
                const std::string& capture, const std::vector<std::string>& overrides = {}) {
  use_repository_data();
  std::vector<std::string> all = {"train.capture=" + capture, "train.progress=none",
                                  "train.checkpoint=none"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  const Config config = value_or_throw(Config::load_string(yaml, "capture.yaml", all));
  Trainer trainer(value_or_throw(TrainConfig::from_config(config)), device);
  const TrainSummary summary = trainer.run();
  RunResult result;
  result.bits = state_bits(trainer.model());
  for (const EpochMetrics& m : summary.history) {
    result.losses.push_back(m.train_loss);
    result.losses.push_back(m.test_loss);
  }
  result.capture = summary.capture;
  return result;
}

// A run with capture on against the same run eager, on `device`: the same bits and losses, and
// steps replayed (natively where the plugin captures).
void check_replay_matches_eager(const std::string& name, const std::string& yaml,
                                const std::shared_ptr<Device>& device,
                                const std::vector<std::string>& overrides = {}) {
  INFO(name << " on " << device->id());
  const RunResult eager = train(yaml, device, "off", overrides);
  const RunResult replayed = train(yaml, device, "on", overrides);
  INFO("capture: " << replayed.capture);
  CHECK(eager.capture == "off");
  CHECK(replayed.capture.find(" steps replayed") != std::string::npos);
  CHECK(replayed.capture.rfind("0 steps replayed", 0) != 0);
  CHECK(replayed.capture.find("eager:") == std::string::npos);
  // The recording's own pool: intermediates whose uses do not overlap share memory.
  CHECK(replayed.capture.find("intermediates pooled") != std::string::npos);
  if (native_capture_available(*device)) {
    CHECK(replayed.capture.find("captured natively") != std::string::npos);
    CHECK(replayed.capture.find("op by op") == std::string::npos);
  }
  CHECK(replayed.losses == eager.losses);
  REQUIRE(replayed.bits.size() == eager.bits.size());
  CHECK(replayed.bits == eager.bits);
}

// The digits data set, with `extra` keys for the data section.
std::string digits(const std::string& extra = "") {
  return "seed: 5\n"
         "data: {dataset: digits, test_fraction: 0.2, split_seed: 0, scale: divide, divisor: 16.0" +
         extra + "}\n";
}

// Dropout (a new mask each step), Adam (its step count), a step schedule (the learning rate).
const std::string kMlp = digits() +
                         "model:\n"
                         "  layers:\n"
                         "    - {type: linear, out_features: 32}\n"
                         "    - {type: relu}\n"
                         "    - {type: dropout, p: 0.3}\n"
                         "    - {type: linear, out_features: 10}\n"
                         "optimizer: {type: adam, lr: 0.003}\n"
                         "schedule: {type: step, step_size: 1, gamma: 0.5}\n"
                         "train: {epochs: 3, batch_size: 100}\n";

// BatchNorm (running statistics and num_batches_tracked), dropout, SGD with momentum.
const std::string kCnn = digits(", sample_shape: [1, 8, 8]") +
                         "model:\n"
                         "  layers:\n"
                         "    - {type: conv2d, out_channels: 8, kernel_size: 3, padding: 1}\n"
                         "    - {type: batchnorm2d}\n"
                         "    - {type: relu}\n"
                         "    - {type: maxpool2d, kernel_size: 2}\n"
                         "    - {type: dropout, p: 0.2}\n"
                         "    - {type: linear, out_features: 10}\n"
                         "optimizer: {type: sgd, lr: 0.05, momentum: 0.9}\n"
                         "train: {epochs: 2, batch_size: 200}\n";

// Attention with dropout inside the fused op, layer norms, Adam(W).
const std::string kTransformer =
    digits(", sample_shape: [8, 8]") +
    "model:\n"
    "  layers:\n"
    "    - {type: linear, out_features: 16}\n"
    "    - {type: transformer_encoder, heads: 2, feedforward: 32, num_layers: 1, dropout: 0.1}\n"
    "    - {type: sequence_pool, mode: mean}\n"
    "    - {type: linear, out_features: 10}\n"
    "optimizer: {type: adamw, lr: 0.003}\n"
    "train: {epochs: 2, batch_size: 300}\n";

// Recurrent layers, with dropout between them.
const std::string kGru = digits(", sample_shape: [8, 8]") +
                         "model:\n"
                         "  layers:\n"
                         "    - {type: gru, hidden_size: 16, num_layers: 2, dropout: 0.2}\n"
                         "    - {type: sequence_pool, mode: last}\n"
                         "    - {type: linear, out_features: 10}\n"
                         "optimizer: {type: adam, lr: 0.01}\n"
                         "train: {epochs: 2, batch_size: 300}\n";

// onednn and cuda (on a GPU machine: tools/gpu-check's capture-cuda step) run deterministic, so
// that nothing but the replay can make the two runs differ: cuda's float atomics, and onednn's
// adaptive threads, which drop an op to one thread while the machine is busy (CI runs tests side by
// side) and so change a split summation's order between the eager and the replayed run.
std::vector<std::shared_ptr<Device>> devices_under_test() {
  std::vector<std::shared_ptr<Device>> devices = {reference_device()};
  for (const std::string backend : {"onednn", "vulkan", "cuda"}) {
    if (auto device = optional_device(backend, {{"deterministic", "true"}})) {
      devices.push_back(device);
    }
  }
  return devices;
}

}  // namespace

TEST_CASE("a replayed training run ends with the eager run's bits, on every backend",
          "[train][capture]") {
  for (const auto& device : devices_under_test()) {
    check_replay_matches_eager("mlp", kMlp, device);
    check_replay_matches_eager("cnn", kCnn, device);
    check_replay_matches_eager("transformer", kTransformer, device);
    check_replay_matches_eager("gru", kGru, device);
  }
}

TEST_CASE("bf16 autocast steps replay too", "[train][capture]") {
  // Autocast's casts of the f32 master weights are recorded ops like any other.
  for (const auto& device : devices_under_test()) {
    check_replay_matches_eager("mlp bf16", kMlp, device, {"train.precision=bf16"});
  }
}

TEST_CASE("a VAE's noise is drawn anew in every replayed step", "[train][capture]") {
  const std::string vae =
      "seed: 2\n"
      "data:\n"
      "  dataset: " SWITCHYARD_SOURCE_DIR
      "/data/co2.csv\n"
      "  series: {column: co2, window: 26, target: input, gaps: interpolate, offset: last}\n"
      "  test_fraction: 0.2\n"
      "  scale: standard\n"
      "  target_scale: standard\n"
      "model:\n"
      "  layers:\n"
      "    - {type: linear, out_features: 16}\n"
      "    - {type: tanh}\n"
      "    - {type: vae_latent, latent: 4, beta: 0.01}\n"
      "    - {type: linear, out_features: 26}\n"
      "loss: mse\n"
      "optimizer: {type: adam, lr: 0.002}\n"
      "train: {epochs: 2, batch_size: 64}\n";
  check_replay_matches_eager("vae", vae, reference_device());
}

TEST_CASE("train.capture says why a run's steps stay eager", "[train][capture]") {
  const auto device = reference_device();
  SECTION("gradient accumulation") {
    const RunResult run = train(kMlp, device, "on", {"train.gradient_accumulation_steps=2"});
    CHECK(run.capture ==
          "eager: train.gradient_accumulation_steps adds several passes' "
          "gradients before a step");
  }
  SECTION("f16 loss scaling") {
    const RunResult run = train(kMlp, device, "on", {"train.precision=f16", "train.epochs=1"});
    CHECK(run.capture == "eager: f16's loss scale changes between steps");
  }
  SECTION("auto on a backend without native capture") {
    const RunResult run = train(kMlp, device, "auto", {"train.epochs=1"});
    CHECK(run.capture == "off (auto: the reference plugin has no native capture)");
  }
}

TEST_CASE("auto replays natively where the plugin captures", "[train][capture]") {
  for (const std::string backend : {"vulkan", "cuda"}) {
    const auto device = optional_device(backend, {{"deterministic", "true"}});
    if (device == nullptr) continue;
    const RunResult eager = train(kMlp, device, "off", {"train.epochs=2"});
    const RunResult automatic = train(kMlp, device, "auto", {"train.epochs=2"});
    INFO(backend << ": " << automatic.capture);
    CHECK(automatic.capture.find("captured natively") != std::string::npos);
    CHECK(automatic.bits == eager.bits);
  }
}
