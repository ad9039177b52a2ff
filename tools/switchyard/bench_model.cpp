// switchyard bench model CONFIG --batch-size N: inference latency of the YAML file's model on the
// selected device; `switchyard bench model MODEL.onnx --batch-size N` times an ONNX model instead
// (switchyard/onnx.h), its dynamic batch axis set to N, on the device --set device=... selects. The
// model is the trained one when predict.checkpoint exists, otherwise freshly initialised (latency
// does not depend on the weights). A batch of N synthetic samples of the model's input shape goes
// through the model under NoGradGuard in eval mode: warm-up passes, then timed repetitions, each up
// to queue completion; reports mean and median latency per batch and samples per second at the
// median. --profile FILE also writes a trace of the timed repetitions.
//
// For an ONNX model, --check-input X.npy --check-output Y.npy first runs the model on X (a
// batch of any size, the file's first input) and compares its first output with Y element by
// element, |ours - Y| <= tol + tol |Y| (--check-tolerance, 1e-4): a benchmark of a model that
// gives a wrong answer fails (exit 1) after its report, which gives the largest difference. With
// predict.capture on or auto (the default, docs/capture.md) X runs three times and the third
// output, a replay, is the one checked.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <numeric>
#include <optional>

#include "bench_ops.h"
#include "cli_common.h"
#include "npy.h"
#include "runtime/memory_budget.h"
#include "support/json_io.h"
#include "switchyard/autocast.h"
#include "switchyard/autograd.h"
#include "switchyard/onnx.h"
#include "switchyard/ops.h"
#include "switchyard/predict.h"
#include "switchyard/profile.h"
#include "switchyard/tensor.h"
#include "switchyard/train.h"

