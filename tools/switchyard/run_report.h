// What `switchyard run` reports about classification quality and the monitored metric: the JSON
// members of the --metrics file and the table printed at the end of a run.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "json/json_io.h"
#include "switchyard/metrics.h"
#include "switchyard/train.h"

namespace switchyard::cli {

// {"samples", "loss", "accuracy", "classes": [{"index", "name", "precision", "recall", "f1",
// "support"}...], "macro_avg", "weighted_avg", "confusion_matrix": [[...]] (rows: true class,
// columns: predicted class)}. `class_names` may be empty (indices are used).
detail::Json classification_json(const ClassificationReport& report, double loss,
                                 const std::vector<std::string>& class_names);

// {"samples", "loss", "rmse", "mae", "r2", "targets": [names]}: regression's counterpart, in the
// targets' units.
detail::Json regression_json(const RegressionMetrics& metrics, double loss,
                             const std::vector<std::string>& target_names);

// [{"name", "description", "test": {"samples", "rmse", "mae", "r2"}}...] (PreparedData::baselines).
detail::Json baselines_json(const std::vector<BaselineScore>& baselines);

// "rmse 0.41, mae 0.32, r2 0.870", for report lines.
std::string regression_text(const RegressionMetrics& metrics);

// {"test": ..., "validation": ...} from the final evaluations of a training run (classification
// or regression JSON, whichever the model does).
detail::Json final_evaluations_json(const TrainSummary& summary);

// The monitored metric: best epoch and value, early stopping, best checkpoint, final weights.
detail::Json monitor_json(const TrainSummary& summary, const TrainSettings& settings);

// The lines printed at the end of a training run: the early-stopping line, which weights the run
// ends with, and one classification table per evaluated split (test, then validation).
void print_training_report(std::ostream& out, const TrainSummary& summary,
                           const TrainSettings& settings);

// One split's table under a heading ("test: 360 samples, loss 0.05, accuracy 0.98").
void print_classification(std::ostream& out, const std::string& heading,
                          const ClassificationReport& report,
                          const std::vector<std::string>& class_names);

}  // namespace switchyard::cli
