// What `switchyard run` prints about classification quality and the monitored metric at the end
// of a run (the --metrics file's members are train/run_metrics.h's).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "switchyard/metrics.h"
#include "switchyard/train.h"
#include "train/run_metrics.h"

namespace switchyard::cli {

// "rmse 0.41, mae 0.32, r2 0.870", for report lines.
std::string regression_text(const RegressionMetrics& metrics);

// The lines printed at the end of a training run: the early-stopping line, which weights the run
// ends with, and one classification table per evaluated split (test, then validation).
void print_training_report(std::ostream& out, const TrainSummary& summary,
                           const TrainSettings& settings);

// One split's table under a heading ("test: 360 samples, loss 0.05, accuracy 0.98").
void print_classification(std::ostream& out, const std::string& heading,
                          const ClassificationReport& report,
                          const std::vector<std::string>& class_names);

}  // namespace switchyard::cli