namespace switchyard::cli {
namespace {

constexpr const char* kUsage =
    "usage: switchyard bench model CONFIG|MODEL.onnx --batch-size N [--repetitions R]\n"
    "                              [--warmup W] [--set key=value]... [--profile FILE] [--json]\n"
    "                              [--check-input X.npy --check-output Y.npy "
    "[--check-tolerance T]]";

// The model under test and where its weights came from.
struct BenchModel {
  std::unique_ptr<Predictor> predictor;  // owns the network when a checkpoint was loaded
  BuiltModel built;
  std::vector<int64_t> sample_shape;
  std::string weights;  // the checkpoint's path, or "random"
};

// The input shape the data section gives a model: [C, H, W] when data.image_shape is set, else
// [features]; and the class count, which sizes the last layer.
Status input_layout(const TrainConfig& config, std::vector<int64_t>& sample_shape,
                    int64_t& class_count) {
  SY_ASSIGN_OR_RETURN(const Dataset data, load_dataset(config.data.dataset, config.base_dir));
  class_count = data.class_count();
  sample_shape = {data.feature_count()};
  if (config.data.image_shape.empty()) return ok_status();
  const int64_t elements =
      std::accumulate(config.data.image_shape.begin(), config.data.image_shape.end(), int64_t{1},
                      std::multiplies<int64_t>());
  if (elements != data.feature_count()) {
    return invalid_argument("data.image_shape has " + std::to_string(elements) + " elements but " +
                            data.name + " has " + std::to_string(data.feature_count()) +
                            " features per sample");
  }
  sample_shape = config.data.image_shape;
  return ok_status();
}

// predict.checkpoint when the file has one and it exists; empty otherwise.
Result<std::filesystem::path> existing_checkpoint(const Config& config) {
  if (!config.root()["predict"].valid()) return std::filesystem::path();
  SY_ASSIGN_OR_RETURN(const PredictSettings predict, PredictSettings::from_config(config));
  std::error_code error;
  if (!std::filesystem::exists(predict.checkpoint, error)) return std::filesystem::path();
  return predict.checkpoint;
}

// Throws Error (the trainer's and predictor's API style).
BenchModel load_bench_model(const Config& config, const TrainConfig& train,
                            const std::shared_ptr<Device>& device) {
  BenchModel model;
  int64_t class_count = 0;
  throw_if_error(input_layout(train, model.sample_shape, class_count));
  const std::filesystem::path checkpoint = value_or_throw(existing_checkpoint(config));
  if (!checkpoint.empty()) {
    model.predictor = std::make_unique<Predictor>(train, checkpoint, device);
    model.built = model.predictor->built_model();
    model.weights = checkpoint.string();
  } else {
    // f32 parameters, as a trained checkpoint holds; train.precision applies through autocast.
    InitContext init{device, train.model.init, train.seed, 0, DType::kF32};
    model.built = value_or_throw(build_model(train.model, model.sample_shape, class_count, init));
    model.weights = "random";
  }
  model.built.network->eval();
  return model;
}

struct LatencyStats {
  double mean_seconds = 0;
  double median_seconds = 0;
  double min_seconds = 0;
};

LatencyStats latency_stats(const std::vector<double>& seconds) {
  LatencyStats stats;
  if (seconds.empty()) return stats;
  stats.mean_seconds =
      std::accumulate(seconds.begin(), seconds.end(), 0.0) / static_cast<double>(seconds.size());
  stats.median_seconds = median_of(seconds);
  stats.min_seconds = *std::min_element(seconds.begin(), seconds.end());
  return stats;
}

// The timing settings of both kinds of model, checked.
struct TimingSettings {
  int64_t batch_size = 0;
  int repetitions = 0;
  int warmup = 0;
};

std::optional<TimingSettings> timing_settings(const po::variables_map& values) {
  const TimingSettings t{values["batch-size"].as<int64_t>(), values["repetitions"].as<int>(),
                         values["warmup"].as<int>()};
  if (t.batch_size < 1 || t.repetitions < 1 || t.warmup < 0) {
    print_error(invalid_argument("--batch-size and --repetitions must be >= 1, --warmup >= 0"));
    return std::nullopt;
  }
  return t;
}

// Runs `pass` for the warm-up, then the timed repetitions (inside a profiler when `profiler` is
// set), each up to queue completion.
std::vector<double> time_passes(const std::function<void()>& pass, Queue& queue,
                                const TimingSettings& t, Profiler* profiler) {
  const auto forward = [&] {
    ProfileSpan span = profile_span("forward");
    pass();
    return ok_status();
  };
  for (int i = 0; i < t.warmup; ++i) throw_if_error(forward());
  throw_if_error(queue.finish());
  if (profiler == nullptr) return value_or_throw(time_repeated(forward, queue, 0, t.repetitions));
  profiler->clear();  // the profile's wall time starts here, after the warm-up
  ProfileScope scope(*profiler);
  return value_or_throw(time_repeated(forward, queue, 0, t.repetitions));
}

// The profile's per-op table and trace, after the timings.
void write_profile(const po::variables_map& values, Profiler& profiler) {
  const std::string path = values["profile"].as<std::string>();
  throw_if_error(profiler.write_chrome_trace(path));
  std::ostream& out = values.count("json") != 0 ? std::cerr : std::cout;
  out << profiler.summary_table() << "trace written to " << path
      << " (the timings above include the profiler's overhead)\n";
}

std::vector<double> time_inference(Sequential& network, const Tensor& input, DType precision,
                                   Queue& queue, const TimingSettings& t, Profiler* profiler) {
  NoGradGuard no_grad;
  const AutocastGuard autocast(precision);  // as the predictor runs it
  return time_passes([&] { network.forward(input); }, queue, t, profiler);
}

void print_result(const po::variables_map& values, const BenchModel& model, const Device& device,
                  DType precision, int64_t batch_size, size_t repetitions,
                  const LatencyStats& stats) {
  const double samples_per_second =
      stats.median_seconds > 0 ? static_cast<double>(batch_size) / stats.median_seconds : 0.0;
  if (values.count("json") != 0) {
    const detail::Json report{{"bench", "model"},
                              {"config", values["config"].as<std::string>()},
                              {"device", device.id()},
                              {"device_name", device.info().name},
                              {"architecture", model.built.architecture},
                              {"weights", model.weights},
                              {"precision", dtype_name(precision)},
                              {"batch_size", batch_size},
                              {"repetitions", repetitions},
                              {"mean_ms", stats.mean_seconds * 1e3},
                              {"median_ms", stats.median_seconds * 1e3},
                              {"min_ms", stats.min_seconds * 1e3},
                              {"samples_per_second", samples_per_second}};
    std::cout << detail::json_text(report) << "\n";
    return;
  }
  std::cout << model.built.architecture << "\n"
            << "weights: " << model.weights << "; device " << device.id() << " ("
            << device.info().name << ")\n"
            << "batch " << batch_size << ", " << dtype_name(precision) << ", " << repetitions
            << " repetitions: mean " << stats.mean_seconds * 1e3 << " ms, median "
            << stats.median_seconds * 1e3 << " ms, min " << stats.min_seconds * 1e3
            << " ms per batch; " << samples_per_second << " samples/s at the median\n";
}

int run_model_bench(const po::variables_map& values, const Config& config) {
  const std::optional<TimingSettings> timing = timing_settings(values);
  if (!timing) return kExitUsage;
  const int64_t batch_size = timing->batch_size;
  try {
    const TrainConfig train = value_or_throw(TrainConfig::from_config(config));
    const RunDevice run = value_or_throw(open_run_device(config.runtime()));
    print_selection_messages(run.fallback_note, run.warnings);
    BenchModel model = load_bench_model(config, train, run.device);
    std::vector<int64_t> input_shape = {batch_size};
    input_shape.insert(input_shape.end(), model.sample_shape.begin(), model.sample_shape.end());
    throw_if_error(detail::check_shape_budget(input_shape, dtype_size_bytes(train.train.precision),
                                              "a batch of " + std::to_string(batch_size) +
                                                  " synthetic samples " +
                                                  Shape(input_shape).to_string(),
                                              train.data.dataset, run.device.get()));
    const Tensor input =
        rand_normal(Shape(input_shape), 0.0, 1.0, train.seed, 0, run.device, train.train.precision);
    std::unique_ptr<Profiler> profiler;
    if (values.count("profile") != 0) profiler = std::make_unique<Profiler>();
    const std::vector<double> seconds =
        time_inference(*model.built.network, input, train.train.precision,
                       run.device->default_queue(), *timing, profiler.get());
    print_result(values, model, *run.device, train.train.precision, batch_size, seconds.size(),
                 latency_stats(seconds));
    if (profiler != nullptr) write_profile(values, *profiler);
  } catch (const Error& e) {
    print_error(e.status());
    return kExitFailure;
  }
  return kExitOk;
}

// Inputs of the model's declared shapes with the first dynamic axis set to the batch size: floats
// drawn from N(0, 1), integers 0 (a valid index for any table). Another dynamic axis is an error.
std::vector<Tensor> onnx_inputs(const OnnxModel& model, int64_t batch_size,
                                const std::shared_ptr<Device>& device) {
  std::vector<Tensor> inputs;
  for (const OnnxValueInfo& info : model.inputs()) {
    std::vector<int64_t> shape;
    bool batch_taken = false;
    for (size_t axis = 0; axis < info.shape.size(); ++axis) {
      if (info.shape[axis] >= 0) {
        shape.push_back(info.shape[axis]);
      } else if (!batch_taken) {
        shape.push_back(batch_size);
        batch_taken = true;
      } else {
        throw_error(invalid_argument(model.path().string() + ": input '" + info.name + "' axis " +
                                     std::to_string(axis) + " ('" + info.dim_names[axis] +
                                     "') is dynamic besides the batch axis; bench model sets "
                                     "only the batch"));
      }
    }
    // The declared extents come from the file: the batch must fit the memory budget before it
    // is made (the load checked one sample).
    const uint64_t element = info.is_float() || info.element_type == "bool" ? 4 : 8;
    throw_if_error(detail::check_shape_budget(
        shape, element,
        "a batch of " + std::to_string(batch_size) + " of input '" + info.name + "' (" +
            info.element_type + " " + Shape(shape).to_string() + ")",
        model.path().string(), device.get()));
    if (info.is_float()) {
      inputs.push_back(rand_normal(Shape(shape), 0.0, 1.0, 0, 0, device));
    } else if (info.element_type == "bool") {
      inputs.push_back(zeros(Shape(shape), device));
    } else {
      inputs.push_back(zeros(Shape(shape), device, DType::kI64));
    }
  }
  return inputs;
}

// The outcome of --check-input/--check-output.
struct OutputCheck {
  std::string input, output;
  double tolerance = 1e-4;
  int64_t elements = 0, mismatches = 0, first_mismatch = -1;
  double max_abs_diff = 0.0;
  bool passed() const { return mismatches == 0; }
};

// Runs the model on the .npy input and compares its first output with the .npy output.
OutputCheck check_onnx_output(OnnxModel& model, const po::variables_map& values) {
  OutputCheck check;
  check.input = values["check-input"].as<std::string>();
  check.output = values["check-output"].as<std::string>();
  if (values.count("check-tolerance") != 0)
    check.tolerance = values["check-tolerance"].as<double>();
  const NpyArray x = value_or_throw(read_npy(check.input));
  const NpyArray expected = value_or_throw(read_npy(check.output));
  if (model.inputs().empty())
    throw_error(invalid_argument(model.path().string() + " has no input"));
  const OnnxValueInfo& info = model.inputs()[0];
  const Shape shape(x.shape);
  Tensor input;
  if (info.is_float()) {
    input = Tensor::from_host(std::vector<float>(x.values.begin(), x.values.end()), shape,
                              model.device());
  } else {
    input = Tensor::from_host(std::vector<int64_t>(x.values.begin(), x.values.end()), shape,
                              model.device());
  }
  // With capture on (or auto), the third run of a signature is a replay: that is the output
  // checked.
  const int runs = passes_captured(model.capture()) ? 3 : 1;
  std::vector<Tensor> outputs;
  for (int run = 0; run < runs; ++run) outputs = model.run({input});
  // An integer output (ArgMax's indices, say) is compared as doubles too: exact below 2^53.
  std::vector<double> ours;
  if (is_floating(outputs.at(0).dtype())) {
    for (const float v : outputs.at(0).to_host_float()) ours.push_back(v);
  } else {
    for (const int64_t v : outputs.at(0).to_host_int64()) ours.push_back(static_cast<double>(v));
  }
  const Shape& got = outputs.at(0).shape();
  if (!std::equal(got.begin(), got.end(), expected.shape.begin(), expected.shape.end())) {
    throw_error(invalid_argument(check.output + ": shape " + Shape(expected.shape).to_string() +
                                 ", but the model's first output is " + got.to_string()));
  }
  check.elements = static_cast<int64_t>(ours.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    const double want = expected.values[i];
    const double diff = std::abs(ours[i] - want);
    const bool ok = diff <= check.tolerance + check.tolerance * std::abs(want);
    if (!ok) {  // NaN on either side is a mismatch too
      if (check.mismatches++ == 0) check.first_mismatch = static_cast<int64_t>(i);
    }
    if (!(diff <= check.max_abs_diff)) check.max_abs_diff = diff;
  }
  return check;
}

int run_onnx_bench(const po::variables_map& values, const Config& config, const std::string& path) {
  const std::optional<TimingSettings> timing = timing_settings(values);
  if (!timing) return kExitUsage;
  const int64_t batch_size = timing->batch_size;
  try {
    const RunDevice run = value_or_throw(open_run_device(config.runtime()));
    print_selection_messages(run.fallback_note, run.warnings);
    const std::unique_ptr<OnnxModel> model = OnnxModel::load(path, run.device);
    // predict.capture as `run` reads it: auto unless the config or --set says otherwise.
    const ConfigNode capture = config.root()["predict"]["capture"];
    model->set_capture(capture.valid()
                           ? value_or_throw(parse_capture_mode(value_or_throw(capture.as_string())))
                           : CaptureMode::kAuto);
    std::optional<OutputCheck> check;
    if (values.count("check-input") != 0) check = check_onnx_output(*model, values);
    const std::vector<Tensor> inputs = onnx_inputs(*model, batch_size, run.device);
    std::unique_ptr<Profiler> profiler;
    if (values.count("profile") != 0) profiler = std::make_unique<Profiler>();
    const std::vector<double> seconds = time_passes(
        [&] { model->run(inputs); }, run.device->default_queue(), *timing, profiler.get());
    const LatencyStats stats = latency_stats(seconds);
    const double samples_per_second =
        stats.median_seconds > 0 ? static_cast<double>(batch_size) / stats.median_seconds : 0.0;
    if (values.count("json") != 0) {
      detail::Json report{{"bench", "model"},
                          {"format", "onnx"},
                          {"model", path},
                          {"describe", model->describe()},
                          {"execution", model->execution_summary()},
                          {"device", run.device->id()},
                          {"device_name", run.device->info().name},
                          {"batch_size", batch_size},
                          {"repetitions", seconds.size()},
                          {"mean_ms", stats.mean_seconds * 1e3},
                          {"median_ms", stats.median_seconds * 1e3},
                          {"min_ms", stats.min_seconds * 1e3},
                          {"samples_per_second", samples_per_second},
                          {"capture", capture_mode_name(model->capture())},
                          {"capture_summary", model->capture_summary()}};
      if (check) {
        report["check"] = {{"input", check->input},           {"output", check->output},
                           {"tolerance", check->tolerance},   {"elements", check->elements},
                           {"mismatches", check->mismatches}, {"max_abs_diff", check->max_abs_diff},
                           {"passed", check->passed()}};
      }
      std::cout << detail::json_text(report) << "\n";
    } else {
      std::cout << model->describe() << "\n"
                << "ran: " << model->execution_summary() << "\n"
                << "device " << run.device->id() << " (" << run.device->info().name << ")\n"
                << "batch " << batch_size << ", " << seconds.size() << " repetitions: mean "
                << stats.mean_seconds * 1e3 << " ms, median " << stats.median_seconds * 1e3
                << " ms, min " << stats.min_seconds * 1e3 << " ms per batch; " << samples_per_second
                << " samples/s at the median\n"
                << "capture " << capture_mode_name(model->capture()) << ": "
                << model->capture_summary() << "\n";
      if (check) {
        std::cout << "check against " << check->output << ": " << check->mismatches << " of "
                  << check->elements << " elements beyond " << check->tolerance << " + "
                  << check->tolerance << " |expected|, largest difference " << check->max_abs_diff
                  << "\n";
      }
    }
    if (profiler != nullptr) write_profile(values, *profiler);
    if (check && !check->passed()) {
      std::cerr << "switchyard: " << path << " on " << run.device->id() << ": " << check->mismatches
                << " of " << check->elements << " output elements differ from " << check->output
                << " (first at element " << check->first_mismatch << ")\n";
      return kExitFailure;
    }
  } catch (const Error& e) {
    print_error(e.status());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

int model_bench(const Args& args) {
  po::options_description options("options");
  // Checked below rather than marked required(), so that --help works without them.
  options.add_options()("batch-size", po::value<int64_t>(), "samples per batch (required)");
  add_bench_options(options, {.unit = "batches", .config = "model YAML file", .profile = true});
  options.add_options()("check-input", po::value<std::string>(),
                        "ONNX models: run this .npy batch first ...")(
      "check-output", po::value<std::string>(),
      "... and compare the first output with this .npy (fails on a mismatch)")(
      "check-tolerance", po::value<double>(), "absolute and relative tolerance (1e-4)");
  po::positional_options_description positional;
  positional.add("config", 1);
  po::variables_map values;
  if (auto exit = parse_args(args, kUsage, options, values, &positional)) return *exit;
  if (values.count("config") == 0 || values.count("batch-size") == 0) {
    std::cerr << "switchyard: bench model needs a CONFIG file and --batch-size N\n\n"
              << kUsage << "\n";
    return kExitUsage;
  }
  const std::vector<std::string> overrides = set_overrides(values);
  const std::string model = values["config"].as<std::string>();
  if (is_onnx_path(model)) {
    // No YAML file: the device comes from --set and the SWITCHYARD_* variables.
    Result<Config> config = Config::load_string("", "<--set>", overrides);
    if (config.ok())
      config = [&]() -> Result<Config> {
        SY_RETURN_IF_ERROR(config->runtime().apply_environment());
        return std::move(*config);
      }();
    if (!config.ok()) {
      print_error(config.status());
      return kExitUsage;
    }
    if (values.count("check-input") != values.count("check-output")) {
      std::cerr << "switchyard: --check-input and --check-output go together\n\n" << kUsage << "\n";
      return kExitUsage;
    }
    return run_onnx_bench(values, *config, model);
  }
  std::optional<Config> config = load_config_or_report(values, overrides);
  if (!config) return kExitUsage;
  return run_model_bench(values, *config);
}

}  // namespace switchyard::cli
