// Predictor: a checkpoint's model applied to data in batches, without autograd.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>

#include "formats/onnx_export.h"
#include "model/batching.h"
#include "model/train_state.h"
#include "switchyard/autocast.h"
#include "switchyard/autograd.h"
#include "switchyard/checkpoint.h"
#include "switchyard/onnx.h"
#include "switchyard/ops.h"
#include "switchyard/predict.h"

namespace switchyard {

struct Predictor::State {
  std::shared_ptr<Device> device;
  LossSettings loss;
  DType precision = DType::kF32;
  detail::DataLayout layout;
  BuiltModel built;
  // data.series with offset: last: each window is read minus its last value and the level added
  // back to the outputs. A series checkpoint keeps no table layout, so the YAML's data.series (the
  // one the model was trained with) says it.
  bool relative_to_last = false;
  // Held by predict and predict_into for their whole batch loop (predict.h, "Threads").
  std::mutex mutex;
};

namespace {

bool is_safetensors(const std::filesystem::path& path) {
  return path.extension() == ".safetensors";
}

// What a checkpoint records of the data, worked out from the configuration instead.
detail::DataLayout layout_from_config(const TrainConfig& config) {
  const PreparedData data = value_or_throw(prepare_data(config.data, config.base_dir));
  detail::DataLayout layout;
  layout.sample_shape = data.split.train.sample_shape;
  layout.class_names = data.split.train.class_names;
  layout.scaler = data.scaler;
  layout.target_names = data.split.train.target_names;
  layout.target_scaler = data.target_scaler;
  layout.imputer = data.imputer;
  layout.description = detail::describe_data(config.data);
  return layout;
}

// INVALID_ARGUMENT naming the file and line of the first label the model has no class for.
Status check_class_range(const Dataset& data, int64_t class_count) {
  for (size_t i = 0; i < data.labels.size(); ++i) {
    if (data.labels[i] < class_count) continue;
    const std::string where = i < data.source_lines.size()
                                  ? data.name + ":" + std::to_string(data.source_lines[i])
                                  : data.name + " sample " + std::to_string(i);
    return invalid_argument(where + ": class " + std::to_string(data.labels[i]) +
                            " is outside the model's " + std::to_string(class_count) +
                            " classes (0.." + std::to_string(class_count - 1) + ")");
  }
  return ok_status();
}

}  // namespace

Predictor::Predictor(const TrainConfig& config, const std::filesystem::path& weights,
                     std::shared_ptr<Device> device)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.device = std::move(device);
  s.loss = config.loss;
  s.precision = config.train.precision;
  Checkpoint checkpoint;
  ModelSpec model = config.model;
  if (is_safetensors(weights)) {
    if (model.layers.empty()) {
      throw_error(invalid_argument("weights " + weights.string() +
                                   " hold no model description: predicting from a weights file "
                                   "needs model.layers in the YAML file"));
    }
    s.layout = layout_from_config(config);
  } else {
    checkpoint = value_or_throw(read_checkpoint(weights));
    s.layout = value_or_throw(detail::get_data_layout(checkpoint));
    // The YAML's layers, when given, must be the checkpoint's (load_model checks); else the
    // checkpoint's own.
    if (model.layers.empty()) model = value_or_throw(detail::get_model_spec(checkpoint));
    if (checkpoint.contains("model/loss")) s.loss = value_or_throw(detail::get_loss(checkpoint));
  }
  // The initial values do not matter (the weights overwrite them); the seed is fixed anyway.
  // Parameters are f32 (both files hold f32 weights); `precision` applies autocast.
  InitContext init{s.device, model.init, 0, 0, DType::kF32, weights.string(), 0};
  const size_t outputs =
      s.layout.target_names.empty() ? s.layout.class_names.size() : s.layout.target_names.size();
  s.built = value_or_throw(
      build_model(model, s.layout.sample_shape, static_cast<int64_t>(outputs), init));
  if (is_safetensors(weights)) {
    const SafetensorsFile file = value_or_throw(read_safetensors(weights));
    throw_if_error(
        detail::check_exported_for(file, weights.string(), s.built, s.layout.description));
    throw_if_error(detail::import_parameters(file, weights.string(), s.built));
  } else {
    throw_if_error(detail::load_model(checkpoint, s.built));
  }
  s.built.network->eval();
  const DataSettings& series = s.layout.has_table ? s.layout.settings : config.data;
  s.relative_to_last = series.series.enabled && series.series.relative_to_last;
}

