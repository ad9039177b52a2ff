// switchyard bench op: latency of one small op through the whole dispatch path (tensor, op
// dispatch, plugin), with autograd off, as a user's code would call it.
#include <iostream>

#include "bench_ops.h"
#include "cli_common.h"
#include "support/json_io.h"
#include "switchyard/autograd.h"
#include "switchyard/ops.h"
#include "switchyard/tensor.h"
#include "switchyard/train.h"

namespace switchyard::cli {
namespace {

Result<std::function<Tensor()>> op_named(const std::string& name, const Tensor& a,
                                         const Tensor& b) {
  if (name == "add") return std::function<Tensor()>([&] { return add(a, b); });
  if (name == "mul") return std::function<Tensor()>([&] { return mul(a, b); });
  if (name == "relu") return std::function<Tensor()>([&] { return relu(a); });
  if (name == "exp") return std::function<Tensor()>([&] { return exp(a); });
  if (name == "sum") return std::function<Tensor()>([&] { return sum(a); });
  return invalid_argument("unknown op '" + name + "'; expected add, mul, relu, exp or sum");
}

}  // namespace

int op_bench(const Args& args) {
  po::options_description options("options");
  options.add_options()("name", po::value<std::string>()->default_value("add"),
                        "add | mul | relu | exp | sum")(
      "size", po::value<int64_t>()->default_value(16), "elements per tensor");
  add_bench_options(options, {.unit = "calls", .repetitions = 20000, .warmup = 1000});
  po::variables_map values;
  if (auto exit = parse_args(args, "usage: switchyard bench op [options]", options, values)) {
    return *exit;
  }
  const std::vector<std::string> overrides = set_overrides(values);
  std::optional<Config> config = load_config_or_report(values, overrides);
  if (!config) return kExitUsage;
  try {
    RunDevice run = value_or_throw(open_run_device(config->runtime()));
    print_selection_messages(run.fallback_note, run.warnings);
    const int64_t size = values["size"].as<int64_t>();
    NoGradGuard no_grad;
    Tensor a = rand_uniform({size}, -1.0, 1.0, 1, 0, run.device);
    Tensor b = rand_uniform({size}, -1.0, 1.0, 2, 0, run.device);
    const std::string name = values["name"].as<std::string>();
    auto op = value_or_throw(op_named(name, a, b));
    Tensor out;
    auto seconds = value_or_throw(time_repeated(
        [&] {
          out = op();
          return ok_status();
        },
        run.device->default_queue(), values["warmup"].as<int>(), values["repetitions"].as<int>()));
    const double median_us = median_of(seconds) * 1e6;
    if (values.count("json") != 0) {
      const detail::Json report{{"bench", "op"},
                                {"op", name},
                                {"size", size},
                                {"device", run.device->id()},
                                {"median_microseconds", median_us}};
      std::cout << detail::json_text(report) << "\n";
    } else {
      std::cout << name << " of " << size << " f32 elements on " << run.device->id() << ": median "
                << median_us << " us per call (tensor + dispatch + plugin)\n";
    }
  } catch (const Error& e) {
    print_error(e.status());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace switchyard::cli
