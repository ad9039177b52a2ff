// Pieces of `switchyard bench` shared between its files.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "switchyard/config.h"
#include "switchyard/device.h"
#include "switchyard/queue.h"
#include "switchyard/status.h"
#include "train/run_metrics.h"

namespace switchyard::cli {

// The options every bench command shares, added after the command's own by add_bench_options:
//   --repetitions N, --warmup N   (when `unit` is set: "timed <unit>", "untimed <unit> first")
//   --config FILE [--set key=value ...] --json [--profile FILE]
struct BenchOptions {
  const char* unit =
      nullptr;  // what one timed call is ("steps", "batches"); null: no timing options
  int repetitions = 20;
  int warmup = 3;  // < 0: the command has no --warmup
  const char* config = "YAML file (backends, options)";
  bool config_required = false;
  bool set = true;       // --set overrides
  bool profile = false;  // --profile FILE
};
void add_bench_options(po::options_description& options, const BenchOptions& bench);

// Runs `work` `warmup` times, then `repetitions` times, each timed up to queue completion.
Result<std::vector<double>> time_repeated(const std::function<Status()>& work, Queue& queue,
                                          int warmup, int repetitions);
using detail::median_of;  // train/run_metrics.h

// Opens the run's device for `config` (printing the selection messages) and calls `body` on it,
// inside a profiler when `profile_path` is not empty (then prints per-op totals to stderr and
// writes the Chrome trace there). Returns the exit code; an Error is printed.
int run_on_device(const Config& config, const std::string& profile_path,
                  const std::function<void(const std::shared_ptr<Device>&)>& body);

// The command of a benchmark that times synthetic work on the selected device (bench step, bench
// sequence): parses `args` against `options` (which have --config, --set, --json and --profile),
// lets `read_settings` take its own options (an error there is a usage error, exit 2), loads the
// configuration with the --set overrides, and runs `body(json, device)` through run_on_device.
int run_synthetic_bench(const Args& args, const char* usage, const po::options_description& options,
                        const std::function<Status(const po::variables_map&)>& read_settings,
                        const std::function<void(bool, const std::shared_ptr<Device>&)>& body);

int op_bench(const Args& args);          // bench_op.cpp
int train_bench(const Args& args);       // bench_train.cpp
int model_bench(const Args& args);       // bench_model.cpp
int step_bench(const Args& args);        // bench_step.cpp
int sequence_bench(const Args& args);    // bench_sequence.cpp
int batch_size_bench(const Args& args);  // bench_batch_size.cpp
int predict_bench(const Args& args);     // bench_predict.cpp
int allreduce_bench(const Args& args);   // bench_allreduce.cpp

}  // namespace switchyard::cli