Predictor::~Predictor() = default;

const std::vector<std::string>& Predictor::class_names() const {
  return state_->layout.class_names;
}
const std::vector<std::string>& Predictor::target_names() const {
  return state_->layout.target_names;
}
const BuiltModel& Predictor::built_model() const {
  return state_->built;
}
const TableLayout* Predictor::trained_table() const {
  return state_->layout.has_table ? &state_->layout.table : nullptr;
}
const DataSettings* Predictor::trained_settings() const {
  return state_->layout.has_table ? &state_->layout.settings : nullptr;
}

namespace {

// Regression: every batch's outputs in the targets' units, and RMSE, MAE and R^2 when labeled.
void predict_values(const Predictor::State& s, const Dataset& data, int64_t batch_size,
                    Predictions& out) {
  out.regression = true;
  out.target_names = s.layout.target_names;
  std::vector<int64_t> order(static_cast<size_t>(data.sample_count));
  for (int64_t i = 0; i < data.sample_count; ++i) order[i] = i;
  double loss_sum = 0;
  for (int64_t begin = 0; begin < data.sample_count; begin += batch_size) {
    const int64_t count = std::min(batch_size, data.sample_count - begin);
    const auto batch = detail::gather_batch(data, order.data() + begin, static_cast<size_t>(count),
                                            s.device, s.precision);
    const Tensor outputs = s.built.network->forward(batch.features);
    const std::vector<float> values =
        detail::unscaled_outputs(outputs, batch, s.layout.target_scaler);
    out.values.insert(out.values.end(), values.begin(), values.end());
    if (!data.labeled) continue;
    loss_sum += compute_loss(s.loss, outputs, batch.targets, 0).item() * static_cast<double>(count);
    const std::vector<float> truth = detail::unscaled_truth(batch, s.layout.target_scaler);
    out.true_values.insert(out.true_values.end(), truth.begin(), truth.end());
  }
  if (data.labeled && out.samples > 0) {
    out.loss = loss_sum / static_cast<double>(out.samples);
    out.metrics = regression_metrics(out.true_values, out.values,
                                     static_cast<int64_t>(out.target_names.size()));
  }
}

// Classification: every batch's argmax and softmax, and the accuracy and loss when labeled.
void predict_classes(const Predictor::State& s, const Dataset& data, int64_t batch_size,
                     Predictions& out) {
  const auto class_count = static_cast<int64_t>(s.layout.class_names.size());
  double loss_sum = 0;
  int64_t correct = 0;
  std::vector<int64_t> order(static_cast<size_t>(data.sample_count));
  for (int64_t i = 0; i < data.sample_count; ++i) order[i] = i;
  for (int64_t begin = 0; begin < data.sample_count; begin += batch_size) {
    const int64_t count = std::min(batch_size, data.sample_count - begin);
    const auto batch = detail::gather_batch(data, order.data() + begin, static_cast<size_t>(count),
                                            s.device, s.precision);
    const Tensor logits = s.built.network->forward(batch.features);
    if (data.labeled) {
      loss_sum += compute_loss(s.loss, logits, batch.labels, class_count).item() *
                  static_cast<double>(count);
    }
    const std::vector<int64_t> predicted = argmax(logits, 1).to_host_int64();
    const std::vector<float> probabilities = softmax(logits, 1).to_host_float();
    for (int64_t i = 0; i < count; ++i) correct += predicted[i] == batch.host_labels[i] ? 1 : 0;
    out.predicted.insert(out.predicted.end(), predicted.begin(), predicted.end());
    out.probabilities.insert(out.probabilities.end(), probabilities.begin(), probabilities.end());
  }
  if (out.samples > 0 && data.labeled) {
    out.loss = loss_sum / static_cast<double>(out.samples);
    out.accuracy = static_cast<double>(correct) / static_cast<double>(out.samples);
  }
}

}  // namespace

