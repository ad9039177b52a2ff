// What a training checkpoint holds besides raw records: the pieces shared by the Trainer (which
// writes and restores everything) and the Predictor (which needs the model and the data layout).
#pragma once

#include <string>
#include <vector>

#include "switchyard/checkpoint.h"
#include "switchyard/data.h"
#include "switchyard/nn.h"
#include "switchyard/optim.h"
#include "switchyard/safetensors.h"
#include "switchyard/train.h"

namespace switchyard::detail {

// Marks a checkpoint written by the Trainer.
inline constexpr const char* kTrainCheckpointKind = "switchyard.train.v1";

// What a training checkpoint holds, in the record "meta/content_version" (absent: 1). Version 2
// adds the records a prediction needs without a YAML file: "model/layers", "model/init",
// "model/loss" and "data/table". Every version-1 record is still written, so older builds read
// new checkpoints, and version-1 checkpoints load wherever they did before.
inline constexpr uint64_t kCheckpointContentVersion = 2;

// The data layout a model was trained on, and the scaler fitted on its training split.
struct DataLayout {
  std::vector<int64_t> sample_shape;
  std::vector<std::string> class_names;  // empty for regression
  FeatureScaler scaler;
  // Regression ("data/target_names", "data/target_scaler/..."): one name per output, and the
  // scaler fitted on the training targets, undone on predictions. Empty for classification.
  std::vector<std::string> target_names;
  FeatureScaler target_scaler;
  // data.missing: mean, median or most_frequent ("data/imputer/strategy", "data/imputer/values"):
  // the values that fill missing features, fitted on the training split. Inactive when the
  // checkpoint has no such records (other policies, and checkpoints written before them).
  FeatureImputer imputer;
  std::string description;  // dataset, split and scaling, to detect a changed data section
  // Content version 2 ("data/table"): where the training file's columns were, and the table keys
  // and image_shape of the data section that trained the model. False for older checkpoints.
  bool has_table = false;
  TableLayout table;
  DataSettings settings;
};

std::string describe_data(const DataSettings& settings);

void put_data_layout(Checkpoint& checkpoint, const DataLayout& layout);
Result<DataLayout> get_data_layout(const Checkpoint& checkpoint);

// The text of "data/table" (JSON), which ONNX exports keep too (metadata switchyard.table), and
// its parser: DATA_LOSS with what is wrong (the caller names the file) for malformed text.
std::string table_record_text(const TableLayout& table, const DataSettings& settings);
Status parse_table_record(const std::string& text, TableLayout& table, DataSettings& settings);

// "data/table": `table` and the table keys of `settings`.
void put_table(Checkpoint& checkpoint, const TableLayout& table, const DataSettings& settings);
// Fills layout.table and layout.settings (and has_table) when the record is there.
Status get_table(const Checkpoint& checkpoint, DataLayout& layout);

// The layers as canonical JSON text: two specs describe the same model exactly when equal.
std::string model_spec_text(const ModelSpec& spec);
// For messages: each layer's type and the keys it sets, as JSON ({"type":"linear",
// "out_features":16}).
std::string model_spec_summary(const ModelSpec& spec);
// "model/layers", "model/init", "model/loss", and "meta/content_version".
void put_model_spec(Checkpoint& checkpoint, const ModelSpec& spec, const LossSettings& loss);
// FAILED_PRECONDITION saying what is missing for a checkpoint written before version 2; DATA_LOSS
// for a malformed record.
Result<ModelSpec> get_model_spec(const Checkpoint& checkpoint);
// cross_entropy before version 2; "model/loss_options" (beta, delta) when the loss has them.
Result<LossSettings> get_loss(const Checkpoint& checkpoint);

// Parameters as "param/<name>" records.
void put_named_tensors(Checkpoint& checkpoint, const std::string& prefix,
                       const NamedTensors& state);
// Reads the records for every name in `expected` (their shapes and dtypes must match) as new
// tensors on the device of the expected ones; DATA_LOSS naming the record otherwise.
Result<NamedTensors> get_named_tensors(const Checkpoint& checkpoint, const std::string& prefix,
                                       const NamedTensors& expected);

// Checks kind and architecture, then loads the parameters into `model`.
Status load_model(const Checkpoint& checkpoint, const BuiltModel& model);

// The parameters as a safetensors file (PyTorch's names and layouts, f32); the metadata holds the
// architecture ("switchyard.architecture") and describe_data() of the training data
// ("switchyard.data").
SafetensorsFile export_parameters(const BuiltModel& model, const std::string& data_description);
// For predicting from a weights file, whose data layout comes from the configuration: when the
// file says what it was trained on (files we exported do, PyTorch's do not), that must be what the
// configuration describes. FAILED_PRECONDITION naming both otherwise.
Status check_exported_for(const SafetensorsFile& file, const std::string& source,
                          const BuiltModel& model, const std::string& data_description);
// Sets every parameter of `model` from `file`, converted to the parameter's dtype. INVALID_ARGUMENT
// naming `source` and the tensors when one is missing, has another shape, or is not a parameter.
Status import_parameters(const SafetensorsFile& file, const std::string& source,
                         const BuiltModel& model);

void put_history(Checkpoint& checkpoint, const std::vector<EpochMetrics>& history);
Result<std::vector<EpochMetrics>> get_history(const Checkpoint& checkpoint);

}  // namespace switchyard::detail
