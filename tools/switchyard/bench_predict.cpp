// switchyard bench predict MODEL --rows N: throughput of Predictor::predict_into, the C++ API the
// C API and the Python package sit on, over N samples of synthetic raw values (integers 0..16,
// like digits' pixels) in one caller-owned array. Warm-up passes, then timed repetitions of the
// whole array; reports the median and samples per second. tools/bench/embed_predict.py runs it
// beside Python's Predictor.predict on the same model, rows and batch size.
//
// --threads 1,4 --sharing shared,per-thread: the same rows split between T caller threads, which
// share one Predictor or hold one each (all on the runtime's one device), every combination in one
// run with its throughput as a ratio of one thread's (predict.h, "Threads").
#include <chrono>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>

#include "bench_ops.h"
#include "cli_common.h"
#include "support/json_io.h"
#include "switchyard/runtime.h"

namespace switchyard::cli {
namespace {

constexpr const char* kUsage =
    "usage: switchyard bench predict MODEL [--rows N] [--batch-size B] [--repetitions R]\n"
    "                                [--warmup W] [--threads T[,T...]]\n"
    "                                [--sharing shared|per-thread[,...]]\n"
    "                                [--config FILE] [--set key=value]... [--json]";

// "1,4" -> {1, 4}; empty on a malformed list.
std::vector<int> thread_counts(const std::string& text) {
  std::vector<int> counts;
  std::istringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    try {
      const int count = std::stoi(item);
      if (count < 1 || count > 256) return {};
      counts.push_back(count);
    } catch (const std::exception&) {
      return {};
    }
  }
  return counts;
}

std::vector<std::string> sharing_modes(const std::string& text) {
  std::vector<std::string> modes;
  std::istringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    if (item != "shared" && item != "per-thread") return {};
    modes.push_back(item);
  }
  return modes;
}

// One line of the threaded comparison.
struct ThreadedFigure {
  std::string sharing;
  int threads = 1;
  double median_seconds = 0;
  double samples_per_second = 0;
};

