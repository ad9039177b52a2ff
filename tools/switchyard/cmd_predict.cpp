// switchyard predict CHECKPOINT DATA: predictions from a checkpoint alone. The checkpoint holds
// the model, how its training data was read, the scaler and the class names, so no YAML file is
// needed; the device is chosen as for a YAML file without one (SWITCHYARD_* variables apply).
//
// Exit codes as `run`: 0 done, 2 bad arguments or input that does not fit the model, 1 failed.
#include <iostream>

#include "cli_common.h"
#include "support/json_io.h"

namespace switchyard::cli {
namespace {

constexpr const char* kUsage =
    "usage: switchyard predict CHECKPOINT DATA [-o FILE] [--batch-size N] [--metrics FILE]\n\n"
    "Predicts the rows of DATA (a CSV or TSV file) with the model in CHECKPOINT (written by\n"
    "`switchyard run`). DATA is read as the training file was: features by column name (or\n"
    "position), the id column kept. Rows need no label; when the target column is there, the\n"
    "accuracy is printed too. Predictions (CSV: id or line, label, predicted class, its\n"
    "probability, one probability per class) go to FILE, or to standard output.";

// A YAML scalar holding `text` exactly: a JSON string is a valid YAML double-quoted scalar.
std::string yaml_string(const std::string& text) {
  return detail::json_text(detail::Json(text));
}

std::string absolute(const std::string& path) {
  return (std::filesystem::current_path() / path).lexically_normal().string();
}

}  // namespace

int predict_command(const Args& args) {
  po::options_description options("options");
  options.add_options()("checkpoint", po::value<std::string>(), "the trained model")(
      "data", po::value<std::string>(), "the rows to predict")(
      "output,o", po::value<std::string>(), "write the predictions to FILE (CSV)")(
      "batch-size", po::value<int64_t>(), "rows per batch (default 256)")(
      "metrics", po::value<std::string>(), "write the run's metrics as JSON to FILE");
  po::positional_options_description positional;
  positional.add("checkpoint", 1).add("data", 1);
  po::variables_map values;
  if (auto exit = parse_args(args, kUsage, options, values, &positional)) return *exit;
  if (values.count("checkpoint") == 0 || values.count("data") == 0) {
    std::cerr << "switchyard: predict needs a CHECKPOINT and a DATA file\n\n" << kUsage << "\n";
    return kExitUsage;
  }
  std::string text = "task: predict\npredict:\n  checkpoint: " +
                     yaml_string(absolute(values["checkpoint"].as<std::string>())) +
                     "\n  input: " + yaml_string(absolute(values["data"].as<std::string>())) + "\n";
  if (values.count("output") != 0) {
    text += "  output: " + yaml_string(absolute(values["output"].as<std::string>())) + "\n";
  }
  if (values.count("batch-size") != 0) {
    text += "  batch_size: " + std::to_string(values["batch-size"].as<int64_t>()) + "\n";
  }
  Result<Config> config = Config::load_string(text, "switchyard predict");
  Status status = config.ok() ? config->runtime().apply_environment() : config.status();
  if (!status.ok()) {
    print_error(status);
    return kExitUsage;
  }
  const std::string metrics =
      values.count("metrics") != 0 ? values["metrics"].as<std::string>() : "";
  return run_loaded_config(*config, metrics, "");
}

}  // namespace switchyard::cli
