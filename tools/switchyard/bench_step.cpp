// switchyard bench step --layers 784,2048,2048,10 --batch 256: the time of one full training step
// of a ReLU MLP built with the nn API, on the selected device. A step is what a training loop does
// per batch: forward, cross-entropy, backward, SGD-with-momentum update, zero_grad; each timed
// step waits for the device queue, so the figure is the latency a user sees, not the time to
// enqueue. Inputs and labels are synthetic (seeded) and stay on the device, so no host copy is
// timed: this isolates the framework and the backend from data loading, for comparison with the
// same step in PyTorch (tools/bench/torch_peer.py). --precision bf16|f16 is the trainer's mixed
// precision: f32 parameters and optimizer, forward under autocast, and for f16 the loss scaler.
#include <algorithm>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>

#include "bench_ops.h"
#include "cli_common.h"
#include "support/json_io.h"
#include "switchyard/autocast.h"
#include "switchyard/nn.h"
#include "switchyard/ops.h"
#include "switchyard/optim.h"
#include "switchyard/profile.h"
#include "switchyard/tensor.h"
#include "switchyard/train.h"

namespace switchyard::cli {
namespace {

constexpr const char* kUsage =
    "usage: switchyard bench step [--layers 784,2048,2048,10] [--batch 256]\n"
    "                             [--precision f32|bf16|f16] [--repetitions R] [--warmup W]\n"
    "                             [--config FILE] [--set k=v]... [--json] [--profile FILE]";

// Same learning rate and momentum as configs/digits-mlp.yaml; the step time does not depend on
// them, but finite values keep the weights finite over many repetitions.
constexpr double kLearningRate = 0.05;
constexpr double kMomentum = 0.9;
constexpr uint64_t kSeed = 0;

// "784,2048,2048,10" -> {784, 2048, 2048, 10}; at least an input and an output width, all >= 1.
Result<std::vector<int64_t>> parse_layers(const std::string& text) {
  std::vector<int64_t> widths;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    size_t used = 0;
    int64_t width = 0;
    try {
      width = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || width < 1) {
      return invalid_argument("--layers '" + text + "': '" + item +
                              "' is not a positive integer width");
    }
    widths.push_back(width);
  }
  if (widths.size() < 2) {
    return invalid_argument("--layers '" + text +
                            "' needs at least two widths (inputs and classes), e.g. 784,2048,10");
  }
  return widths;
}

Result<DType> parse_float_dtype(const std::string& name) {
  if (name == "f32") return DType::kF32;
  if (name == "bf16") return DType::kBF16;
  if (name == "f16") return DType::kF16;
  return invalid_argument("unknown dtype '" + name + "'; expected f32, bf16 or f16");
}

// Linear layers between consecutive widths with a ReLU after every one but the last.
std::shared_ptr<Sequential> build_mlp(const std::vector<int64_t>& widths, InitContext& init) {
  auto network = std::make_shared<Sequential>();
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    network->emplace<Linear>(init, widths[i], widths[i + 1]);
    if (i + 2 < widths.size()) network->emplace<ReLU>();
  }
  return network;
}

// Labels drawn uniformly from the classes on the host (seeded), uploaded once as i32.
Tensor synthetic_labels(int64_t batch, int64_t classes, const std::shared_ptr<Device>& device) {
  std::mt19937 generator(static_cast<uint32_t>(kSeed));
  std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(classes - 1));
  std::vector<int32_t> labels(static_cast<size_t>(batch));
  for (auto& label : labels) label = pick(generator);
  return Tensor::from_host(labels, Shape{batch}, device);
}

struct StepSettings {
  std::vector<int64_t> widths;
  int64_t batch = 0;
  DType dtype = DType::kF32;
  std::string dtype_name;
  int repetitions = 0;
  int warmup = 0;
};

struct StepResult {
  std::vector<double> seconds;
  int64_t parameter_count = 0;
};

