// The predict section, the input samples, and the predictions file.
#include <cstdio>
#include <fstream>
#include <iomanip>

#include "switchyard/predict.h"

#include "support/temp_path.h"
#include "switchyard/onnx.h"

namespace switchyard {
namespace {

std::filesystem::path resolve(const std::filesystem::path& base, const std::string& text) {
  if (text.empty()) return {};
  const std::filesystem::path path(text);
  return path.is_relative() ? (base / path).lexically_normal() : path;
}

}  // namespace

bool PredictSettings::is_onnx() const {
  return is_onnx_path(checkpoint);
}

Result<PredictSettings> PredictSettings::from_config(const Config& config) {
  PredictSettings settings;
  const ConfigNode node = config.root()["predict"];
  if (!node.valid()) {
    return invalid_argument(config.file() +
                            ": predict and evaluate need a predict section with at least "
                            "predict.checkpoint (the trained model)");
  }
  SY_ASSIGN_OR_RETURN(const std::string checkpoint, node.string_or("checkpoint", ""));
  SY_ASSIGN_OR_RETURN(const std::string model, node.string_or("model", ""));
  if (!checkpoint.empty() && !model.empty()) {
    return node["model"].error("give predict.model or predict.checkpoint, not both");
  }
  if (checkpoint.empty() && model.empty()) {
    return node.error("predict.model (or predict.checkpoint) is required");
  }
  settings.checkpoint = resolve(config.directory(), model.empty() ? checkpoint : model);
  SY_ASSIGN_OR_RETURN(settings.input, node.string_or("input", ""));
  SY_ASSIGN_OR_RETURN(const std::string output, node.string_or("output", ""));
  settings.output = resolve(config.directory(), output);
  const ConfigNode batch = node["batch_size"];
  if (batch.valid() && batch.as_string().ok() && batch.as_string().value() != "auto") {
    SY_ASSIGN_OR_RETURN(settings.batch_size, batch.as_int());
    if (settings.batch_size < 1) return batch.error("must be >= 1 or 'auto'");
  }
  SY_ASSIGN_OR_RETURN(const std::string capture, node.string_or("capture", "auto"));
  const Result<CaptureMode> mode = parse_capture_mode(capture);
  if (!mode.ok()) return node["capture"].error(mode.status().message());
  settings.capture = *mode;
  return settings;
}

namespace {

// New rows' missing values are marked and handled as the training file's were: NaN filled with the
// checkpoint's statistics after an imputing data.missing, rows dropped after drop_rows.
void na_and_missing_as_trained(const DataSettings& trained, TableOptions& options) {
  options.na_values = trained.na_values;
  options.missing = trained.missing;
}

// A prediction input read as the training file was: the trained layout and classes, and the
// YAML's delimiter and header (which describe the new file) or the training file's when given.
TableOptions prediction_options(const DataSettings& yaml, const Predictor& predictor) {
  TableOptions options = yaml.table_options();
  const DataSettings* trained = predictor.trained_settings();
  if (trained != nullptr) {
    // The delimiter is detected afresh (new rows may come as TSV), the training file's the
    // fallback; a header setting the training file needed applies to its new rows too.
    if (options.header == HeaderMode::kDetect) options.header = trained->header;
    options.target = options.id = "";
    options.drop.clear();
    na_and_missing_as_trained(*trained, options);
  }
  options.trained = predictor.trained_table();
  options.model_classes = predictor.class_names();
  return options;
}

// A field as CSV needs it: quoted when it holds a comma, a quote, or a line break.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

Result<Dataset> load_prediction_input(const PredictSettings& predict, const DataSettings& data,
                                      const std::filesystem::path& base_dir,
                                      const Predictor& predictor) {
  if (data.series.enabled) {
    // A series model predicts the test part of its data section's series: its windows need the
    // values before them, which a file of new rows alone does not say how to cut.
    if (!predict.input.empty()) {
      return invalid_argument("predict.input: a data.series model predicts the test part of " +
                              data.dataset + "; leave predict.input out");
    }
    SY_ASSIGN_OR_RETURN(DataSplit split, load_series_split(data, base_dir));
    return std::move(split.test);
  }
  const bool regression = !predictor.target_names().empty();
  if (regression && predictor.trained_table() == nullptr && data.targets.empty()) {
    // A series model's checkpoint keeps no table layout: its windows are cut by data.series.
    return failed_precondition(
        "the model predicts " + std::to_string(predictor.target_names().size()) +
        " values from windows of a series (data.series); predict with a YAML file whose data "
        "section has the data.series it was trained with (its test part is predicted)");
  }
  const TableOptions options = prediction_options(data, predictor);
  if (!predict.input.empty()) return load_dataset(predict.input, base_dir, options);
  if (data.dataset.empty()) {
    return invalid_argument(
        "predict.input is missing, and there is no data.dataset whose test split to use: name "
        "the rows to predict (predict.input: new.csv)");
  }
  // The test split of the data section, read as the model's training file was.
  DataSettings merged = data;
  if (const DataSettings* trained = predictor.trained_settings(); trained != nullptr) {
    if (merged.target.empty()) merged.target = trained->target;
    if (merged.targets.empty()) merged.targets = trained->targets;
    if (merged.id.empty()) merged.id = trained->id;
    if (merged.drop.empty()) merged.drop = trained->drop;
    if (merged.delimiter == '\0') merged.delimiter = trained->delimiter;
    if (merged.header == HeaderMode::kDetect) merged.header = trained->header;
  }
  TableOptions split_options = merged.table_options();
  if (const DataSettings* trained = predictor.trained_settings(); trained != nullptr) {
    na_and_missing_as_trained(*trained, split_options);
  }
  split_options.model_classes = predictor.class_names();
  SY_ASSIGN_OR_RETURN(const Dataset all, load_dataset(data.dataset, base_dir, split_options));
  SY_ASSIGN_OR_RETURN(DataSplit split, stratified_split(all, data.test_fraction, data.split_seed));
  split.test.dropped_rows = all.dropped_rows;
  split.test.notes = all.notes;
  return std::move(split.test);
}

namespace {

// The id column's value, or the sample's line in its file.
void write_row_name(std::ostream& out, const Predictions& predictions, size_t i) {
  if (!predictions.ids.empty()) {
    out << csv_field(predictions.ids[i]);
  } else {
    out << (i < predictions.source_lines.size() ? predictions.source_lines[i]
                                                : static_cast<int64_t>(i + 1));
  }
}

void write_value_predictions(std::ostream& out, const Predictions& predictions) {
  out << csv_field(predictions.ids.empty() ? "line" : predictions.id_name);
  for (const std::string& name : predictions.target_names) {
    if (predictions.labeled) out << "," << csv_field(name);
    out << "," << csv_field("predicted_" + name);
  }
  out << "\n" << std::setprecision(7);
  const size_t outputs = predictions.target_names.size();
  for (size_t i = 0; i * outputs < predictions.values.size(); ++i) {
    write_row_name(out, predictions, i);
    for (size_t o = 0; o < outputs; ++o) {
      if (predictions.labeled) out << "," << predictions.true_values[i * outputs + o];
      out << "," << predictions.values[i * outputs + o];
    }
    out << "\n";
  }
}

}  // namespace

void write_predictions(std::ostream& out, const Predictions& predictions) {
  if (predictions.regression) return write_value_predictions(out, predictions);
  const bool ids = !predictions.ids.empty();
  out << csv_field(ids ? predictions.id_name : "line") << (predictions.labeled ? ",label" : "")
      << ",predicted,probability";
  for (const auto& name : predictions.class_names) out << "," << csv_field("p_" + name);
  out << "\n" << std::setprecision(6);
  const size_t classes = predictions.class_names.size();
  for (size_t i = 0; i < predictions.predicted.size(); ++i) {
    write_row_name(out, predictions, i);
    if (predictions.labeled) {
      const auto label = static_cast<size_t>(predictions.labels[i]);
      out << "," << csv_field(predictions.class_names[label]);
    }
    const auto predicted = static_cast<size_t>(predictions.predicted[i]);
    out << "," << csv_field(predictions.class_names[predicted]) << ","
        << predictions.probabilities[i * classes + predicted];
    for (size_t c = 0; c < classes; ++c) out << "," << predictions.probabilities[i * classes + c];
    out << "\n";
  }
}

Status write_predictions_csv(const std::filesystem::path& path, const Predictions& predictions) {
  std::error_code error;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), error);
  const std::filesystem::path temp = detail::temporary_path_for(path);
  {
    std::ofstream out(temp);
    if (!out) return unavailable("cannot create predictions file " + temp.string());
    write_predictions(out, predictions);
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
