// switchyard bench batch-size CONFIG [--max N]: the largest training batch of the YAML file's model
// that fits in the selected device's memory (its cap: backend_options.<backend>.memory_limit_bytes
// or memory_fraction), found by real trials. Each trial is what a run does at that batch size
// (train/batch_search.h): the test split uploaded, training steps with forward, loss, backward and
// the gradients the optimizer step uses, next to the model and the optimizer's state. Powers of
// two from --max down, then a binary search for the exact size. Reports every trial, the largest
// batch, its peak device memory and the cap.
//
// Exit codes: 0 found, 1 not even one sample fits (or the model alone does not), 2 bad arguments
// or configuration.
#include <iostream>

#include "bench_ops.h"
#include "cli_common.h"
#include "support/json_io.h"
#include "switchyard/train.h"
#include "train/batch_search.h"

namespace switchyard::cli {
namespace {

constexpr const char* kUsage =
    "usage: switchyard bench batch-size CONFIG [--max N] [--set key=value]... [--json]\n\n"
    "Finds the largest train.batch_size of CONFIG's model that fits in the selected device's\n"
    "memory cap (backend_options.<backend>.memory_limit_bytes / memory_fraction), by running\n"
    "training steps at candidate sizes up to N (default 4096, and at most the training split).";

constexpr int64_t kDefaultMax = 4096;

std::string bytes_text(uint64_t bytes) {
  return format_bytes(bytes) + " (" + std::to_string(bytes) + " bytes)";
}

void print_json(const po::variables_map& values, const Device& device,
                const detail::ConfigBatchSearch& search) {
  const detail::BatchSearchResult& r = search.result;
  detail::Json trials = detail::Json::array();
  for (const detail::BatchTrial& t : r.trials) {
    detail::Json trial{{"batch_size", t.batch_size}, {"fits", t.fits}};
    if (t.fits) {
      trial["peak_bytes"] = t.peak_bytes;
    } else {
      trial["error"] = t.error;
    }
    trials.push_back(std::move(trial));
  }
  const detail::Json report{{"bench", "batch-size"},
                            {"config", values["config"].as<std::string>()},
                            {"device", device.id()},
                            {"device_name", device.info().name},
                            {"architecture", search.architecture},
                            {"train_samples", search.train_samples},
                            {"max_batch_size", search.max_batch_size},
                            {"memory_known", r.memory_known},
                            {"limit_bytes", r.limit_bytes},
                            {"batch_size", r.batch_size},
                            {"peak_bytes", r.peak_bytes},
                            {"trials", std::move(trials)}};
  std::cout << detail::json_text(report) << "\n";
}

void print_text(const Device& device, const detail::ConfigBatchSearch& search, int64_t max) {
  const detail::BatchSearchResult& r = search.result;
  std::cout << search.architecture << "\n"
            << "device " << device.id() << " (" << device.info().name << "), memory cap: "
            << (!r.memory_known      ? "unknown (the backend reports no memory statistics)"
                : r.limit_bytes == 0 ? "none (the search stops at the largest size tried)"
                                     : bytes_text(r.limit_bytes))
            << "\n"
            << "trials up to " << search.max_batch_size << " (the smaller of --max " << max
            << " and the " << search.train_samples << " training samples):\n";
  for (const detail::BatchTrial& t : r.trials) {
    std::cout << "  batch " << t.batch_size << ": ";
    if (t.fits) {
      std::cout << "fits" << (r.memory_known ? ", peak " + bytes_text(t.peak_bytes) : "") << "\n";
    } else {
      std::cout << "does not fit: " << t.error << "\n";
    }
  }
  if (r.batch_size == 0) return;
  std::cout << "largest batch that fits: " << r.batch_size;
  if (r.memory_known) std::cout << ", peak " << bytes_text(r.peak_bytes);
  if (const detail::BatchTrial* failed = r.smallest_failure()) {
    std::cout << "; " << failed->batch_size << " does not fit";
  } else {
    std::cout << "; the largest size tried";
  }
  std::cout << "\n";
}

int run_search(const po::variables_map& values, const Config& config, int64_t max) {
  try {
    const TrainConfig train = value_or_throw(TrainConfig::from_config(config));
    const RunDevice run = value_or_throw(open_run_device(config.runtime()));
    print_selection_messages(run.fallback_note, run.warnings);
    detail::BatchSearchOptions options;
    options.max_batch_size = max;
    options.exact = true;
    const detail::ConfigBatchSearch search =
        detail::search_config_batch_size(train, run.device, options);
    if (values.count("json") != 0) {
      print_json(values, *run.device, search);
    } else {
      print_text(*run.device, search, max);
    }
    if (search.result.batch_size == 0) {
      print_error(resource_exhausted(
          "not even a batch of 1 sample fits in the memory of " + run.device->id() +
          " next to the model and the optimizer's state: " + search.result.trials.back().error));
      return kExitFailure;
    }
  } catch (const Error& error) {
    print_error(error.status());
    // INVALID_ARGUMENT comes from the data or the model the file describes (a model that does not
    // fit the data, a malformed data file): the configuration's fault.
    return error.status().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  return kExitOk;
}

}  // namespace

int batch_size_bench(const Args& args) {
  po::options_description options("options");
  options.add_options()("max", po::value<int64_t>()->default_value(kDefaultMax),
                        "largest batch size to try");
  add_bench_options(options, {.config = "training YAML file"});
  po::positional_options_description positional;
  positional.add("config", 1);
  po::variables_map values;
  if (auto exit = parse_args(args, kUsage, options, values, &positional)) return *exit;
  if (values.count("config") == 0) {
    std::cerr << "switchyard: bench batch-size needs a CONFIG file\n\n" << kUsage << "\n";
    return kExitUsage;
  }
  const int64_t max = values["max"].as<int64_t>();
  if (max < 1) {
    print_error(invalid_argument("--max must be >= 1, got " + std::to_string(max)));
    return kExitUsage;
  }
  const std::vector<std::string> overrides = set_overrides(values);
  std::optional<Config> config = load_config_or_report(values, overrides);
  if (!config) return kExitUsage;
  return run_search(values, *config, max);
}

}  // namespace switchyard::cli
