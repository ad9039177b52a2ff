// Encoding model parameters, the data layout and the metric history in checkpoint records.
#include "model/train_state.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <sstream>

#include "support/byte_codec.h"

namespace switchyard::detail {
namespace {

TensorRecord to_record(const Tensor& tensor) {
  TensorRecord record;
  record.dtype = tensor.dtype();
  record.shape = tensor.shape().to_vector();
  if (is_floating(tensor.dtype())) {
    record.floats = tensor.to_host_float();
  } else {
    record.integers = tensor.to_host_int64();
  }
  return record;
}

Tensor from_record(const TensorRecord& record, const std::shared_ptr<Device>& device) {
  const Shape shape(record.shape);
  if (is_floating(record.dtype))
    return Tensor::from_host(record.floats, shape, device, record.dtype);
  if (record.dtype == DType::kI64) return Tensor::from_host(record.integers, shape, device);
  const std::vector<int32_t> narrow(record.integers.begin(), record.integers.end());
  return Tensor::from_host(narrow, shape, device);
}

std::string join_lines(const std::vector<std::string>& parts) {
  std::string text;
  for (const auto& part : parts) text += part + "\n";
  return text;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> parts;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) parts.push_back(line);
  return parts;
}

constexpr size_t kHistoryFields = 9;
constexpr size_t kValidationFields = 4;  // has_validation, loss, accuracy, macro F1

// The record "progress/history_validation" into `history` (one row per epoch), when present.
Status get_validation_history(const Checkpoint& checkpoint, std::vector<EpochMetrics>& history) {
  if (!checkpoint.contains("progress/history_validation")) return ok_status();
  SY_ASSIGN_OR_RETURN(const auto bytes, checkpoint.get_bytes("progress/history_validation"));
  constexpr size_t kRowBytes = kValidationFields * sizeof(double);
  if (bytes.size() != history.size() * kRowBytes) {
    return checkpoint.corrupt("record 'progress/history_validation' does not match the history");
  }
  for (size_t i = 0; i < history.size(); ++i) {
    double f[kValidationFields];
    std::memcpy(f, bytes.data() + i * kRowBytes, kRowBytes);
    if (f[0] != 0.0 && f[0] != 1.0) {
      return checkpoint.corrupt("record 'progress/history_validation' is damaged");
    }
    history[i].has_validation = f[0] == 1.0;
    history[i].validation_loss = f[1];
    history[i].validation_accuracy = f[2];
    history[i].validation_f1_macro = f[3];
  }
  return ok_status();
}

constexpr size_t kRegressionFields = 7;  // regression, test and validation RMSE, MAE, R^2

void put_regression_history(Checkpoint& checkpoint, const std::vector<EpochMetrics>& history) {
  std::vector<uint8_t> bytes;
  for (const EpochMetrics& m : history) {
    const double fields[kRegressionFields] = {
        m.regression ? 1.0 : 0.0, m.test_values.rmse,      m.test_values.mae,     m.test_values.r2,
        m.validation_values.rmse, m.validation_values.mae, m.validation_values.r2};
    append_bytes(bytes, fields, sizeof(fields));
  }
  checkpoint.put_bytes("progress/history_regression", std::move(bytes));
}

// The record "progress/history_regression" into `history`, when present (regression runs only):
// a resumed run replays val_rmse, val_mae and val_r2 like the validation loss.
Status get_regression_history(const Checkpoint& checkpoint, std::vector<EpochMetrics>& history) {
  if (!checkpoint.contains("progress/history_regression")) return ok_status();
  SY_ASSIGN_OR_RETURN(const auto bytes, checkpoint.get_bytes("progress/history_regression"));
  constexpr size_t kRowBytes = kRegressionFields * sizeof(double);
  if (bytes.size() != history.size() * kRowBytes) {
    return checkpoint.corrupt("record 'progress/history_regression' does not match the history");
  }
  for (size_t i = 0; i < history.size(); ++i) {
    double f[kRegressionFields];
    std::memcpy(f, bytes.data() + i * kRowBytes, kRowBytes);
    if (f[0] != 0.0 && f[0] != 1.0) {
      return checkpoint.corrupt("record 'progress/history_regression' is damaged");
    }
    EpochMetrics& m = history[i];
    m.regression = f[0] == 1.0;
    m.test_values = {f[1], f[2], f[3], 0, 0};
    m.validation_values = {f[4], f[5], f[6], 0, 0};
  }
  return ok_status();
}

// A count stored as a double (epoch, bytes, steps) that converts to an integer: converting NaN or
// a value out of range is undefined behaviour, and a damaged file must not reach it.
bool is_count(double value) {
  return value >= 0 && value < 9.2e18;
}

}  // namespace

