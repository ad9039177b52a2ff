// switchyard bench sequence --model transformer|lstm|text_rnn: one training step (or, with
// --inference, one forward pass) of a sequence classifier built with the nn API, on the selected
// device, timed like `bench step`: each timed repetition waits for the device queue, inputs and
// labels are synthetic (seeded) and stay on the device. The models are the shapes issues 12 and 27
// set targets for, and tools/bench/torch_peer.py builds the same ones in PyTorch:
//   transformer  [B, 64, 469] -> Linear(469, 256) -> TransformerEncoder(d_model 256, 4 heads,
//                feed-forward 1024, 2 layers, post-norm, relu, dropout 0.1, batch_first)
//                -> mean over time -> Linear(256, 100); batch 32
//   lstm         [B, 50, 128] -> LSTM(128, 256, 2 layers, batch_first) -> last step
//                -> Linear(256, 100); batch 64
//   text_rnn     [B, 50, 2000] -> LSTM(2000, 256, batch_first) -> last step -> Linear(256, 2000):
//                the model zoo's text RNN (tools/bench/zoo_models.py); batch 128
// A training step is forward, cross-entropy, backward, SGD-with-momentum update, zero_grad; an
// inference pass (batch 1 unless --batch says otherwise) runs in eval mode under NoGradGuard.
// --capture on|auto times recorded steps replayed (docs/capture.md): a training step as the
// trainer runs it with train.capture (StepCapture: the batch's loss and correct count kept on the
// device too, the dropout layers given new seeds before each step as the trainer does), an
// inference pass as an OpRecording; the report says what was replayed and how.
#include <algorithm>
#include <functional>
#include <iostream>
#include <optional>
#include <random>

#include "bench_ops.h"
#include "cli_common.h"
#include "support/json_io.h"
#include "switchyard/autograd.h"
#include "switchyard/capture.h"
#include "switchyard/nn.h"
#include "switchyard/nn_sequence.h"
#include "switchyard/ops.h"
#include "switchyard/optim.h"
#include "switchyard/profile.h"
#include "switchyard/tensor.h"
#include "switchyard/train.h"
#include "train/step_capture.h"

