// switchyard bench: speed through the framework, median of repetitions after a warm-up.
//   bench matmul --m --n --k --dtype    GFLOP/s of one matrix product on the selected device
//   bench op --name --size              latency of one small op through tensor dispatch
//   bench step --layers --batch         one MLP training step on synthetic data
//   bench sequence --model              a Transformer or LSTM training step or inference pass
//   bench train CONFIG                  median epoch time and samples/s of a training run
//   bench model CONFIG --batch-size N   inference latency per batch and samples/s of a model
//   bench batch-size CONFIG [--max N]   the largest training batch that fits the memory cap
//   bench predict MODEL --rows N        throughput of the embedding API's predict (C++)
//   bench allreduce --bytes 1M,64M      the communicator's allreduce bus bandwidth (mpirun)
#include <algorithm>
#include <chrono>
#include <iostream>
#include <sstream>

#include "bench_ops.h"
#include "cli_common.h"
#include "support/json_io.h"
#include "switchyard/buffer.h"
#include "switchyard/profile.h"
#include "switchyard/queue.h"
#include "switchyard/train.h"

namespace switchyard::cli {
namespace {

Result<std::shared_ptr<Device>> select_for_bench(const po::variables_map& values) {
  const std::vector<std::string> overrides = set_overrides(values);
  SY_ASSIGN_OR_RETURN(Config config, load_config(values, overrides));
  Registry registry = Registry::discover(plugin_search_path(config.runtime().plugin_paths));
  SY_ASSIGN_OR_RETURN(Selection selection, select_device(registry, config.runtime()));
  print_selection_messages(selection.fallback_note, selection.warnings);
  return selection.device;
}

Result<sy_dtype> parse_dtype(const std::string& name) {
  if (name == "f32") return SY_DTYPE_F32;
  if (name == "bf16") return SY_DTYPE_BF16;
  if (name == "f16") return SY_DTYPE_F16;
  return invalid_argument("unknown dtype '" + name + "'; expected f32, bf16 or f16");
}

size_t dtype_bytes(sy_dtype dtype) {
  return dtype == SY_DTYPE_F32 ? 4 : 2;
}

sy_tensor_desc matrix(const Buffer& buffer, sy_dtype dtype, int64_t rows, int64_t cols) {
  sy_tensor_desc d{};
  d.buffer = buffer.handle();
  d.dtype = dtype;
  d.rank = 2;
  d.shape[0] = rows;
  d.shape[1] = cols;
  d.strides[0] = cols;
  d.strides[1] = 1;
  return d;
}

Status fill_uniform(Queue& queue, const sy_tensor_desc& out, uint64_t seed) {
  sy_op_call call{};
  call.op = SY_OP_RANDOM_UNIFORM;
  call.num_outputs = 1;
  call.outputs[0] = out;
  call.params.random = {seed, 0, -1.0, 1.0};
  return queue.dispatch(call);
}

// How every timed figure here is measured; a peer must be timed the same way to be compared.
constexpr const char* kTimingNote =
    "host steady clock around each repetition, which ends when the queue has finished";

// The value of `key` in a settings line of space-separated key=value pairs, or "".
std::string setting_value(const std::string& settings, const std::string& key) {
  std::istringstream items(settings);
  for (std::string item; items >> item;) {
    if (item.rfind(key + "=", 0) == 0) return item.substr(key.size() + 1);
  }
  return "";
}

// Which code ran the timed matmuls, from a device that counts them (cuda: matmuls_cublaslt and
// matmuls_kernel; vulkan: gemms_coopmat and gemms_shader): "cublaslt" or "kernel", "coopmat" or
// "shader", "mixed", "none"; "" when the device does not say.
std::string matmul_path(const std::string& settings) {
  struct Counters {
    const char* fast_key;
    const char* plain_key;
    const char* fast;
    const char* plain;
  };
  for (const Counters& c : {Counters{"matmuls_cublaslt", "matmuls_kernel", "cublaslt", "kernel"},
                            Counters{"gemms_coopmat", "gemms_shader", "coopmat", "shader"}}) {
    const std::string fast_count = setting_value(settings, c.fast_key);
    const std::string plain_count = setting_value(settings, c.plain_key);
    if (fast_count.empty() || plain_count.empty()) continue;
    if (plain_count == "0") return fast_count == "0" ? "none" : c.fast;
    return fast_count == "0" ? c.plain : "mixed";
  }
  return "";
}

int matmul_bench(const Args& args) {
  po::options_description options("options");
  options.add_options()("m", po::value<int64_t>()->default_value(1024), "rows of a")(
      "n", po::value<int64_t>()->default_value(1024), "columns of b")(
      "k", po::value<int64_t>()->default_value(1024), "inner dimension")(
      "dtype", po::value<std::string>()->default_value("f32"), "f32 | bf16 | f16");
  add_bench_options(options, {.unit = "repetitions"});
  po::variables_map values;
  if (auto exit = parse_args(args, "usage: switchyard bench matmul [options]", options, values)) {
    return *exit;
  }
  auto dtype = parse_dtype(values["dtype"].as<std::string>());
  auto device =
      dtype.ok() ? select_for_bench(values) : Result<std::shared_ptr<Device>>(dtype.status());
  if (!device.ok()) {
    print_error(device.status());
    return kExitUsage;
  }
  const int64_t m = values["m"].as<int64_t>(), n = values["n"].as<int64_t>(),
                k = values["k"].as<int64_t>();
  const size_t elem = dtype_bytes(*dtype);
  auto a = (*device)->allocate(elem * m * k);
  auto b = a.ok() ? (*device)->allocate(elem * k * n) : a;
  auto c = b.ok() ? (*device)->allocate(elem * m * n) : b;
  if (!c.ok()) {
    print_error(c.status());
    return kExitFailure;
  }
  Queue& queue = (*device)->default_queue();
  sy_op_call call{};
  call.op = SY_OP_MATMUL;
  call.num_inputs = 2;
  call.num_outputs = 1;
  call.inputs[0] = matrix(**a, *dtype, m, k);
  call.inputs[1] = matrix(**b, *dtype, k, n);
  call.outputs[0] = matrix(**c, *dtype, m, n);
  Status status = fill_uniform(queue, call.inputs[0], 1);
  if (status.ok()) status = fill_uniform(queue, call.inputs[1], 2);
  auto seconds = status.ok()
                     ? time_repeated([&] { return queue.dispatch(call); }, queue,
                                     values["warmup"].as<int>(), values["repetitions"].as<int>())
                     : Result<std::vector<double>>(status);
  if (!seconds.ok()) {
    print_error(seconds.status());
    return kExitFailure;
  }
  const double median = median_of(*seconds);
  const double gflops =
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / median / 1e9;
  const std::string settings = (*device)->settings();
  const std::string path = matmul_path(settings);
  if (values.count("json") != 0) {
    const detail::Json report{{"bench", "matmul"},
                              {"device", (*device)->id()},
                              {"device_name", (*device)->info().name},
                              {"settings", settings},
                              {"matmul_path", path},
                              {"m", m},
                              {"n", n},
                              {"k", k},
                              {"dtype", values["dtype"].as<std::string>()},
                              {"timing", kTimingNote},
                              {"repetitions", seconds->size()},
                              {"median_seconds", median},
                              {"min_seconds", *std::min_element(seconds->begin(), seconds->end())},
                              {"gflops", gflops}};
    std::cout << detail::json_text(report) << "\n";
  } else {
    std::cout << "matmul " << m << "x" << n << "x" << k << " " << values["dtype"].as<std::string>()
              << " on " << (*device)->id() << " (" << (*device)->info().name << "): median "
              << median * 1e3 << " ms, " << gflops << " GFLOP/s"
              << (path.empty() ? "" : ", path " + path) << "\n";
  }
  return kExitOk;
}

}  // namespace

void add_bench_options(po::options_description& options, const BenchOptions& bench) {
  auto add = options.add_options();
  if (bench.unit != nullptr) {
    const std::string unit = bench.unit;
    add("repetitions", po::value<int>()->default_value(bench.repetitions),
        ("timed " + unit).c_str());
    if (bench.warmup >= 0) {
      add("warmup", po::value<int>()->default_value(bench.warmup),
          ("untimed " + unit + " first").c_str());
    }
  }
  if (bench.config_required) {
    add("config", po::value<std::string>()->required(), bench.config);
  } else {
    add("config", po::value<std::string>(), bench.config);
  }
  if (bench.set)
    add("set", po::value<std::vector<std::string>>()->composing(), "override: key=value");
  add("json", "print JSON");
  if (bench.profile) {
    const std::string unit = bench.unit != nullptr ? bench.unit : "calls";
    add("profile", po::value<std::string>(),
        ("write a Chrome trace of the timed " + unit +
         " to FILE and print per-op totals (profiling adds its own overhead to the times)")
            .c_str());
  }
}

Result<std::vector<double>> time_repeated(const std::function<Status()>& work, Queue& queue,
                                          int warmup, int repetitions) {
  for (int i = 0; i < warmup; ++i) SY_RETURN_IF_ERROR(work());
  SY_RETURN_IF_ERROR(queue.finish());
  std::vector<double> seconds;
  for (int i = 0; i < std::max(1, repetitions); ++i) {
    const auto start = std::chrono::steady_clock::now();
    SY_RETURN_IF_ERROR(work());
    SY_RETURN_IF_ERROR(queue.finish());
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return seconds;
}

int run_on_device(const Config& config, const std::string& profile_path,
                  const std::function<void(const std::shared_ptr<Device>&)>& body) {
  try {
    const RunDevice run = value_or_throw(open_run_device(config.runtime()));
    print_selection_messages(run.fallback_note, run.warnings);
    std::unique_ptr<Profiler> profiler;
    std::unique_ptr<ProfileScope> scope;
    if (!profile_path.empty()) {
      profiler = std::make_unique<Profiler>();
      scope = std::make_unique<ProfileScope>(*profiler);
    }
    body(run.device);
    scope.reset();
    if (profiler) {
      std::cerr << profiler->summary_table();
      throw_if_error(profiler->write_chrome_trace(profile_path));
    }
  } catch (const Error& e) {
    print_error(e.status());
    return kExitFailure;
  }
  return kExitOk;
}

int run_synthetic_bench(const Args& args, const char* usage, const po::options_description& options,
                        const std::function<Status(const po::variables_map&)>& read_settings,
                        const std::function<void(bool, const std::shared_ptr<Device>&)>& body) {
  po::variables_map values;
  if (auto exit = parse_args(args, usage, options, values)) return *exit;
  const Status settings = read_settings(values);
  if (!settings.ok()) {
    print_error(settings);
    return kExitUsage;
  }
  std::optional<Config> config = load_config_or_report(values, set_overrides(values));
  if (!config) return kExitUsage;
  const std::string profile =
      values.count("profile") != 0 ? values["profile"].as<std::string>() : std::string();
  const bool json = values.count("json") != 0;
  return run_on_device(*config, profile,
                       [&](const std::shared_ptr<Device>& device) { body(json, device); });
}

int bench_command(const Args& args) {
  const std::string usage =
      "usage: switchyard bench <matmul|op|step|sequence|train|model|batch-size|predict|"
      "allreduce> [options]  "
      "('bench <what> --help' for more)";
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << usage << "\n";
    return args.empty() ? kExitUsage : kExitOk;
  }
  const Args rest(args.begin() + 1, args.end());
  if (args[0] == "matmul") return matmul_bench(rest);
  if (args[0] == "op") return op_bench(rest);
  if (args[0] == "train") return train_bench(rest);
  if (args[0] == "model") return model_bench(rest);
  if (args[0] == "step") return step_bench(rest);
  if (args[0] == "sequence") return sequence_bench(rest);
  if (args[0] == "batch-size") return batch_size_bench(rest);
  if (args[0] == "predict") return predict_bench(rest);
  if (args[0] == "allreduce") return allreduce_bench(rest);
  std::cerr << "switchyard: unknown benchmark '" << args[0] << "'\n" << usage << "\n";
  return kExitUsage;
}

}  // namespace switchyard::cli
