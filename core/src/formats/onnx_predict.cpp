// Predictions from an ONNX model (predict.model: x.onnx, `switchyard predict x.onnx rows.csv`).
//
// A model switchyard exported from a table keeps how the table was read (metadata
// switchyard.table) and its class or target names: its rows are then read as a checkpoint reads
// them (features by column name, the id kept, the target optional) and its classes named. Any
// other file says nothing of how its inputs were read or scaled, so the rows are taken as they
// come: by position, the first F columns are the features, F being the product of the model's
// input extents besides the batch axis, reshaped to the input's shape; one more column is the label
// (data.id and data.drop are refused rather than ignored). An output [batch, C] with C >= 2 is read
// as class scores (probabilities when every row already sums to 1, otherwise their softmax, and the
// run says which); any other output gives one value per element, as a regression model's
// predictions.
#include <chrono>
#include <cmath>
#include <sstream>

#include "data/csv_text.h"
#include "model/train_state.h"
#include "runtime/memory_budget.h"
#include "support/json_io.h"
#include "switchyard/data.h"
#include "switchyard/metrics.h"
#include "switchyard/onnx.h"
#include "switchyard/ops.h"
#include "switchyard/predict.h"

namespace switchyard {
namespace {

// The features per sample and the input's shape for a batch of `batch` samples.
struct OnnxInputLayout {
  int64_t features = 1;
  std::vector<int64_t> shape;  // with the batch axis at `batch_axis`
  size_t batch_axis = 0;
  bool integer = false;
};

OnnxInputLayout input_layout(const OnnxModel& model) {
  const std::string& source = model.path().string();
  if (model.inputs().size() != 1) {
    throw_error(invalid_argument(source + ": the model takes " +
                                 std::to_string(model.inputs().size()) +
                                 " inputs; predicting from a table needs a model with one"));
  }
  const OnnxValueInfo& info = model.inputs()[0];
  OnnxInputLayout layout;
  layout.shape = info.shape;
  layout.integer = !info.is_float();
  bool batch_found = false;
  for (size_t axis = 0; axis < info.shape.size(); ++axis) {
    if (info.shape[axis] < 0 && !batch_found) {
      layout.batch_axis = axis;
      batch_found = true;
    } else if (info.shape[axis] < 0) {
      throw_error(invalid_argument(source + ": input '" + info.name + "' has a dynamic axis " +
                                   std::to_string(axis) + " besides the batch axis; a table's " +
                                   "rows need every other extent fixed"));
    } else {
      layout.features *= info.shape[axis];
    }
  }
  if (!batch_found && (info.shape.empty() || info.shape[0] != 1)) {
    throw_error(invalid_argument(source + ": input '" + info.name +
                                 "' has no dynamic batch axis and a first extent other than 1"));
  }
  if (!batch_found) layout.batch_axis = 0;
  // The features are a CSV row's first columns; a row longer than the CSV reader's line limit
  // cannot hold them, and the table layout made for them would only exhaust memory.
  if (layout.features > detail::kMaxCsvFields) {
    throw_error(invalid_argument(
        source + ": input '" + info.name + "' takes " + std::to_string(layout.features) +
        " values per sample, more than a CSV row holds (" + std::to_string(detail::kMaxCsvFields) +
        " in a line of at most " + std::to_string(detail::kMaxCsvLineBytes) + " bytes)"));
  }
  return layout;
}

// An integer input is given whole numbers: the CSV's values are read as f32, so a fraction (1.5)
// would be rounded and a value of 2^24 or more may not be the integer written; both are refused,
// naming the file, the line and the column, before anything runs.
void check_integer_rows(const OnnxModel& model, const Dataset& data, int64_t features) {
  constexpr float kExact = 16777216.0F;  // 2^24: the integers below it are exact in f32
  for (int64_t i = 0; i < data.sample_count; ++i) {
    for (int64_t k = 0; k < features; ++k) {
      const float value = data.features[static_cast<size_t>(i * features + k)];
      const bool whole = std::nearbyint(value) == value;
      if (whole && std::fabs(value) < kExact) continue;
      const std::string line = static_cast<size_t>(i) < data.source_lines.size()
                                   ? std::to_string(data.source_lines[static_cast<size_t>(i)])
                                   : "row " + std::to_string(i + 1);
      std::ostringstream text;
      text.precision(9);
      text << data.name << ":" << line << ":" << k + 1 << ": " << value
           << (whole ? " is not below 2^24 in magnitude (values are read as 32-bit floats, which "
                       "hold larger integers only approximately)"
                     : " is not a whole number")
           << ", and input '" << model.inputs()[0].name << "' of " << model.path().string()
           << " is " << model.inputs()[0].element_type;
      throw_error(invalid_argument(text.str()));
    }
  }
}

// What an export of ours says of its table and outputs (metadata switchyard.*); empty members for
// another producer's file.
struct ExportedLayout {
  bool has_table = false;
  TableLayout table;
  DataSettings settings;
  std::vector<std::string> class_names;
  std::vector<std::string> target_names;
};

Result<ExportedLayout> exported_layout(const OnnxModel& model) {
  const std::map<std::string, std::string> metadata = model.metadata();
  const std::string source = model.path().string();
  ExportedLayout layout;
  for (const auto& [key, names] : {std::pair<std::string, std::vector<std::string>*>{
                                       "switchyard.class_names", &layout.class_names},
                                   {"switchyard.target_names", &layout.target_names}}) {
    const auto found = metadata.find(key);
    if (found == metadata.end()) continue;
    try {
      *names = detail::parse_strict_json(found->second).get<std::vector<std::string>>();
    } catch (const std::exception& error) {
      return data_loss(source + ": metadata " + key +
                       " is not a JSON list of names: " + error.what());
    }
  }
  const auto table = metadata.find("switchyard.table");
  if (table == metadata.end()) return layout;
  Status parsed = detail::parse_table_record(table->second, layout.table, layout.settings);
  if (!parsed.ok()) {
    return data_loss(source + ": metadata switchyard.table is malformed: " + parsed.message());
  }
  layout.has_table = true;
  return layout;
}

// A YAML data key that repeats what the model's metadata says must agree with it.
Status check_agrees(const std::string& key, const std::string& yaml, const std::string& trained,
                    const OnnxModel& model) {
  if (yaml.empty() || yaml == trained) return ok_status();
  return invalid_argument("data." + key + " '" + yaml + "' contradicts " + model.path().string() +
                          ", which was trained with " +
                          (trained.empty() ? "none" : "'" + trained + "'") +
                          " (metadata switchyard.table)");
}

// The rows of a table-trained export, read as its checkpoint would read them (predict_io.cpp's
// prediction_options): the trained columns by name, the YAML's delimiter and header for the new
// file, labels by class name.
Result<Dataset> load_exported_table(const PredictSettings& predict, const DataSettings& data,
                                    const std::filesystem::path& base_dir, const OnnxModel& model,
                                    const ExportedLayout& exported, int64_t features) {
  if (static_cast<int64_t>(exported.table.feature_columns.size()) != features) {
    return data_loss(model.path().string() + ": metadata switchyard.table lists " +
                     std::to_string(exported.table.feature_columns.size()) +
                     " feature columns, and input '" + model.inputs()[0].name + "' takes " +
                     std::to_string(features));
  }
  SY_RETURN_IF_ERROR(check_agrees("target", data.target, exported.settings.target, model));
  SY_RETURN_IF_ERROR(check_agrees("id", data.id, exported.settings.id, model));
  std::string yaml_drop;
  std::string trained_drop;
  for (const std::string& column : data.drop) yaml_drop += (yaml_drop.empty() ? "" : ",") + column;
  for (const std::string& column : exported.settings.drop) {
    trained_drop += (trained_drop.empty() ? "" : ",") + column;
  }
  SY_RETURN_IF_ERROR(check_agrees("drop", yaml_drop, trained_drop, model));
  TableOptions options = data.table_options();
  if (options.header == HeaderMode::kDetect) options.header = exported.settings.header;
  options.target = options.id = "";
  options.drop.clear();
  options.trained = &exported.table;
  options.model_classes = exported.class_names;
  return load_dataset(predict.input, base_dir, options);
}

}  // namespace

Result<Dataset> load_onnx_prediction_input(const PredictSettings& predict, const DataSettings& data,
                                           const std::filesystem::path& base_dir,
                                           const OnnxModel& model, int64_t classes) {
  const OnnxInputLayout layout = input_layout(model);
  if (predict.input.empty()) {
    return invalid_argument(
        "predict.input is missing: an ONNX model needs the rows to predict "
        "(predict.input: rows.csv)");
  }
  SY_ASSIGN_OR_RETURN(const ExportedLayout exported, exported_layout(model));
  if (exported.has_table) {
    return load_exported_table(predict, data, base_dir, model, exported, layout.features);
  }
  if (!data.id.empty() || !data.drop.empty()) {
    return invalid_argument(
        "data.id and data.drop are not supported with an ONNX model (" + model.path().string() +
        "): its rows are read by position, the features first, then an optional label; leave "
        "those columns out of " +
        predict.input);
  }
  // The rows' layout: features by position, then an optional label column.
  TableLayout trained;
  trained.header = "none";
  trained.column_count = layout.features + 1;
  for (int64_t k = 0; k < layout.features; ++k) trained.feature_columns.push_back(k);
  trained.target_column = layout.features;
  TableOptions options = data.table_options();
  options.target = options.id = "";
  options.drop.clear();
  options.trained = &trained;
  // `classes` is the output's declared extent: a name is made for each.
  SY_RETURN_IF_ERROR(detail::check_memory_budget(
      static_cast<uint64_t>(std::max<int64_t>(classes, 0)) * sizeof(std::string),
      "names for the " + std::to_string(classes) + " classes of output '" +
          model.outputs().at(0).name + "'",
      model.path().string()));
  for (int64_t c = 0; c < classes; ++c) options.model_classes.push_back(std::to_string(c));
  if (classes == 0) trained.value_columns = {layout.features};
  return load_dataset(predict.input, base_dir, options);
}

namespace {

// The model's outputs for every row, in batches of `batch_size`, as one float per output value.
struct Scores {
  std::vector<float> values;
  int64_t width = 0;     // values per row
  bool classes = false;  // [batch, >= 2] outputs: one score per class
};

Scores run_batches(OnnxModel& model, const Dataset& data, const OnnxInputLayout& layout,
                   int64_t batch_size) {
  const auto& device = model.device();
  Scores scores;
  for (int64_t begin = 0; begin < data.sample_count; begin += batch_size) {
    const int64_t count = std::min(batch_size, data.sample_count - begin);
    std::vector<int64_t> shape = layout.shape;
    shape[layout.batch_axis] = count;
    const auto first = data.features.begin() + begin * layout.features;
    const std::vector<float> rows(first, first + count * layout.features);
    Tensor input;
    if (layout.integer) {
      std::vector<int64_t> values(rows.size());
      for (size_t k = 0; k < rows.size(); ++k)
        values[k] = static_cast<int64_t>(std::llround(rows[k]));
      input = Tensor::from_host(values, Shape(shape), device);
    } else {
      input = Tensor::from_host(rows, Shape(shape), device);
    }
    const Tensor output = model.run({input})[0];
    if (begin == 0) {
      scores.classes = output.rank() == 2 && output.dim(1) >= 2;
      scores.width = output.numel() / std::max<int64_t>(count, 1);
      if (output.numel() == 0) {
        // A predictions file of a header and no values would pass for a result.
        throw_error(invalid_argument(model.path().string() + ": output '" +
                                     model.outputs()[0].name + "' has no elements per sample " +
                                     "(shape " + output.shape().to_string() + " for a batch of " +
                                     std::to_string(count) + "): there is nothing to predict"));
      }
    }
    if (output.numel() != count * scores.width) {
      throw_error(invalid_argument(model.path().string() +
                                   ": the output's size per sample changes with the batch"));
    }
    const std::vector<float> values =
        (is_floating(output.dtype()) ? output : output.to(DType::kF32)).to_host_float();
    scores.values.insert(scores.values.end(), values.begin(), values.end());
  }
  return scores;
}

// Classes: probabilities (the outputs when their rows sum to 1, else their softmax), the
// predicted class, and accuracy and log loss where the table has labels.
void fill_classes(Predictions& out, const std::vector<float>& scores, int64_t width,
                  const Dataset& data, const ExportedLayout& exported) {
  bool probabilities = true;
  for (int64_t i = 0; i < data.sample_count && probabilities; ++i) {
    double total = 0;
    for (int64_t c = 0; c < width; ++c) {
      const float p = scores[static_cast<size_t>(i * width + c)];
      probabilities = probabilities && p >= 0.0F && p <= 1.0F;
      total += static_cast<double>(p);
    }
    probabilities = probabilities && std::fabs(total - 1.0) < 1e-4;
  }
  out.notes.push_back(probabilities ? "probabilities: the model's output (its rows sum to 1)"
                                    : "probabilities: the softmax of the model's output");
  if (static_cast<int64_t>(exported.class_names.size()) == width) {
    out.class_names = exported.class_names;
  } else {
    for (int64_t c = 0; c < width; ++c) out.class_names.push_back(std::to_string(c));
  }
  out.probabilities = scores;
  for (int64_t i = 0; i < data.sample_count; ++i) {
    float* row = out.probabilities.data() + i * width;
    if (!probabilities) {
      const float top = *std::max_element(row, row + width);
      double total = 0;
      for (int64_t c = 0; c < width; ++c) total += std::exp(static_cast<double>(row[c] - top));
      for (int64_t c = 0; c < width; ++c)
        row[c] = static_cast<float>(std::exp(static_cast<double>(row[c] - top)) / total);
    }
    out.predicted.push_back(std::max_element(row, row + width) - row);
  }
  out.labeled = data.labeled && !data.labels.empty();
  if (out.labeled) {
    out.labels = data.labels;
    int64_t right = 0;
    double loss = 0;
    for (int64_t i = 0; i < data.sample_count; ++i) {
      const int32_t label = data.labels[static_cast<size_t>(i)];
      right += out.predicted[static_cast<size_t>(i)] == label ? 1 : 0;
      loss -= std::log(std::max(
          1e-30, static_cast<double>(out.probabilities[static_cast<size_t>(i * width + label)])));
    }
    out.accuracy =
        static_cast<double>(right) / static_cast<double>(std::max<int64_t>(data.sample_count, 1));
    out.loss = loss / static_cast<double>(std::max<int64_t>(data.sample_count, 1));
  }
}

// Regression: the values, named by the export's targets, and their metrics where the table has
// targets.
void fill_regression(Predictions& out, const std::vector<float>& scores, int64_t width,
                     const Dataset& data, const ExportedLayout& exported, const std::string& name) {
  out.regression = true;
  if (static_cast<int64_t>(exported.target_names.size()) == width) {
    out.target_names = exported.target_names;
  } else {
    for (int64_t o = 0; o < width; ++o)
      out.target_names.push_back(width == 1 ? name : name + "_" + std::to_string(o));
  }
  out.values = scores;
  out.labeled = data.labeled && data.targets.size() == static_cast<size_t>(data.sample_count) *
                                                           static_cast<size_t>(width);
  if (out.labeled) {
    out.true_values = data.targets;
    out.metrics = regression_metrics(out.true_values, out.values, width);
    out.loss = out.metrics.rmse * out.metrics.rmse;  // the mean squared error
  }
}
}  // namespace

Predictions predict_onnx(OnnxModel& model, const Dataset& data, int64_t batch_size) {
  if (batch_size < 1) throw_error(invalid_argument("batch size must be >= 1"));
  const OnnxInputLayout layout = input_layout(model);
  if (data.feature_count() != layout.features) {
    throw_error(invalid_argument(data.name + " has " + std::to_string(data.feature_count()) +
                                 " features per row, and " + model.path().string() + " takes " +
                                 std::to_string(layout.features)));
  }
  if (layout.integer) check_integer_rows(model, data, layout.features);
  const ExportedLayout exported = value_or_throw(exported_layout(model));
  Predictions out;
  out.samples = data.sample_count;
  out.source_lines = data.source_lines;
  // Rows are named by the id column when the table has one (as Predictor::predict names them),
  // else by line.
  out.ids = data.ids;
  if (data.table.id_column >= 0 && !data.ids.empty()) {
    out.id_name = data.table.column_name(data.table.id_column);
  }
  const auto start = std::chrono::steady_clock::now();
  const Scores scores = run_batches(model, data, layout, batch_size);
  if (scores.classes) {
    fill_classes(out, scores.values, scores.width, data, exported);
  } else {
    fill_regression(out, scores.values, scores.width, data, exported, model.outputs()[0].name);
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.samples_per_second = out.seconds > 0 ? static_cast<double>(out.samples) / out.seconds : 0;
  return out;
}

}  // namespace switchyard
