// Inference: a trained checkpoint applied to a data set, in batches, without autograd.
//
// A checkpoint holds everything a prediction needs: the layers (model.layers), the data layout
// (feature columns, target, id, image shape), the class names and the scaler fitted during
// training, so new data is read and scaled exactly as the training data was. A YAML `model:`
// section may repeat the layers; it must then match the checkpoint's architecture. Checkpoints
// written before they kept the layers (content version 1) need the YAML's model.layers.
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "switchyard/capture.h"
#include "switchyard/checkpoint.h"
#include "switchyard/config.h"
#include "switchyard/data.h"
#include "switchyard/train.h"

namespace switchyard {

class OnnxModel;

// The `predict:` section.
struct PredictSettings {
  // predict.model or predict.checkpoint (one of them is required): a checkpoint, a .safetensors
  // file, or an .onnx model.
  std::filesystem::path checkpoint;
  bool is_onnx() const;          // an .onnx model (is_onnx_path, switchyard/onnx.h)
  std::string input;             // dataset name or CSV path; "" = the data section's test split
  std::filesystem::path output;  // predictions CSV (task: predict); "" = none
  int64_t batch_size = 256;      // auto also means 256
  // predict.capture: replay of an ONNX model's forward pass (switchyard/capture.h).
  CaptureMode capture = CaptureMode::kAuto;

  static Result<PredictSettings> from_config(const Config& config);
};

struct Predictions {
  std::vector<std::string> class_names;
  std::vector<int64_t> predicted;     // class index per sample
  std::vector<float> probabilities;   // softmax, samples x classes, row-major
  bool labeled = true;                // false: the input had no target column
  std::vector<int32_t> labels;        // the input's labels; empty when unlabeled
  std::vector<std::string> ids;       // the id column's values; empty without one
  std::string id_name;                // the id column's name ("" without one)
  std::vector<int64_t> source_lines;  // each sample's line in its file; may be empty
  // Regression: one name per output, the predicted values (samples x outputs, in the targets'
  // units), the input's true values when labeled, and RMSE, MAE and R^2 against them.
  bool regression = false;
  std::vector<std::string> target_names;
  std::vector<float> values;
  std::vector<float> true_values;
  RegressionMetrics metrics;
  double loss = 0;  // mean loss against the labels (0 when unlabeled)
  double accuracy = 0;
  int64_t samples = 0;
  double seconds = 0;  // batched inference, uploads and read-backs included
  double samples_per_second = 0;
  std::vector<std::string> notes;  // choices made for the caller (an ONNX model's probabilities)
};

// Threads: a Predictor may be shared. predict and predict_into may be called from any number of
// threads at once; the calls run one at a time (each takes the predictor's lock for its whole
// batch loop), so every call gives the bits a single thread would. Two predictors on one device
// run concurrently, their plugin calls serialised by the device (device.h). Measured on 2 cores
// (tools/bench/README.md, "Predicting from threads"): 4 threads on one onednn predictor give
// 1.05-1.19x one thread's throughput, one predictor per thread 0.87-1.05x.
class Predictor {
 public:
  // Builds `config`'s model on `device` with the weights of `weights`, which is either
  // - a training checkpoint (it also holds the data layout: sample shape, classes, fitted scaler);
  //   Throws Error: DATA_LOSS for a damaged one, FAILED_PRECONDITION (naming both architectures)
  //   for another model's; or
  // - a .safetensors file (switchyard/safetensors.h, e.g. from PyTorch): the data layout then
  //   comes from config.data, the scaler fitted on its training split as a training run fits it;
  //   INVALID_ARGUMENT naming a tensor that is missing, extra or of another shape.
  // config.train.precision applies autocast.
  Predictor(const TrainConfig& config, const std::filesystem::path& weights,
            std::shared_ptr<Device> device);
  ~Predictor();
  Predictor(const Predictor&) = delete;
  Predictor& operator=(const Predictor&) = delete;

  // Scales and reshapes raw (unscaled) samples as in training, then runs the model in eval mode
  // under NoGradGuard. Throws Error when the feature count or classes do not fit the model.
  Predictions predict(Dataset data, int64_t batch_size);