std::string describe_data(const DataSettings& settings) {
  std::ostringstream text;
  text << "dataset=" << settings.dataset << " test_fraction=" << settings.test_fraction
       << " split_seed=" << settings.split_seed << " scale=" << scale_mode_name(settings.scale);
  if (settings.scale == ScaleMode::kDivide) text << " divisor=" << settings.divisor;
  // Like non_finite: only when set, so that checkpoints written before the key existed match.
  if (settings.validation_fraction > 0) {
    text << " validation_fraction=" << settings.validation_fraction;
  }
  // Only when not the default, so that checkpoints written before the key existed still match.
  if (settings.non_finite != NonFinitePolicy::kError) {
    text << " non_finite=" << non_finite_policy_name(settings.non_finite);
  }
  // data.missing and data.na_values: only when not their defaults, for the same reason.
  const MissingPolicy missing_default = settings.non_finite == NonFinitePolicy::kDropRows
                                            ? MissingPolicy::kDropRows
                                            : MissingPolicy::kError;
  if (settings.missing != missing_default) {
    text << " missing=" << missing_policy_name(settings.missing);
  }
  if (settings.na_values != default_na_values()) {
    text << " na_values=[";
    for (size_t i = 0; i < settings.na_values.size(); ++i) {
      text << (i == 0 ? "" : "|") << settings.na_values[i];
    }
    text << "]";
  }
  if (settings.header != HeaderMode::kDetect) {
    text << " header=" << (settings.header == HeaderMode::kNames ? "true" : "false");
  }
  if (settings.delimiter != '\0') text << " delimiter=" << settings.delimiter;
  if (!settings.target.empty()) text << " target=" << settings.target;
  if (!settings.id.empty()) text << " id=" << settings.id;
  for (const std::string& column : settings.drop) text << " drop=" << column;
  if (settings.label_order != LabelOrder::kSorted) {
    text << " label_order=" << label_order_name(settings.label_order);
  }
  for (const std::string& column : settings.targets) text << " targets=" << column;
  if (settings.is_regression()) text << " target_scale=" << scale_mode_name(settings.target_scale);
  if (const SeriesSettings& series = settings.series; series.enabled) {
    text << " series=" << series.column << " window=" << series.window
         << " target=" << (series.target == SeriesTarget::kNext ? "next" : "input")
         << " horizon=" << series.horizon
         << " gaps=" << (series.gaps == GapPolicy::kDrop ? "drop" : "interpolate")
         << " offset=" << (series.relative_to_last ? "last" : "none");
  }
  return text.str();
}

void put_data_layout(Checkpoint& checkpoint, const DataLayout& layout) {
  TensorRecord shape;
  shape.dtype = DType::kI64;
  shape.shape = {static_cast<int64_t>(layout.sample_shape.size())};
  shape.integers = layout.sample_shape;
  checkpoint.put_tensor("data/sample_shape", shape);
  checkpoint.put_string("data/class_names", join_lines(layout.class_names));
  checkpoint.put_string("data/description", layout.description);
  checkpoint.put_string("data/scaler/mode", scale_mode_name(layout.scaler.mode));
  checkpoint.put_floats("data/scaler/offset", layout.scaler.offset);
  checkpoint.put_floats("data/scaler/factor", layout.scaler.factor);
  if (layout.has_table) put_table(checkpoint, layout.table, layout.settings);
  if (layout.imputer.active()) {
    checkpoint.put_string("data/imputer/strategy", missing_policy_name(layout.imputer.strategy));
    checkpoint.put_floats("data/imputer/values", layout.imputer.values);
  }
  if (!layout.target_names.empty()) {
    checkpoint.put_string("data/target_names", join_lines(layout.target_names));
    checkpoint.put_string("data/target_scaler/mode", scale_mode_name(layout.target_scaler.mode));
    checkpoint.put_floats("data/target_scaler/offset", layout.target_scaler.offset);
    checkpoint.put_floats("data/target_scaler/factor", layout.target_scaler.factor);
  }
}

