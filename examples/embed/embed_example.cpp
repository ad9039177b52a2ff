// Embedding switchyard in an application: pick a device the way the CLI does (a YAML text here;
// a file works the same), build a model with the nn API, train it on data the application already
// holds, and predict. Nothing names a backend: the same code runs on cuda, vulkan, onednn or the
// reference, whichever the list finds usable first. SWITCHYARD_BACKENDS, SWITCHYARD_DEVICE and
// SWITCHYARD_FALLBACK apply as they do to the CLI (RuntimeSettings::use_environment = false would
// ignore them).
//
// Exit status: 0 when the model learned the task (test accuracy >= 0.9), 1 otherwise, 2 on an
// error. Prints the device it ran on and the figures.
#include <cstdio>
#include <memory>
#include <vector>

#include "switchyard/switchyard.hpp"

namespace sy = switchyard;

namespace {

// Points in [-1, 1]^2 labelled by their quadrant (4 classes), from a fixed LCG so that every run
// sees the same data.
struct Points {
  std::vector<float> xy;
  std::vector<int32_t> label;
};

Points make_points(int count, uint32_t seed) {
  Points p;
  uint32_t state = seed;
  auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f;
  };
  for (int i = 0; i < count; ++i) {
    const float x = next(), y = next();
    p.xy.push_back(x);
    p.xy.push_back(y);
    p.label.push_back((x >= 0 ? 0 : 1) + (y >= 0 ? 0 : 2));
  }
  return p;
}

int run() {
  const sy::Config config = sy::value_or_throw(sy::Config::load_string(
      "backends: [cuda, vulkan, onednn, reference]\nfallback: warn\n", "embedded.yaml"));
  const sy::RunDevice run = sy::value_or_throw(sy::open_run_device(config.runtime()));
  for (const auto& variable : run.environment) std::printf("environment: %s\n", variable.c_str());
  if (!run.fallback_note.empty()) std::fprintf(stderr, "%s\n", run.fallback_note.c_str());
  for (const auto& warning : run.warnings) std::fprintf(stderr, "warning: %s\n", warning.c_str());
  const auto& device = run.device;
  std::printf("device: %s (%s)\n", device->id().c_str(), device->info().name.c_str());

  const Points train = make_points(512, 1), test = make_points(256, 2);
  const sy::Tensor x = sy::Tensor::from_host(train.xy, sy::Shape{512, 2}, device);
  const sy::Tensor y = sy::Tensor::from_host(train.label, sy::Shape{512}, device);
  const sy::Tensor x_test = sy::Tensor::from_host(test.xy, sy::Shape{256, 2}, device);
  const sy::Tensor y_test = sy::Tensor::from_host(test.label, sy::Shape{256}, device);

  sy::InitContext init{device, sy::InitScheme::kKaimingUniform, /*seed=*/7, 0, sy::DType::kF32};
  sy::Sequential model;
  model.add(std::make_shared<sy::Linear>(init, 2, 32, true));
  model.add(std::make_shared<sy::ReLU>());
  model.add(std::make_shared<sy::Linear>(init, 32, 4, true));
  sy::AdamOptions adam;
  adam.lr = 0.01;
  sy::Adam optimizer(model.parameters(), adam);

  double loss = 0;
  for (int step = 0; step < 200; ++step) {
    const sy::Tensor batch_loss = sy::cross_entropy(model.forward(x), y);
    batch_loss.backward();
    optimizer.step();
    optimizer.zero_grad();
    if (step % 50 == 49) {
      loss = batch_loss.item();
      std::printf("step %d: loss %.4f\n", step + 1, loss);
    }
  }
  model.eval();
  const sy::NoGradGuard no_grad;
  const double accuracy = sy::accuracy(model.forward(x_test), y_test);
  std::printf("test accuracy %.4f\n", accuracy);
  return accuracy >= 0.9 ? 0 : 1;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const sy::Error& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 2;
  }
}