  // Embedding (the C and Python APIs): raw samples from the caller's memory, no Dataset.
  // input_width(): floats per sample (the product of the trained sample shape); output_width():
  // one per class (softmax probabilities) or one per regression target (in the targets' units).
  int64_t input_width() const;
  int64_t output_width() const;
  // What predict_into does with a NaN or infinite input value: refuse it (INVALID_ARGUMENT naming
  // its row and column, as reading a CSV file does) or pass it to the model. A model trained with
  // data.missing: mean, median or most_frequent first fills every NaN with the checkpoint's value
  // for its feature, as training filled a missing cell (a copy: the caller's array is not
  // written); infinities remain.
  enum class NonFinite { kRefuse, kPropagate };

  // Predicts `count` raw (unscaled) samples, row-major at `samples` (count x input_width()), into
  // `out` (count x output_width()). The caller's arrays are read and written a batch at a time:
  // only one batch is ever copied (scaled and uploaded), never the whole input. Throws Error
  // (INVALID_ARGUMENT for a batch_size < 1, or a non-finite value under kRefuse); `out` may then
  // hold the batches before the failing one.
  void predict_into(const float* samples, int64_t count, float* out, int64_t batch_size,
                    NonFinite non_finite = NonFinite::kRefuse);

  const std::vector<std::string>& class_names() const;   // empty for a regression model
  const std::vector<std::string>& target_names() const;  // regression: one per output
  const BuiltModel& built_model() const;
  // How the training table was read, and the data keys that trained the model; null for a
  // checkpoint written before it kept them (content version 1) and for a weights file.
  const TableLayout* trained_table() const;
  const DataSettings* trained_settings() const;

  // The private state; public only as a name, so that predictor.cpp's helpers can take it.
  struct State;

 private:
  // onnx.h: the model with this predictor's scaling and outputs, as ONNX.
  friend Status export_onnx(const std::filesystem::path& path, const Predictor& predictor);

  std::unique_ptr<State> state_;
};

// The samples a predict/evaluate run reads: `input`, or the test split of the data section. With a
// checkpoint that keeps its table layout, `input` is read as the training file was (features by
// name or position, labels by class name, the id column) and may lack the target column; the
// YAML's data.delimiter and data.header, when given, describe the input file.
Result<Dataset> load_prediction_input(const PredictSettings& predict, const DataSettings& data,
                                      const std::filesystem::path& base_dir,
                                      const Predictor& predictor);

// ONNX models (switchyard/onnx.h). The rows of predict.input as an ONNX model takes them. An export
// of ours from a table (metadata switchyard.table) reads them as its checkpoint would: columns by
// name, the id kept, labels by class name (a YAML data.target, data.id or data.drop must agree with
// the metadata). Any other model: the first F columns are the features (data.id and data.drop are
// refused: rows are read by position), F the product of the model's input extents besides its
// batch axis; one more column is the label, a class index when `classes` > 0 (the model's output
// [batch, classes]), else a value.
Result<Dataset> load_onnx_prediction_input(const PredictSettings& predict, const DataSettings& data,
                                           const std::filesystem::path& base_dir,
                                           const OnnxModel& model, int64_t classes);
// Runs `model` on the samples in batches. An output [batch, C >= 2] gives classes (its rows as
// probabilities when they already sum to 1, else their softmax: `notes` says which), named by the
// metadata switchyard.class_names when it has C names; any other output gives values
// (regression), one per output element, named by switchyard.target_names. Rows are named by the
// data's id column when it has one, else by line. INVALID_ARGUMENT naming the file for
// an output with no elements per sample, and for an integer input given a value that is not a
// whole number below 2^24 in magnitude (naming the data's file, line and column).
Predictions predict_onnx(OnnxModel& model, const Dataset& data, int64_t batch_size);

// One row per sample: the id column (named as in the file) or "line" (the row's line in its file),
// then "label" (when the input had labels), "predicted" (the class name), "probability" (the
// predicted class's) and "p_<class>" for every class. For regression, after the id or line: per
// target, its true value "<name>" (when the input had it) and "predicted_<name>". Fields are
// quoted as CSV needs.
void write_predictions(std::ostream& out, const Predictions& predictions);
// The same into a file, atomically (a temporary file renamed into place, like checkpoints).
Status write_predictions_csv(const std::filesystem::path& path, const Predictions& predictions);

// A YAML file that predicts from a checkpoint may leave out what the checkpoint holds; what it
// says must agree: model.layers, data.target, data.id, data.drop, data.label_order,
// data.image_shape and data.scale. INVALID_ARGUMENT naming the YAML key (file:line:column), its
// value, the checkpoint's path and the checkpoint's value otherwise.
Status check_config_against_checkpoint(const Config& config, const Checkpoint& checkpoint);

}  // namespace switchyard

#pragma GCC visibility pop