// Throws Error (the nn API's style).
StepResult time_steps(const StepSettings& settings, const std::shared_ptr<Device>& device) {
  InitContext init{device, InitScheme::kKaimingUniform, kSeed, 0, DType::kF32};
  std::shared_ptr<Sequential> network = build_mlp(settings.widths, init);
  network->train();
  SgdOptions sgd;
  sgd.lr = kLearningRate;
  sgd.momentum = kMomentum;
  Sgd optimizer(network->parameters(), sgd);
  const Tensor input = rand_normal(Shape{settings.batch, settings.widths.front()}, 0.0, 1.0,
                                   kSeed + 1, 0, device, DType::kF32);
  const Tensor labels = synthetic_labels(settings.batch, settings.widths.back(), device);
  std::optional<LossScaler> scaler;
  if (settings.dtype == DType::kF16) scaler.emplace();
  const auto step = [&] {
    Tensor loss;
    {
      const AutocastGuard autocast(settings.dtype);
      loss = cross_entropy(network->forward(input), labels);
    }
    if (scaler) {
      scaler->scale(loss).backward();
      scaler->step(optimizer);
    } else {
      loss.backward();
      optimizer.step();
    }
    optimizer.zero_grad();
    return ok_status();
  };
  StepResult result;
  result.parameter_count = network->parameter_count();
  result.seconds = value_or_throw(
      time_repeated(step, device->default_queue(), settings.warmup, settings.repetitions));
  return result;
}

std::string widths_text(const std::vector<int64_t>& widths) {
  std::string text;
  for (size_t i = 0; i < widths.size(); ++i)
    text += (i == 0 ? "" : "-") + std::to_string(widths[i]);
  return text;
}

void print_step_result(bool json, const StepSettings& settings, const Device& device,
                       const StepResult& result) {
  const double median_ms = median_of(result.seconds) * 1e3;
  const double min_ms = *std::min_element(result.seconds.begin(), result.seconds.end()) * 1e3;
  const double samples_per_second =
      median_ms > 0 ? static_cast<double>(settings.batch) / (median_ms / 1e3) : 0.0;
  if (json) {
    const detail::Json report{{"bench", "step"},
                              {"layers", widths_text(settings.widths)},
                              {"batch", settings.batch},
                              {"precision", settings.dtype_name},
                              {"device", device.id()},
                              {"device_name", device.info().name},
                              {"parameters", result.parameter_count},
                              {"repetitions", result.seconds.size()},
                              {"median_ms", median_ms},
                              {"min_ms", min_ms},
                              {"samples_per_second", samples_per_second}};
    std::cout << detail::json_text(report) << "\n";
    return;
  }
  std::cout << "training step of MLP " << widths_text(settings.widths) << " ("
            << result.parameter_count << " parameters), batch " << settings.batch << ", "
            << settings.dtype_name << ", on " << device.id() << " (" << device.info().name
            << "): median " << median_ms << " ms, min " << min_ms << " ms over "
            << result.seconds.size() << " steps; " << samples_per_second
            << " samples/s at the median\n";
}

Result<StepSettings> read_step_settings(const po::variables_map& values) {
  StepSettings settings;
  SY_ASSIGN_OR_RETURN(settings.widths, parse_layers(values["layers"].as<std::string>()));
  settings.dtype_name = values["precision"].as<std::string>();
  SY_ASSIGN_OR_RETURN(settings.dtype, parse_float_dtype(settings.dtype_name));
  settings.batch = values["batch"].as<int64_t>();
  settings.repetitions = values["repetitions"].as<int>();
  settings.warmup = values["warmup"].as<int>();
  if (settings.batch < 1 || settings.repetitions < 1 || settings.warmup < 0) {
    return invalid_argument("--batch and --repetitions must be >= 1 and --warmup >= 0 (got " +
                            std::to_string(settings.batch) + ", " +
                            std::to_string(settings.repetitions) + ", " +
                            std::to_string(settings.warmup) + ")");
  }
  return settings;
}

}  // namespace

int step_bench(const Args& args) {
  po::options_description options("options");
  options.add_options()("layers", po::value<std::string>()->default_value("784,2048,2048,10"),
                        "MLP widths, inputs first, classes last")(
      "batch", po::value<int64_t>()->default_value(256), "samples per step")(
      "precision", po::value<std::string>()->default_value("f32"),
      "f32 | bf16 | f16 (mixed precision, as train.precision)");
  add_bench_options(options, {.unit = "steps", .profile = true});
  std::optional<StepSettings> settings;
  return run_synthetic_bench(
      args, kUsage, options,
      [&](const po::variables_map& values) {
        auto read = read_step_settings(values);
        if (!read.ok()) return read.status();
        settings = *std::move(read);
        return ok_status();
      },
      [&](bool json, const std::shared_ptr<Device>& device) {
        print_step_result(json, *settings, *device, time_steps(*settings, device));
      });
}

}  // namespace switchyard::cli
