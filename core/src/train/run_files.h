// The files a training run leaves beside its checkpoint for people to look at: history.csv (one
// row per epoch), curves.svg (loss and metric per epoch, self-contained) and run.json (what
// `switchyard report` summarises). Private to the core and the CLI.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "support/json_io.h"
#include "switchyard/status.h"
#include "switchyard/train.h"

namespace switchyard::detail {

inline constexpr const char* kHistoryCsvName = "history.csv";
inline constexpr const char* kCurvesSvgName = "curves.svg";
inline constexpr const char* kRunRecordName = "run.json";
inline constexpr const char* kRunRecordFormat = "switchyard.run.v1";

// The columns of history.csv for this history: epoch, train_loss, train_accuracy (classes only),
// val_* when there is a validation split, test_*, learning_rate, epoch_seconds. The metric columns
// are accuracy (and val_f1_macro) for classes, rmse, mae and r2 for regression.
std::vector<std::string> history_columns(const std::vector<EpochMetrics>& history);

// history.csv's text: the header of history_columns, then one row per epoch (numbers with 9
// significant digits, "nan" for a value that is not finite).
std::string history_csv_text(const std::vector<EpochMetrics>& history);

// curves.svg's text: two panels (the loss, then accuracy or RMSE per epoch), each with axes, ticks,
// axis labels and a legend, and one <polyline class="series"> per series: train, and validation
// when the run has a validation split, else test. No script, no external reference.
std::string curves_svg_text(const std::vector<EpochMetrics>& history, const std::string& title);

// Writes history.csv and curves.svg into `folder`, each atomically. Errors name the file.
Status write_history_files(const std::filesystem::path& folder,
                           const std::vector<EpochMetrics>& history, const std::string& title);

// Why a run ended: "early_stopping", "callback" or "epochs" (every epoch of train.epochs ran), and
// a sentence saying so.
struct StopReason {
  std::string kind;
  std::string message;
};
StopReason stop_reason(const TrainSummary& summary, const TrainSettings& settings);

// run.json: the record `switchyard report` reads. `config_file` names the configuration (a path,
// or "<yaml text>").
Json run_record_json(const TrainSummary& summary, const TrainSettings& settings,
                     const std::string& config_file);

}  // namespace switchyard::detail