namespace {

// "data/imputer/...", when the model was trained with data.missing: mean, median or most_frequent.
Status get_imputer(const Checkpoint& checkpoint, DataLayout& layout) {
  if (!checkpoint.contains("data/imputer/strategy")) return ok_status();
  SY_ASSIGN_OR_RETURN(const std::string strategy, checkpoint.get_string("data/imputer/strategy"));
  auto parsed = parse_missing_policy(strategy);
  if (!parsed.ok() || !is_imputing(*parsed)) {
    return checkpoint.corrupt("record 'data/imputer/strategy' is '" + strategy + "'");
  }
  layout.imputer.strategy = *parsed;
  SY_ASSIGN_OR_RETURN(layout.imputer.values, checkpoint.get_floats("data/imputer/values"));
  int64_t features = 1;
  for (const int64_t extent : layout.sample_shape) features *= extent;
  const bool finite = std::all_of(layout.imputer.values.begin(), layout.imputer.values.end(),
                                  [](float value) { return std::isfinite(value); });
  if (static_cast<int64_t>(layout.imputer.values.size()) != features || !finite) {
    return checkpoint.corrupt("record 'data/imputer/values' holds " +
                              std::to_string(layout.imputer.values.size()) +
                              (finite ? "" : " (not all finite)") + " values for samples of " +
                              std::to_string(features) + " features");
  }
  return ok_status();
}

// "data/target_names" and "data/target_scaler/...", when the model is a regression's.
Status get_targets(const Checkpoint& checkpoint, DataLayout& layout) {
  if (!checkpoint.contains("data/target_names")) return ok_status();
  SY_ASSIGN_OR_RETURN(const std::string names, checkpoint.get_string("data/target_names"));
  layout.target_names = split_lines(names);
  SY_ASSIGN_OR_RETURN(const std::string mode, checkpoint.get_string("data/target_scaler/mode"));
  auto parsed = parse_scale_mode(mode);
  if (!parsed.ok()) {
    return checkpoint.corrupt("record 'data/target_scaler/mode': " + parsed.status().message());
  }
  layout.target_scaler.mode = *parsed;
  SY_ASSIGN_OR_RETURN(layout.target_scaler.offset,
                      checkpoint.get_floats("data/target_scaler/offset"));
  SY_ASSIGN_OR_RETURN(layout.target_scaler.factor,
                      checkpoint.get_floats("data/target_scaler/factor"));
  const size_t fitted = layout.target_scaler.factor.size();
  if (layout.target_names.empty() || layout.target_scaler.offset.size() != fitted ||
      (*parsed != ScaleMode::kNone && fitted != layout.target_names.size())) {
    return checkpoint.corrupt("the regression target records are inconsistent");
  }
  return ok_status();
}

}  // namespace

Result<DataLayout> get_data_layout(const Checkpoint& checkpoint) {
  DataLayout layout;
  SY_ASSIGN_OR_RETURN(const TensorRecord shape, checkpoint.get_tensor("data/sample_shape"));
  layout.sample_shape = shape.integers;
  SY_ASSIGN_OR_RETURN(const std::string names, checkpoint.get_string("data/class_names"));
  layout.class_names = split_lines(names);
  SY_ASSIGN_OR_RETURN(layout.description, checkpoint.get_string("data/description"));
  SY_ASSIGN_OR_RETURN(const std::string mode, checkpoint.get_string("data/scaler/mode"));
  auto parsed = parse_scale_mode(mode);
  if (!parsed.ok())
    return checkpoint.corrupt("record 'data/scaler/mode': " + parsed.status().message());
  layout.scaler.mode = *parsed;
  SY_ASSIGN_OR_RETURN(layout.scaler.offset, checkpoint.get_floats("data/scaler/offset"));
  SY_ASSIGN_OR_RETURN(layout.scaler.factor, checkpoint.get_floats("data/scaler/factor"));
  const bool positive =
      std::all_of(layout.sample_shape.begin(), layout.sample_shape.end(),
                  [](int64_t extent) { return extent >= 1 && extent < (1 << 30); });
  SY_RETURN_IF_ERROR(get_targets(checkpoint, layout));
  if (layout.sample_shape.empty() || !positive ||
      layout.class_names.empty() == layout.target_names.empty() ||
      layout.scaler.offset.size() != layout.scaler.factor.size()) {
    return checkpoint.corrupt("the data layout records are inconsistent");
  }
  SY_RETURN_IF_ERROR(get_table(checkpoint, layout));
  SY_RETURN_IF_ERROR(get_imputer(checkpoint, layout));
  return layout;
}

void put_named_tensors(Checkpoint& checkpoint, const std::string& prefix,
                       const NamedTensors& state) {
  for (const auto& [name, tensor] : state) checkpoint.put_tensor(prefix + name, to_record(tensor));
}