int64_t Predictor::input_width() const {
  int64_t width = 1;
  for (const int64_t extent : state_->layout.sample_shape) width *= extent;
  return width;
}

int64_t Predictor::output_width() const {
  const detail::DataLayout& layout = state_->layout;
  return static_cast<int64_t>(layout.target_names.empty() ? layout.class_names.size()
                                                          : layout.target_names.size());
}

namespace {

// INVALID_ARGUMENT naming the first NaN or infinity among `rows` rows of `width` values, the first
// of which is row `first_row` of the caller's input.
Status check_finite_rows(const float* values, int64_t rows, int64_t width, int64_t first_row) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = values + r * width;
    for (int64_t f = 0; f < width; ++f) {
      if (std::isfinite(row[f])) continue;
      const char* what = std::isnan(row[f]) ? "NaN" : (row[f] > 0 ? "inf" : "-inf");
      return invalid_argument("predict: input row " + std::to_string(first_row + r) + ", column " +
                              std::to_string(f) + " (counting from 0) is " + what +
                              "; the model needs finite values (reading a CSV file refuses them "
                              "too); replace them, train with data.missing: mean, median or "
                              "most_frequent to have NaN filled, or pass them through on purpose "
                              "(Python: nan_policy='propagate')");
    }
  }
  return ok_status();
}

}  // namespace

void Predictor::predict_into(const float* samples, int64_t count, float* out, int64_t batch_size,
                             NonFinite non_finite) {
  State& s = *state_;
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (batch_size < 1) {
    throw_error(
        invalid_argument("batch_size must be at least 1, not " + std::to_string(batch_size)));
  }
  if (count < 0) throw_error(invalid_argument("a negative sample count"));
  if (count > 0 && (samples == nullptr || out == nullptr)) {
    throw_error(invalid_argument("null input or output array"));
  }
  const int64_t width = input_width();
  const int64_t outputs = output_width();
  const bool regression = !s.layout.target_names.empty();
  // data.series with offset: last: the model saw each window minus its last value and predicted
  // changes; the level is added back to its outputs.
  const bool relative = s.relative_to_last;
  const FeatureScaler& scaler = s.layout.scaler;
  const bool scaled = !scaler.offset.empty();
  NoGradGuard no_grad;
  const AutocastGuard autocast(s.precision);
  std::vector<float> staging;
  std::vector<float> levels;
  for (int64_t begin = 0; begin < count; begin += batch_size) {
    const int64_t rows = std::min(batch_size, count - begin);
    const float* source = samples + begin * width;
    staging.assign(source, source + rows * width);
    // A model trained with data.missing: mean, median or most_frequent fills a NaN as training
    // filled a missing cell; infinities are still refused.
    if (s.layout.imputer.active()) s.layout.imputer.fill(staging.data(), rows);
    if (non_finite == NonFinite::kRefuse) {
      throw_if_error(check_finite_rows(staging.data(), rows, width, begin));
    }
    levels.assign(static_cast<size_t>(rows), 0.0f);
    for (int64_t r = 0; r < rows; ++r) {
      float* row = staging.data() + r * width;
      if (relative) {
        levels[static_cast<size_t>(r)] = row[width - 1];
        for (int64_t f = 0; f < width; ++f) row[f] -= levels[static_cast<size_t>(r)];
      }
      if (!scaled) continue;
      for (int64_t f = 0; f < width; ++f) row[f] = (row[f] - scaler.offset[f]) * scaler.factor[f];
    }
    std::vector<int64_t> shape = {rows};
    shape.insert(shape.end(), s.layout.sample_shape.begin(), s.layout.sample_shape.end());
    const Tensor input = Tensor::from_host(staging, Shape(shape), s.device, s.precision);
    const Tensor result = s.built.network->forward(input);
    std::vector<float> values = regression ? result.to(DType::kF32).to_host_float()
                                           : softmax(result, 1).to(DType::kF32).to_host_float();
    if (static_cast<int64_t>(values.size()) != rows * outputs) {
      throw_error(internal_error("the model produced " + std::to_string(values.size()) +
                                 " values for " + std::to_string(rows) + " samples of " +
                                 std::to_string(outputs) + " outputs"));
    }
    if (regression) {
      if (!s.layout.target_scaler.offset.empty()) s.layout.target_scaler.unscale(values);
      if (relative) {
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t o = 0; o < outputs; ++o) values[r * outputs + o] += levels[r];
        }
      }
    }
    std::copy(values.begin(), values.end(), out + begin * outputs);
  }
}

