// switchyard bench train CONFIG: a training run timed per epoch; reports the median epoch time and
// samples per second (evaluation excluded), and the accuracy reached, so that speed is never
// compared at unequal quality.
#include <iostream>

#include "bench_ops.h"
#include "cli_common.h"
#include "support/json_io.h"
#include "switchyard/train.h"

namespace switchyard::cli {

int train_bench(const Args& args) {
  po::options_description options("options");
  add_bench_options(options, {.config = "training YAML file", .config_required = true});
  po::positional_options_description positional;
  positional.add("config", 1);
  po::variables_map values;
  if (auto exit = parse_args(args, "usage: switchyard bench train CONFIG [--set k=v]... [--json]",
                             options, values, &positional)) {
    return *exit;
  }
  std::vector<std::string> overrides = {"train.progress=none", "train.checkpoint=none"};
  if (values.count("set") != 0) {
    const auto& extra = values["set"].as<std::vector<std::string>>();
    overrides.insert(overrides.end(), extra.begin(), extra.end());
  }
  std::optional<Config> config = load_config_or_report(values, overrides);
  if (!config) return kExitUsage;
  try {
    TrainConfig train_config = value_or_throw(TrainConfig::from_config(*config));
    RunDevice run = value_or_throw(open_run_device(config->runtime()));
    Trainer trainer(std::move(train_config), run.device);
    const TrainSummary summary = trainer.run();
    std::vector<double> epoch_seconds;
    for (const auto& e : summary.history) epoch_seconds.push_back(e.epoch_seconds);
    const double median = median_of(epoch_seconds);
    const double samples_per_second =
        median > 0 ? static_cast<double>(summary.info.train_samples) / median : 0.0;
    const double accuracy = summary.history.empty() ? 0.0 : summary.history.back().test_accuracy;
    if (values.count("json") != 0) {
      const detail::Json report{{"bench", "train"},
                                {"config", values["config"].as<std::string>()},
                                {"device", summary.info.device_id},
                                {"epochs", summary.history.size()},
                                {"epoch_seconds_median", median},
                                {"samples_per_second", samples_per_second},
                                {"test_accuracy", accuracy}};
      std::cout << detail::json_text(report) << "\n";
    } else {
      std::cout << values["config"].as<std::string>() << " on " << summary.info.device_id
                << ": median epoch " << median * 1e3 << " ms, " << samples_per_second
                << " samples/s, test accuracy " << accuracy << "\n";
    }
  } catch (const Error& e) {
    print_error(e.status());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace switchyard::cli