// The rows split between `threads` callers, each predicting its slice once per repetition through
// its predictor (`predictors` holds one, shared by all, or one per thread).
std::vector<double> time_threaded(const std::vector<Predictor*>& predictors, int threads,
                                  const std::vector<float>& input, std::vector<float>& output,
                                  int64_t rows, int64_t batch_size, int warmup, int repetitions) {
  const int64_t in_width = predictors.front()->input_width();
  const int64_t out_width = predictors.front()->output_width();
  const auto pass = [&] {
    std::vector<std::thread> callers;
    std::vector<Status> failures(static_cast<size_t>(threads), ok_status());
    for (int t = 0; t < threads; ++t) {
      callers.emplace_back([&, t] {
        const int64_t begin = rows * t / threads;
        const int64_t end = rows * (t + 1) / threads;
        Predictor& predictor = *predictors[predictors.size() == 1 ? 0 : static_cast<size_t>(t)];
        try {
          predictor.predict_into(input.data() + begin * in_width, end - begin,
                                 output.data() + begin * out_width, batch_size);
        } catch (const Error& error) {
          failures[static_cast<size_t>(t)] = error.status();
        }
      });
    }
    for (std::thread& caller : callers) caller.join();
    for (const Status& failure : failures) throw_if_error(failure);
  };
  for (int i = 0; i < warmup; ++i) pass();
  std::vector<double> seconds;
  for (int i = 0; i < repetitions; ++i) {
    const auto start = std::chrono::steady_clock::now();
    pass();
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return seconds;
}

int report_threaded(const po::variables_map& values, Runtime& runtime, Predictor& first,
                    const std::vector<float>& input, int64_t rows, int64_t batch_size, int warmup,
                    int repetitions, const std::vector<int>& threads,
                    const std::vector<std::string>& sharing) {
  std::vector<float> output(static_cast<size_t>(rows * first.output_width()));
  const RunDevice& run = runtime.device();
  std::vector<ThreadedFigure> figures;
  std::vector<std::unique_ptr<Predictor>> own;  // per-thread predictors beyond the first
  for (const std::string& mode : sharing) {
    for (const int count : threads) {
      std::vector<Predictor*> predictors = {&first};
      if (mode == "per-thread") {
        while (static_cast<int>(own.size()) + 1 < count) {
          own.push_back(runtime.load_model(values["model"].as<std::string>()));
        }
        for (int t = 1; t < count; ++t) predictors.push_back(own[static_cast<size_t>(t - 1)].get());
      }
      const double median = median_of(
          time_threaded(predictors, count, input, output, rows, batch_size, warmup, repetitions));
      figures.push_back({mode, count, median, median > 0 ? static_cast<double>(rows) / median : 0});
    }
  }
  // Ratios against one thread (the first figure with 1 thread; else the first figure).
  double single = figures.front().samples_per_second;
  for (const ThreadedFigure& figure : figures) {
    if (figure.threads == 1) {
      single = figure.samples_per_second;
      break;
    }
  }
  const std::string settings = run.device->settings();
  if (values.count("json") != 0) {
    detail::Json lines = detail::Json::array();
    for (const ThreadedFigure& f : figures) {
      lines.push_back({{"sharing", f.sharing},
                       {"threads", f.threads},
                       {"median_seconds", f.median_seconds},
                       {"samples_per_second", f.samples_per_second},
                       {"ratio_to_one_thread", single > 0 ? f.samples_per_second / single : 0}});
    }
    std::cout << detail::json_text(
                     detail::Json{{"benchmark", "predict_threads"},
                                  {"device", run.device->id()},
                                  {"settings", settings},
                                  {"hardware_threads", std::thread::hardware_concurrency()},
                                  {"rows", rows},
                                  {"batch_size", batch_size},
                                  {"repetitions", repetitions},
                                  {"figures", lines}})
              << "\n";
    return kExitOk;
  }
  std::cout << "predict " << rows << " x " << first.input_width() << " on " << run.device->id()
            << " (" << settings << "), batch " << batch_size << ", "
            << std::thread::hardware_concurrency() << " hardware threads\n";
  for (const ThreadedFigure& f : figures) {
    std::cout << "  " << f.sharing << ", " << f.threads << " thread" << (f.threads > 1 ? "s" : " ")
              << ": median " << f.median_seconds * 1e3 << " ms, " << f.samples_per_second
              << " samples/s, " << (single > 0 ? f.samples_per_second / single : 0)
              << "x one thread\n";
  }
  return kExitOk;
}

int run_predict_bench(const po::variables_map& values) {
  const auto rows = values["rows"].as<int64_t>();
  const auto batch_size = values["batch-size"].as<int64_t>();
  const int repetitions = values["repetitions"].as<int>();
  const int warmup = values["warmup"].as<int>();
  if (rows < 1 || batch_size < 1 || repetitions < 1 || warmup < 0) {
    std::cerr << "switchyard: --rows, --batch-size and --repetitions must be at least 1\n";
    return kExitUsage;
  }
  const std::vector<int> threads = thread_counts(values["threads"].as<std::string>());
  const std::vector<std::string> sharing = sharing_modes(values["sharing"].as<std::string>());
  if (threads.empty() || sharing.empty()) {
    std::cerr << "switchyard: --threads takes counts from 1 to 256 (\"1,4\") and --sharing "
                 "shared and/or per-thread\n";
    return kExitUsage;
  }
  const bool threaded = threads.size() > 1 || threads.front() > 1 || sharing.size() > 1;
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
    if (threaded) {
      return report_threaded(values, *runtime, *predictor, input, rows, batch_size, warmup,
                             repetitions, threads, sharing);
    }
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
      "threads", po::value<std::string>()->default_value("1"),
      "caller threads, a list to compare (1,4)")("sharing",
                                                 po::value<std::string>()->default_value("shared"),
                                                 "shared (one Predictor) and/or per-thread");
  add_bench_options(options, {.unit = "predictions",
                              .repetitions = 10,
                              .warmup = 2,
                              .config = "YAML file (device, and a safetensors model's layout)"});
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