Status export_onnx(const std::filesystem::path& path, const Predictor& predictor) {
  const Predictor::State& s = *predictor.state_;
  detail::OnnxExportSource source;
  source.model = &s.built;
  source.sample_shape = s.layout.sample_shape;
  source.class_names = s.layout.class_names;
  source.target_names = s.layout.target_names;
  source.scaler = s.layout.scaler;
  source.target_scaler = s.layout.target_scaler;
  // As predict_into decides it.
  source.relative_to_last = s.relative_to_last;
  source.data_description = s.layout.description;
  if (s.layout.has_table) {
    source.table_record = detail::table_record_text(s.layout.table, s.layout.settings);
  }
  return detail::write_onnx_model(path, source);
}

Predictions Predictor::predict(Dataset data, int64_t batch_size) {
  State& s = *state_;
  const std::lock_guard<std::mutex> lock(s.mutex);
  int64_t expected_features = 1;
  for (const int64_t extent : s.layout.sample_shape) expected_features *= extent;
  if (data.feature_count() != expected_features) {
    throw_error(invalid_argument(data.name + " has " + std::to_string(data.feature_count()) +
                                 " features per sample, but the model was trained on " +
                                 std::to_string(expected_features)));
  }
  // Missing features (NaN, read as such by a model trained with an imputing data.missing) get the
  // training split's values before scaling, as in training.
  int64_t filled = 0;
  if (s.layout.imputer.active()) filled = value_or_throw(s.layout.imputer.apply(data));
  throw_if_error(s.layout.scaler.apply(data));
  throw_if_error(data.reshape_samples(s.layout.sample_shape));
  const bool regression = !s.layout.target_names.empty();
  if (regression != data.is_regression()) {
    throw_error(invalid_argument(
        data.name + (regression ? " has classes, but the model predicts numbers (regression)"
                                : " has numbers to predict, but the model predicts classes")));
  }
  // The true values as the file holds them: scaled and unscaled again they would come back rounded
  // (68 as 67.99999). A series' targets are relative to each window's level, which predict_values
  // adds back.
  std::vector<float> file_truth;
  if (regression && data.labeled && !s.relative_to_last) file_truth = data.targets;
  if (regression && data.labeled) throw_if_error(s.layout.target_scaler.apply_to_targets(data));
  if (!regression && data.labeled) {
    throw_if_error(check_class_range(data, static_cast<int64_t>(s.layout.class_names.size())));
  }
  NoGradGuard no_grad;
  const AutocastGuard autocast(s.precision);
  Predictions out;
  if (filled > 0) {
    out.notes.push_back("filled " + std::to_string(filled) +
                        " missing value(s) with the training split's " +
                        missing_policy_name(s.layout.imputer.strategy) +
                        " of each feature, kept in the checkpoint (data.missing)");
  }
  out.class_names = s.layout.class_names;
  out.labeled = data.labeled;
  if (data.labeled) out.labels = data.labels;
  out.samples = data.sample_count;
  out.ids = data.ids;
  out.source_lines = data.source_lines;
  if (data.table.id_column >= 0 && !data.ids.empty()) {
    out.id_name = data.table.column_name(data.table.id_column);
  }
  const auto start = std::chrono::steady_clock::now();
  if (regression) {
    predict_values(s, data, batch_size, out);
    if (!file_truth.empty() && file_truth.size() == out.true_values.size()) {
      out.true_values = std::move(file_truth);
      out.metrics = regression_metrics(out.true_values, out.values,
                                       static_cast<int64_t>(out.target_names.size()));
    }
  } else {
    predict_classes(s, data, batch_size, out);
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.samples_per_second = out.seconds > 0 ? static_cast<double>(out.samples) / out.seconds : 0;
  return out;
}

}  // namespace switchyard
