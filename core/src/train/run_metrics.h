// The JSON documents of a run: what `switchyard run --metrics` writes, and what the embedding APIs
// (switchyard.h, the Python package) return. Private to the core and the CLI.
#pragma once

#include <string>
#include <vector>

#include "support/json_io.h"
#include "switchyard/metrics.h"
#include "switchyard/nn.h"
#include "switchyard/train.h"

namespace switchyard::detail {

// {"samples", "loss", "accuracy", "classes": [{"index", "name", "precision", "recall", "f1",
// "support"}...], "macro_avg", "weighted_avg", "confusion_matrix": [[...]] (rows: true class,
// columns: predicted class)}. `class_names` may be empty (indices are used).
Json classification_json(const ClassificationReport& report, double loss,
                         const std::vector<std::string>& class_names);

// {"samples", "loss", "rmse", "mae", "r2", "targets": [names]}: regression's counterpart, in the
// targets' units.
Json regression_json(const RegressionMetrics& metrics, double loss,
                     const std::vector<std::string>& target_names);

// [{"name", "description", "test": {"samples", "rmse", "mae", "r2"}}...] (PreparedData::baselines).
Json baselines_json(const std::vector<BaselineScore>& baselines);

// {"test": ..., "validation": ...} from the final evaluations of a training run (classification
// or regression JSON, whichever the model does).
Json final_evaluations_json(const TrainSummary& summary);

// The monitored metric: best epoch and value, early stopping, best checkpoint, final weights.
Json monitor_json(const TrainSummary& summary, const TrainSettings& settings);

// One object per epoch: losses, accuracies or RMSE/MAE/R^2, learning rate, time, memory.
Json history_json(const std::vector<EpochMetrics>& history);

// The ops that ran on the fallback device: op, dtype, backend, calls, copies.
Json fallbacks_json(const Device& device);

double median_of(std::vector<double> values);

// FNV-1a (64-bit) over the bytes of every parameter, read back as f32, in parameter order, as 16
// hex digits: one number that tells whether two runs ended with bit-identical weights.
std::string weights_fnv1a64(const Module& model);

// The members every run's metrics start with: backend, device, device_name, device_settings,
// deterministic, task.
Json device_metrics(const Device& device, bool deterministic, const std::string& task);

// The final weights' figures: test (and validation) loss and accuracy or RMSE/MAE/R^2, sample
// counts, the classification or regression report, baselines and the monitor.
void add_final_metrics(Json& metrics, const TrainSummary& summary, const TrainSettings& settings);

// What a training run adds to device_metrics: epochs, losses, accuracies, timing, sizes, the
// weights' checksum, memory, precision, fallbacks, history and add_final_metrics.
struct TrainingFigures {
  double median_epoch_seconds = 0;
  std::string weights_fnv1a64;
};
TrainingFigures add_training_metrics(Json& metrics, const TrainSummary& summary,
                                     const TrainSettings& settings, const Device& device,
                                     const Module& model);

}  // namespace switchyard::detail
