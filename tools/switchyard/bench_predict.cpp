// switchyard bench predict MODEL --rows N: throughput of Predictor::predict_into, the C++ API the
// C API and the Python package sit on, over N samples of synthetic raw values (integers 0..16,
// like digits' pixels) in one caller-owned array. Warm-up passes, then timed repetitions of the
// whole array; reports the median and samples per second. tools/bench/embed_predict.py runs it
// beside Python's Predictor.predict on the same model, rows and batch size.
#include <iostream>
#include <random>

#include "bench_ops.h"
#include "cli_common.h"
#include "json/json_io.h"
#include "switchyard/runtime.h"

namespace switchyard::cli {
namespace {

constexpr const char* kUsage =
    "usage: switchyard bench predict MODEL [--rows N] [--batch-size B] [--repetitions R]\n"
    "                                [--warmup W] [--config FILE] [--set key=value]... [--json]";

int run_predict_bench(const po::variables_map& values) {
  const auto rows = values["rows"].as<int64_t>();
  const auto batch_size = values["batch-size"].as<int64_t>();
  const int repetitions = values["repetitions"].as<int>();
  const int warmup = values["warmup"].as<int>();
  if (rows < 1 || batch_size < 1 || repetitions < 1 || warmup < 0) {
    std::cerr << "switchyard: --rows, --batch-size and --repetitions must be at least 1\n";
    return kExitUsage;
  }
  try {
    const std::vector<std::string> overrides = set_overrides(values);
    std::unique_ptr<Runtime> runtime =
        values.count("config") != 0
            ? Runtime::from_file(values["config"].as<std::string>(), overrides)
            : Runtime::from_yaml("", ".", overrides);
    std::unique_ptr<Predictor> predictor = runtime->load_model(values["model"].as<std::string>());
    const RunDevice& run = runtime->device();
    print_selection_messages(run.fallback_note, run.warnings);
    std::vector<float> input(static_cast<size_t>(rows * predictor->input_width()));
    std::mt19937 generator(0);
    std::uniform_int_distribution<int> pixel(0, 16);
    for (float& value : input) value = static_cast<float>(pixel(generator));
    std::vector<float> output(static_cast<size_t>(rows * predictor->output_width()));
    const auto work = [&]() -> Status {
      predictor->predict_into(input.data(), rows, output.data(), batch_size);
      return ok_status();
    };
    const std::vector<double> seconds =
        value_or_throw(time_repeated(work, run.device->default_queue(), warmup, repetitions));
    const double median = median_of(seconds);
    const double per_second = median > 0 ? static_cast<double>(rows) / median : 0;
    if (values.count("json") != 0) {
      std::cout << detail::json_text(detail::Json{{"benchmark", "predict"},
                                                  {"device", run.device->id()},
                                                  {"rows", rows},
                                                  {"batch_size", batch_size},
                                                  {"input_width", predictor->input_width()},
                                                  {"output_width", predictor->output_width()},
                                                  {"repetitions", repetitions},
                                                  {"median_seconds", median},
                                                  {"samples_per_second", per_second}})
                << "\n";
    } else {
      std::cout << "predict " << rows << " x " << predictor->input_width() << " on "
                << run.device->id() << ", batch " << batch_size << ": median " << median * 1e3
                << " ms, " << per_second << " samples/s\n";
    }
  } catch (const Error& e) {
    print_error(e.status());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

int predict_bench(const Args& args) {
  po::options_description options("options");
  options.add_options()("model", po::value<std::string>(), "checkpoint or .safetensors file")(
      "rows", po::value<int64_t>()->default_value(100000), "samples per prediction")(
      "batch-size", po::value<int64_t>()->default_value(256), "samples per batch")(
      "repetitions", po::value<int>()->default_value(10), "timed predictions")(
      "warmup", po::value<int>()->default_value(2), "untimed predictions first")(
      "config", po::value<std::string>(), "YAML file (device, and a safetensors model's layout)")(
      "set", po::value<std::vector<std::string>>()->composing(), "override: key=value")(
      "json", "print JSON");
  po::positional_options_description positional;
  positional.add("model", 1);
  po::variables_map values;
  if (auto exit = parse_args(args, kUsage, options, values, &positional)) return *exit;
  if (values.count("model") == 0) {
    std::cerr << "switchyard: bench predict needs a MODEL file\n\n" << kUsage << "\n";
    return kExitUsage;
  }
  return run_predict_bench(values);
}

}  // namespace switchyard::cli