namespace switchyard::cli {
namespace {

constexpr const char* kUsage =
    "usage: switchyard bench sequence --model transformer|lstm|text_rnn [--inference]\n"
    "                                 [--batch N] [--capture off|on|auto]\n"
    "                                 [--repetitions R] [--warmup W]\n"
    "                                 [--config FILE] [--set k=v]... [--json] [--profile FILE]";

// The same optimizer settings as torch_peer.py's sequence parts; the step time does not depend on
// them, but finite values keep the weights finite over many repetitions.
constexpr double kLearningRate = 0.01;
constexpr double kMomentum = 0.9;
constexpr uint64_t kSeed = 0;

// The shape of one of the benchmark models.
struct SequenceShape {
  std::string model;  // "transformer", "lstm" or "text_rnn"
  int64_t training_batch = 0, steps = 0, features = 0, width = 0;
  int64_t layers = 0, classes = 0;
  std::string text;  // for the report
};

// The benchmark models (the file's comment), as tools/bench/torch_peer.py's SEQUENCE_SHAPES.
const SequenceShape kShapes[] = {
    {"transformer", 32, 64, 469, 256, 2, 100,
     "Linear(469,256) TransformerEncoder(d256 h4 ff1024 x2 post-norm relu dropout 0.1) mean "
     "Linear(256,100)"},
    {"lstm", 64, 50, 128, 256, 2, 100, "LSTM(128,256 x2) last-step Linear(256,100)"},
    {"text_rnn", 128, 50, 2000, 256, 1, 2000, "LSTM(2000,256) last-step Linear(256,2000)"},
};

Result<SequenceShape> shape_of(const std::string& model) {
  for (const SequenceShape& shape : kShapes) {
    if (shape.model == model) return shape;
  }
  return invalid_argument("--model '" + model + "': expected transformer, lstm or text_rnn");
}

std::shared_ptr<Sequential> build_model(const SequenceShape& shape, InitContext& init) {
  auto network = std::make_shared<Sequential>();
  if (shape.model == "transformer") {
    network->emplace<Linear>(init, shape.features, shape.width);
    TransformerEncoderOptions layer;
    layer.d_model = shape.width;
    layer.nhead = 4;
    layer.dim_feedforward = 1024;
    layer.dropout = 0.1;
    layer.batch_first = true;
    layer.dropout_seed = kSeed + 7;
    network->emplace<TransformerEncoder>(init, layer, shape.layers);
    network->emplace<SequencePool>(SequencePool::Mode::kMean);
  } else {
    RecurrentOptions lstm;
    lstm.input_size = shape.features;
    lstm.hidden_size = shape.width;
    lstm.num_layers = shape.layers;
    lstm.batch_first = true;
    network->emplace<LSTM>(init, lstm);
    network->emplace<SequencePool>(SequencePool::Mode::kLast);
  }
  network->emplace<Linear>(init, shape.width, shape.classes);
  return network;
}

Tensor synthetic_labels(int64_t batch, int64_t classes, const std::shared_ptr<Device>& device) {
  std::mt19937 generator(static_cast<uint32_t>(kSeed));
  std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(classes - 1));
  std::vector<int32_t> labels(static_cast<size_t>(batch));
  for (auto& label : labels) label = pick(generator);
  return Tensor::from_host(labels, Shape{batch}, device);
}

struct SequenceSettings {
  SequenceShape shape;
  bool inference = false;
  CaptureMode capture = CaptureMode::kOff;
  int64_t batch = 0;
  int repetitions = 0;
  int warmup = 0;
};

struct SequenceResult {
  std::vector<double> seconds;
  int64_t parameter_count = 0;
  std::string capture = "off";  // what --capture did
};

// The inference pass recorded once and replayed where predict.capture would record it (on and
// auto: passes_captured); `pass` itself otherwise.
std::function<Status()> captured_pass(const SequenceSettings& settings,
                                      const std::shared_ptr<Device>& device,
                                      const std::function<void()>& pass, SequenceResult& result) {
  const std::function<Status()> eager = [pass] {
    pass();
    return ok_status();
  };
  if (!passes_captured(settings.capture)) return eager;
  pass();  // eager first, as predict does: it fills the weight caches
  auto recording = std::shared_ptr<OpRecording>(OpRecording::record(device, pass));
  if (!recording->replayable()) {
    result.capture = "eager: " + recording->reason();
    return eager;
  }
  result.capture = "replayed, recorded as " + recording->describe();
  return [recording] {
    recording->replay();
    return ok_status();
  };
}

// The training step through the trainer's StepCapture: `network`'s dropout layers are reseeded
// before each step as the trainer does (seed_random_layers), so that a replay draws new masks.
std::function<Status()> captured_step(const SequenceSettings& settings,
                                      const std::shared_ptr<Device>& device, Sequential& network,
                                      Optimizer& optimizer, const Tensor& input,
                                      const Tensor& labels,
                                      std::shared_ptr<detail::StepCapture>& capture) {
  std::vector<Dropout*> dropouts;
  for (Module* module : network.modules()) {
    if (auto* dropout = dynamic_cast<Dropout*>(module)) dropouts.push_back(dropout);
  }
  auto seeds = [dropouts] { return detail::random_layer_seeds(dropouts, {}); };
  capture = std::make_shared<detail::StepCapture>(settings.capture, device, seeds, "");
  auto recipe = std::make_shared<detail::StepRecipe>();
  recipe->network = &network;
  recipe->class_count = settings.shape.classes;
  auto batch = std::make_shared<detail::DeviceBatch>();
  batch->features = input;
  batch->labels = labels;
  batch->host_labels.assign(static_cast<size_t>(settings.batch), 0);
  auto totals = std::make_shared<detail::RunningTotals>();
  auto steps = std::make_shared<uint64_t>(0);
  return [=, &optimizer]() {
    detail::seed_random_layers(dropouts, {}, kSeed, (*steps)++);
    if (capture->enabled()) {
      capture->step(*recipe, *batch, *totals, optimizer);
    } else {
      detail::forward_backward(*recipe, *batch, *totals);
      optimizer.step();
      optimizer.zero_grad();
    }
    return ok_status();
  };
}

// Throws Error (the nn API's style).
SequenceResult time_sequence(const SequenceSettings& settings,
                             const std::shared_ptr<Device>& device) {
  InitContext init{device, InitScheme::kKaimingUniform, kSeed, 0, DType::kF32};
  std::shared_ptr<Sequential> network = build_model(settings.shape, init);
  const Tensor input =
      rand_normal(Shape{settings.batch, settings.shape.steps, settings.shape.features}, 0.0, 1.0,
                  kSeed + 1, 0, device, DType::kF32);
  SequenceResult result;
  result.parameter_count = network->parameter_count();
  Queue& queue = device->default_queue();
  if (settings.inference) {
    network->eval();
    const auto pass = [&] {
      const NoGradGuard no_grad;
      (void)network->forward(input);
    };
    result.seconds = value_or_throw(time_repeated(captured_pass(settings, device, pass, result),
                                                  queue, settings.warmup, settings.repetitions));
    return result;
  }
  network->train();
  SgdOptions sgd;
  sgd.lr = kLearningRate;
  sgd.momentum = kMomentum;
  Sgd optimizer(network->parameters(), sgd);
  const Tensor labels = synthetic_labels(settings.batch, settings.shape.classes, device);
  if (settings.capture != CaptureMode::kOff) {
    std::shared_ptr<detail::StepCapture> capture;
    const auto step = captured_step(settings, device, *network, optimizer, input, labels, capture);
    result.seconds =
        value_or_throw(time_repeated(step, queue, settings.warmup, settings.repetitions));
    result.capture = capture->summary();
    return result;
  }
  const auto step = [&] {
    cross_entropy(network->forward(input), labels).backward();
    optimizer.step();
    optimizer.zero_grad();
    return ok_status();
  };
  result.seconds =
      value_or_throw(time_repeated(step, queue, settings.warmup, settings.repetitions));
  return result;
}

void print_sequence_result(bool json, const SequenceSettings& settings, const Device& device,
                           const SequenceResult& result) {
  const double median_ms = median_of(result.seconds) * 1e3;
  const double min_ms = *std::min_element(result.seconds.begin(), result.seconds.end()) * 1e3;
  const double samples_per_second =
      median_ms > 0 ? static_cast<double>(settings.batch) / (median_ms / 1e3) : 0.0;
  const std::string mode = settings.inference ? "inference" : "step";
  if (json) {
    const detail::Json report{{"bench", "sequence"},
                              {"model", settings.shape.model},
                              {"mode", mode},
                              {"layers", settings.shape.text},
                              {"batch", settings.batch},
                              {"sequence_length", settings.shape.steps},
                              {"device", device.id()},
                              {"device_name", device.info().name},
                              {"parameters", result.parameter_count},
                              {"repetitions", result.seconds.size()},
                              {"median_ms", median_ms},
                              {"min_ms", min_ms},
                              {"samples_per_second", samples_per_second},
                              {"capture", result.capture}};
    std::cout << detail::json_text(report) << "\n";
    return;
  }
  std::cout << (settings.inference ? "inference pass" : "training step") << " of "
            << settings.shape.text << " (" << result.parameter_count << " parameters), batch "
            << settings.batch << " x " << settings.shape.steps << " steps, on " << device.id()
            << " (" << device.info().name << "): median " << median_ms << " ms, min " << min_ms
            << " ms over " << result.seconds.size() << " repetitions; " << samples_per_second
            << " samples/s at the median\n";
  if (settings.capture != CaptureMode::kOff) std::cout << "capture: " << result.capture << "\n";
}

Result<SequenceSettings> read_sequence_settings(const po::variables_map& values) {
  SequenceSettings settings;
  SY_ASSIGN_OR_RETURN(settings.shape, shape_of(values["model"].as<std::string>()));
  settings.inference = values.count("inference") != 0;
  settings.batch = values.count("batch") != 0 ? values["batch"].as<int64_t>()
                   : settings.inference       ? 1
                                              : settings.shape.training_batch;
  settings.repetitions = values["repetitions"].as<int>();
  settings.warmup = values["warmup"].as<int>();
  SY_ASSIGN_OR_RETURN(settings.capture, parse_capture_mode(values["capture"].as<std::string>()));
  if (settings.batch < 1 || settings.repetitions < 1 || settings.warmup < 0) {
    return invalid_argument("--batch and --repetitions must be >= 1 and --warmup >= 0 (got " +
                            std::to_string(settings.batch) + ", " +
                            std::to_string(settings.repetitions) + ", " +
                            std::to_string(settings.warmup) + ")");
  }
  return settings;
}

po::options_description sequence_options() {
  po::options_description options("options");
  options.add_options()("model", po::value<std::string>()->default_value("transformer"),
                        "transformer | lstm | text_rnn")(
      "inference", "time one forward pass in eval mode without gradients (default batch 1)")(
      "batch", po::value<int64_t>(),
      "sequences per step (default: transformer 32, lstm 64, text_rnn 128; 1 with --inference)")(
      "capture", po::value<std::string>()->default_value("off"),
      "off | on | auto: time recorded steps (or passes) replayed (docs/capture.md)");
  add_bench_options(options, {.unit = "repetitions", .profile = true});
  return options;
}

}  // namespace

int sequence_bench(const Args& args) {
  std::optional<SequenceSettings> settings;
  return run_synthetic_bench(
      args, kUsage, sequence_options(),
      [&](const po::variables_map& values) {
        auto read = read_sequence_settings(values);
        if (!read.ok()) return read.status();
        settings = *std::move(read);
        return ok_status();
      },
      [&](bool json, const std::shared_ptr<Device>& device) {
        print_sequence_result(json, *settings, *device, time_sequence(*settings, device));
      });
}

}  // namespace switchyard::cli