Result<NamedTensors> get_named_tensors(const Checkpoint& checkpoint, const std::string& prefix,
                                       const NamedTensors& expected) {
  NamedTensors loaded;
  for (const auto& [name, like] : expected) {
    SY_ASSIGN_OR_RETURN(const TensorRecord record, checkpoint.get_tensor(prefix + name));
    if (record.shape != like.shape().to_vector() || record.dtype != like.dtype()) {
      return checkpoint.corrupt("record '" + prefix + name + "' holds " + dtype_name(record.dtype) +
                                " " + Shape(record.shape).to_string() + ", the model expects " +
                                dtype_name(like.dtype()) + " " + like.shape().to_string());
    }
    loaded.emplace_back(name, from_record(record, like.device()));
  }
  const size_t stored = checkpoint.keys_with_prefix(prefix).size();
  if (stored != expected.size()) {
    return checkpoint.corrupt(std::to_string(stored) + " '" + prefix + "' records, but the model " +
                              "has " + std::to_string(expected.size()));
  }
  return loaded;
}

Status load_model(const Checkpoint& checkpoint, const BuiltModel& model) {
  SY_ASSIGN_OR_RETURN(const std::string kind, checkpoint.get_string("meta/kind"));
  if (kind != kTrainCheckpointKind) {
    return checkpoint.corrupt("written by '" + kind + "', expected '" + kTrainCheckpointKind + "'");
  }
  SY_RETURN_IF_ERROR(check_architecture(checkpoint, model));
  SY_ASSIGN_OR_RETURN(const NamedTensors params,
                      get_named_tensors(checkpoint, "param/", model.network->state_dict()));
  try {
    model.network->load_state_dict(params);
  } catch (const Error& error) {
    return error.status().with_context("loading parameters from " + checkpoint.source());
  }
  return ok_status();
}

SafetensorsFile export_parameters(const BuiltModel& model, const std::string& data_description) {
  SafetensorsFile file;
  for (const auto& [name, tensor] : model.network->state_dict()) {
    file.tensors.emplace_back(name, to_record(tensor));
  }
  file.metadata["format"] = "pt";  // what PyTorch-side loaders look for
  file.metadata["switchyard.architecture"] = model.architecture;
  file.metadata["switchyard.data"] = data_description;
  return file;
}

Status check_exported_for(const SafetensorsFile& file, const std::string& source,
                          const BuiltModel& model, const std::string& data_description) {
  const auto said = [&](const char* key) {
    const auto found = file.metadata.find(key);
    return found == file.metadata.end() ? std::string() : found->second;
  };
  const std::string architecture = said("switchyard.architecture");
  if (!architecture.empty() && architecture != model.architecture) {
    return failed_precondition("weights " + source + " are of another model:\n  weights: " +
                               architecture + "\n  config:  " + model.architecture);
  }
  const std::string data = said("switchyard.data");
  if (!data.empty() && data != data_description) {
    return failed_precondition("weights " + source + " were trained on other data:\n  weights: " +
                               data + "\n  config:  " + data_description);
  }
  return ok_status();
}

Status import_parameters(const SafetensorsFile& file, const std::string& source,
                         const BuiltModel& model) {
  const std::string where = "weights " + source + ": ";
  std::map<std::string, const TensorRecord*> stored;
  for (const auto& [name, record] : file.tensors) stored[name] = &record;
  NamedTensors loaded;
  std::string missing;
  for (const auto& [name, like] : model.network->state_dict()) {
    const auto found = stored.find(name);
    if (found == stored.end()) {
      missing += (missing.empty() ? "" : ", ") + name;
      continue;
    }
    TensorRecord record = *found->second;
    stored.erase(found);
    if (record.shape != like.shape().to_vector() || !is_floating(record.dtype)) {
      return invalid_argument(where + "tensor '" + name + "' is " +
                              (is_floating(record.dtype) ? "" : "integer ") +
                              Shape(record.shape).to_string() + ", the model's parameter is " +
                              dtype_name(like.dtype()) + " " + like.shape().to_string());
    }
    record.dtype = like.dtype();  // f32 values, stored in the parameter's dtype
    loaded.emplace_back(name, from_record(record, like.device()));
  }
  std::string extra;
  for (const auto& [name, record] : stored) extra += (extra.empty() ? "" : ", ") + name;
  if (!missing.empty() || !extra.empty()) {
    return invalid_argument(where + "does not match the model " + model.architecture +
                            (missing.empty() ? "" : "; missing: " + missing) +
                            (extra.empty() ? "" : "; not parameters of this model: " + extra));
  }
  try {
    model.network->load_state_dict(loaded);
  } catch (const Error& error) {
    return error.status().with_context(where);
  }
  return ok_status();
}

