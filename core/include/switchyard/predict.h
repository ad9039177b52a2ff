// Inference: a trained checkpoint applied to a data set, in batches, without autograd.
//
// The model's layers come from the YAML `model:` section, its sizes from the data layout stored
// in the checkpoint, and the result must match the checkpoint's architecture fingerprint. Input
// data is scaled with the scaler fitted during training (also stored in the checkpoint), so new
// data is treated exactly as the training data was.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "switchyard/config.h"
#include "switchyard/data.h"
#include "switchyard/train.h"

namespace switchyard {

// The `predict:` section.
struct PredictSettings {
  std::filesystem::path checkpoint;  // required
  std::string input;                 // dataset name or CSV path; "" = the data section's test split
  std::filesystem::path output;      // predictions CSV (task: predict); "" = none
  int64_t batch_size = 256;          // auto also means 256

  static Result<PredictSettings> from_config(const Config& config);
};

struct Predictions {
  std::vector<std::string> class_names;
  std::vector<int64_t> predicted;    // class index per sample
  std::vector<float> probabilities;  // softmax, samples x classes, row-major
  std::vector<int32_t> labels;       // the input's labels
  double loss = 0;                   // mean loss against the labels
  double accuracy = 0;
  int64_t samples = 0;
  double seconds = 0;  // batched inference, uploads and read-backs included
  double samples_per_second = 0;
};

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

  const std::vector<std::string>& class_names() const;
  const BuiltModel& built_model() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The samples a predict/evaluate run reads: `input`, or the test split of the data section.
Result<Dataset> load_prediction_input(const PredictSettings& predict, const DataSettings& data,
                                      const std::filesystem::path& base_dir);

// Writes "index,predicted,<prob_class0>,...": one row per sample, the header names the classes.
// Atomic like checkpoints (a temporary file renamed into place).
Status write_predictions_csv(const std::filesystem::path& path, const Predictions& predictions);

}  // namespace switchyard
