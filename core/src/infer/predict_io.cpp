// The predict section, the input samples, and the predictions file.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iomanip>

#include "switchyard/predict.h"

namespace switchyard {
namespace {

std::filesystem::path resolve(const std::filesystem::path& base, const std::string& text) {
  if (text.empty()) return {};
  const std::filesystem::path path(text);
  return path.is_relative() ? (base / path).lexically_normal() : path;
}

}  // namespace

Result<PredictSettings> PredictSettings::from_config(const Config& config) {
  PredictSettings settings;
  const ConfigNode node = config.root()["predict"];
  if (!node.valid()) {
    return invalid_argument(config.file() +
                            ": predict and evaluate need a predict section with at least "
                            "predict.checkpoint (the trained model)");
  }
  SY_ASSIGN_OR_RETURN(const std::string checkpoint, node.string_or("checkpoint", ""));
  if (checkpoint.empty()) return node.error("predict.checkpoint is required");
  settings.checkpoint = resolve(config.directory(), checkpoint);
  SY_ASSIGN_OR_RETURN(settings.input, node.string_or("input", ""));
  SY_ASSIGN_OR_RETURN(const std::string output, node.string_or("output", ""));
  settings.output = resolve(config.directory(), output);
  const ConfigNode batch = node["batch_size"];
  if (batch.valid() && batch.as_string().ok() && batch.as_string().value() != "auto") {
    SY_ASSIGN_OR_RETURN(settings.batch_size, batch.as_int());
    if (settings.batch_size < 1) return batch.error("must be >= 1 or 'auto'");
  }
  return settings;
}

Result<Dataset> load_prediction_input(const PredictSettings& predict, const DataSettings& data,
                                      const std::filesystem::path& base_dir) {
  if (!predict.input.empty()) return load_dataset(predict.input, base_dir, data.non_finite);
  SY_ASSIGN_OR_RETURN(const Dataset all, load_dataset(data.dataset, base_dir, data.non_finite));
  SY_ASSIGN_OR_RETURN(DataSplit split, stratified_split(all, data.test_fraction, data.split_seed));
  split.test.dropped_rows = all.dropped_rows;
  return std::move(split.test);
}

Status write_predictions_csv(const std::filesystem::path& path, const Predictions& predictions) {
  std::error_code error;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), error);
  const std::filesystem::path temp =
      path.parent_path() / ("." + path.filename().string() + ".tmp." + std::to_string(::getpid()));
  {
    std::ofstream out(temp);
    if (!out) return unavailable("cannot create predictions file " + temp.string());
    out << "index,label,predicted";
    for (const auto& name : predictions.class_names) out << ",p_" << name;
    out << "\n" << std::setprecision(6);
    const size_t classes = predictions.class_names.size();
    for (size_t i = 0; i < predictions.predicted.size(); ++i) {
      out << i << "," << predictions.labels[i] << "," << predictions.predicted[i];
      for (size_t c = 0; c < classes; ++c) out << "," << predictions.probabilities[i * classes + c];
      out << "\n";
    }
    out.flush();
    if (!out) {
      std::filesystem::remove(temp, error);
      return unavailable("cannot write predictions file " + temp.string());
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::filesystem::remove(temp, error);
    return unavailable("cannot rename " + temp.string() + " to " + path.string());
  }
  return ok_status();
}

}  // namespace switchyard