void put_history(Checkpoint& checkpoint, const std::vector<EpochMetrics>& history) {
  std::vector<uint8_t> bytes;
  for (const EpochMetrics& m : history) {
    const double fields[kHistoryFields] = {static_cast<double>(m.epoch),
                                           m.train_loss,
                                           m.train_accuracy,
                                           m.test_loss,
                                           m.test_accuracy,
                                           m.learning_rate,
                                           m.epoch_seconds,
                                           m.samples_per_second,
                                           static_cast<double>(m.memory.peak_allocated_bytes)};
    append_bytes(bytes, fields, sizeof(fields));
  }
  checkpoint.put_bytes("progress/history", std::move(bytes));
  // Loss-scaling figures in a record of their own, so that checkpoints written before it existed
  // still load (their epochs read as "no loss scaling").
  std::vector<uint8_t> amp;
  for (const EpochMetrics& m : history) {
    const double fields[2] = {static_cast<double>(m.skipped_steps), m.loss_scale};
    append_bytes(amp, fields, sizeof(fields));
  }
  checkpoint.put_bytes("progress/history_amp", std::move(amp));
  // Validation figures likewise (checkpoints without the record read as "no validation split"):
  // a resumed run replays them to find the best epoch and the early-stopping count.
  std::vector<uint8_t> validation;
  for (const EpochMetrics& m : history) {
    const double fields[kValidationFields] = {m.has_validation ? 1.0 : 0.0, m.validation_loss,
                                              m.validation_accuracy, m.validation_f1_macro};
    append_bytes(validation, fields, sizeof(fields));
  }
  checkpoint.put_bytes("progress/history_validation", std::move(validation));
  const bool regression = std::any_of(history.begin(), history.end(),
                                      [](const EpochMetrics& m) { return m.regression; });
  if (regression) put_regression_history(checkpoint, history);
}

Result<std::vector<EpochMetrics>> get_history(const Checkpoint& checkpoint) {
  SY_ASSIGN_OR_RETURN(const auto bytes, checkpoint.get_bytes("progress/history"));
  constexpr size_t kRowBytes = kHistoryFields * sizeof(double);
  if (bytes.size() % kRowBytes != 0) {
    return checkpoint.corrupt("record 'progress/history' has a partial row");
  }
  std::vector<EpochMetrics> history;
  for (size_t offset = 0; offset < bytes.size(); offset += kRowBytes) {
    double f[kHistoryFields];
    std::memcpy(f, bytes.data() + offset, kRowBytes);
    if (!is_count(f[0]) || !is_count(f[8])) {
      return checkpoint.corrupt("record 'progress/history' holds an impossible epoch or size");
    }
    EpochMetrics m;
    m.epoch = static_cast<int64_t>(f[0]);
    m.train_loss = f[1];
    m.train_accuracy = f[2];
    m.test_loss = f[3];
    m.test_accuracy = f[4];
    m.learning_rate = f[5];
    m.epoch_seconds = f[6];
    m.samples_per_second = f[7];
    m.memory.peak_allocated_bytes = static_cast<uint64_t>(f[8]);
    m.memory_known = f[8] > 0;
    history.push_back(m);
  }
  if (checkpoint.contains("progress/history_amp")) {
    SY_ASSIGN_OR_RETURN(const auto amp, checkpoint.get_bytes("progress/history_amp"));
    if (amp.size() != history.size() * 2 * sizeof(double)) {
      return checkpoint.corrupt("record 'progress/history_amp' does not match the history");
    }
    for (size_t i = 0; i < history.size(); ++i) {
      double f[2];
      std::memcpy(f, amp.data() + i * sizeof(f), sizeof(f));
      if (!is_count(f[0])) {
        return checkpoint.corrupt("record 'progress/history_amp' holds an impossible step count");
      }
      history[i].skipped_steps = static_cast<int64_t>(f[0]);
      history[i].loss_scale = f[1];
    }
  }
  SY_RETURN_IF_ERROR(get_validation_history(checkpoint, history));
  SY_RETURN_IF_ERROR(get_regression_history(checkpoint, history));
  return history;
}

}  // namespace switchyard::detail

namespace switchyard {

Status check_architecture(const Checkpoint& checkpoint, const BuiltModel& model) {
  SY_ASSIGN_OR_RETURN(const uint64_t fingerprint, checkpoint.get_u64("meta/fingerprint"));
  SY_ASSIGN_OR_RETURN(const std::string architecture, checkpoint.get_string("meta/architecture"));
  if (fingerprint == model.fingerprint && architecture == model.architecture) return ok_status();
  return failed_precondition("checkpoint " + checkpoint.source() +
                             " was written for a different model:\n  checkpoint: " + architecture +
                             "\n  config:     " + model.architecture);
}

}  // namespace switchyard
