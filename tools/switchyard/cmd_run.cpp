// switchyard run CONFIG: train, evaluate or predict as the YAML file says, and write metrics.
//
// Exit codes: 0 done, 2 the arguments or the configuration are invalid, 1 the run failed (the
// message says why; RESOURCE_EXHAUSTED names the batch size).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_common.h"
#include "run_report.h"
#include "runtime/input_file.h"
#include "support/json_io.h"
#include "switchyard/communicator.h"
#include "switchyard/dispatch.h"
#include "switchyard/onnx.h"
#include "switchyard/predict.h"
#include "switchyard/profile.h"
#include "switchyard/train.h"

namespace switchyard::cli {
namespace {

constexpr const char* kUsage =
    "usage: switchyard run CONFIG [--set key=value]... [--metrics FILE] [--profile FILE]\n\n"
    "Runs the task the YAML file names (task: train | evaluate | predict) on the device it\n"
    "selects; a file with only a predict section predicts. Predictions go to predict.output,\n"
    "else to standard output as CSV. --set overrides one key (dotted path, YAML value), e.g.\n"
    "--set train.epochs=5.\n"
    "Relative paths given with --set are relative to the current directory; those inside the\n"
    "file are relative to the file's folder. --profile writes a Chrome trace of every op\n"
    "(open it in https://ui.perfetto.dev) and prints a per-op summary.";

// Keys whose values are paths: a relative path typed on the command line means the current
// directory, not the YAML file's folder, so it is made absolute before the file sees it.
const char* const kPathKeys[] = {"train.checkpoint",   "train.resume",  "train.best_checkpoint",
                                 "predict.checkpoint", "predict.model", "predict.output",
                                 "predict.input",      "data.dataset"};

std::string absolutize_override(const std::string& override_text) {
  const size_t equals = override_text.find('=');
  if (equals == std::string::npos) return override_text;
  const std::string key = override_text.substr(0, equals);
  const std::string value = override_text.substr(equals + 1);
  const bool is_path_key =
      std::find(std::begin(kPathKeys), std::end(kPathKeys), key) != std::end(kPathKeys);
  if (!is_path_key || value.empty() || value == "none" || value.front() == '"' ||
      value.front() == '\'') {
    return override_text;
  }
  const auto& names = builtin_dataset_names();
  if (std::find(names.begin(), names.end(), value) != names.end()) return override_text;
  const std::filesystem::path path(value);
  if (path.is_absolute()) return override_text;
  return key + "=" + (std::filesystem::current_path() / path).lexically_normal().string();
}

using detail::Json;

// The metrics file: one object, indented, members in the order they were added (NaN and
// infinite values are written as null).
Status write_metrics(const std::string& path, const Json& metrics) {
  std::ofstream out(path);
  out << detail::json_text(metrics, 2) << "\n";
  out.flush();
  if (!out) return unavailable("cannot write metrics file " + path);
  return ok_status();
}

struct RunContext {
  const Config& config;
  RunDevice run;
  std::string task;
  // Where the run's report goes: standard output, or standard error when the predictions
  // themselves go to standard output.
  std::ostream& log;
  Json metrics = Json::object();
  // Set once data and model are set up: an INVALID_ARGUMENT before that (a model that does not
  // fit the data, a malformed data file) is the configuration's fault, exit code 2.
  bool* set_up = nullptr;
};

// data.non_finite: drop_rows and data.missing: drop_rows are never silent.
void report_dropped_rows(const std::string& dataset, int64_t dropped_rows) {
  if (dropped_rows == 0) return;
  std::cerr << "switchyard: warning: data " << dataset << ": dropped " << dropped_rows
            << " row(s) with missing or non-finite values (data.missing, data.non_finite: "
               "drop_rows)"
            << std::endl;
}

void add_common_metrics(RunContext& c) {
  c.metrics.update(detail::device_metrics(*c.run.device, c.config.runtime().deterministic, c.task));
}

// Without train.checkpoint the model is kept in runs/<config name>/model.ckpt under the current
// folder (not the YAML's, which may be an installed example), and the run says so.
void choose_checkpoint(const Config& config, TrainSettings& train) {
  if (config.root()["train"]["checkpoint"].valid()) {
    if (train.checkpoint.empty()) {
      std::cout << "checkpoint: none (train.checkpoint: none): the trained model is not kept"
                << std::endl;
    }
    return;
  }
  const std::filesystem::path relative = default_checkpoint_path(config);
  train.checkpoint = (std::filesystem::current_path() / relative).lexically_normal();
  std::cout << "checkpoint: " << relative.string()
            << " (train.checkpoint is not set: the model is kept there, under the current folder; "
               "train.checkpoint: none keeps nothing)"
            << std::endl;
  // With early stopping the best epoch is kept beside the last one, as it would be beside a
  // train.checkpoint of the file's.
  if (train.early_stopping.enabled && !config.root()["train"]["best_checkpoint"].valid()) {
    train.best_checkpoint = train.checkpoint.parent_path() / "model.best.ckpt";
  }
}

// What the run's last line says after the train loss: ", train accuracy 0.99, test accuracy
// 0.98", or for regression ", test rmse 0.38, mae 0.29, r2 0.99" (the final weights' test split).
std::string final_scores_text(const TrainSummary& summary, const EpochMetrics& last) {
  std::ostringstream text;
  if (last.regression && !summary.final_evaluations.empty()) {
    const SplitEvaluation& test = summary.final_evaluations.front();
    text << ", test " << regression_text(test.values);
    if (test.has_kl) text << ", kl " << test.kl;
    return text.str();
  }
  const double test_accuracy = summary.final_evaluations.empty()
                                   ? last.test_accuracy
                                   : summary.final_evaluations.front().accuracy;
  text << ", train accuracy " << last.train_accuracy << ", test accuracy " << test_accuracy;
  return text.str();
}

// Every rank's weights checksum, in rank order (one entry for a single process): after a
// data-parallel run they must all be the same.
std::vector<std::string> checksums_of_all_ranks(const std::string& mine) {
  Communicator& communicator = *current_communicator();
  std::array<char, 16> text{};
  std::copy_n(mine.begin(), std::min(mine.size(), text.size()), text.begin());
  std::vector<char> all(text.size() * static_cast<size_t>(communicator.size()));
  throw_if_error(communicator.wait(
      value_or_throw(communicator.start_allgather(std::as_bytes(std::span(text)),
                                                  std::as_writable_bytes(std::span(all)))),
      "the exchange of the final weights' checksums"));
  std::vector<std::string> checksums;
  for (size_t r = 0; r < all.size(); r += text.size()) {
    checksums.emplace_back(all.data() + r, text.size());
  }
  return checksums;
}

// The run's first lines under mpirun: the ranks, what train.batch_size means and how gradients
// are averaged.
void print_distributed(const RunInfo& info) {
  if (info.ranks == 1) return;
  std::cout << "distributed: " << info.communicator << ", " << info.ranks << " ranks\n"
            << "  train.batch_size " << info.batch_size << " is per rank: each optimizer step "
            << "averages the gradients of " << info.batch_size * info.ranks << " samples ("
            << info.batch_size << " x " << info.ranks
            << " ranks); scale optimizer.lr with the global batch (docs/distributed.md)\n"
            << "  gradients: " << info.gradient_buckets
            << " averaged as backward finishes each; a rank waits at most " << info.timeout_s
            << " s for the others (distributed.timeout_s)" << std::endl;
}

void run_training(RunContext& c, TrainConfig train_config) {
  const DType precision = train_config.train.precision;
  const TrainSettings settings = train_config.train;
  const std::string dataset = train_config.data.dataset;
  choose_checkpoint(c.config, train_config.train);
  if (train_config.model.is_default) {
    std::cout << "model: the file has no model section; using the default model "
              << describe_default_model() << " (model.layers chooses another)" << std::endl;
  }
  Trainer trainer(std::move(train_config), c.run.device);
  *c.set_up = true;
  for (const std::string& note : trainer.data().notes) std::cout << "data: " << note << "\n";
  std::cout.flush();
  TrainCallbacks report_auto_batch;  // says which batch size auto chose, and why, before training
  report_auto_batch.on_run_start = [precision, dataset](const RunInfo& info) {
    print_distributed(info);
    report_dropped_rows(dataset, info.dropped_rows);
    if (precision != DType::kF32) {
      std::cout << "precision: " << dtype_name(precision) << " (mixed: products in "
                << dtype_name(precision) << ", f32 master weights, losses and optimizer state"
                << (precision == DType::kF16 ? ", dynamic loss scaling" : "") << ")" << std::endl;
    }
    if (info.batch_size_choice.empty()) return;
    std::cout << "batch_size auto: " << info.batch_size_choice << std::endl;
  };
  trainer.add_callbacks(std::move(report_auto_batch));
  const TrainSummary summary = trainer.run();
  const RunInfo& info = summary.info;
  const EpochMetrics last = summary.history.empty() ? EpochMetrics{} : summary.history.back();
  add_common_metrics(c);
  const detail::TrainingFigures figures =
      detail::add_training_metrics(c.metrics, summary, settings, *c.run.device, trainer.model());
  const double median = figures.median_epoch_seconds;
  const std::string& checksum = figures.weights_fnv1a64;
  const std::vector<std::string> rank_checksums = checksums_of_all_ranks(checksum);
  const bool ranks_agree = std::all_of(rank_checksums.begin(), rank_checksums.end(),
                                       [&](const std::string& other) { return other == checksum; });
  c.metrics["rank_weights_fnv1a64"] = rank_checksums;
  print_training_report(std::cout, summary, settings);
  std::cout << "\ntrained " << info.architecture << " (" << info.parameter_count
            << " parameters, batch " << info.batch_size
            << (info.ranks > 1 ? " per rank x " + std::to_string(info.ranks) + " ranks" : "")
            << ")\n"
            << "epochs " << last.epoch << ": train loss " << last.train_loss
            << final_scores_text(summary, last) << ", median epoch " << median * 1e3 << " ms\n"
            << "weights fnv1a64: " << checksum;
  if (info.ranks > 1) {
    std::cout << (ranks_agree ? " (the same on every rank)" : " (ranks DIFFER, see the metrics)");
  }
  std::cout << "\n";
  if (!ranks_agree) {
    std::cerr << "switchyard: warning: the ranks ended with different weights" << std::endl;
  }
  if (summary.capture.rfind("off", 0) != 0) std::cout << "capture: " << summary.capture << "\n";
  if (!summary.last_checkpoint.empty())
    std::cout << "checkpoint: " << summary.last_checkpoint << "\n";
  for (const std::string& warning : summary.warnings) std::cout << "warning: " << warning << "\n";
  if (!summary.exported_weights.empty()) {
    // train.export: a path ending in .onnx holds the whole model, any other the weights.
    const bool onnx = std::filesystem::path(summary.exported_weights).extension() == ".onnx";
    std::cout << (onnx ? "model: " : "weights: ") << summary.exported_weights
              << (onnx ? " (ONNX)\n" : " (safetensors)\n");
  }
  if (!summary.curves_svg.empty()) {
    std::cout << "curves: " << summary.curves_svg << " (loss and "
              << (last.regression ? "rmse" : "accuracy") << " per epoch)\n"
              << "history: " << summary.history_csv << " (one row per epoch)\n"
              << "report: switchyard report "
              << std::filesystem::path(summary.run_record).parent_path().string() << "\n";
  }
}

// A YAML file that repeats what the checkpoint holds must agree with it.
void check_against_checkpoint(const Config& config, const std::filesystem::path& weights) {
  if (weights.extension() == ".safetensors") return;
  const Checkpoint checkpoint = value_or_throw(read_checkpoint(weights));
  throw_if_error(check_config_against_checkpoint(config, checkpoint));
}

void report_predictions(RunContext& c, const std::string& input_name,
                        const Predictions& predictions) {
  c.log << c.task << " " << input_name << ": " << predictions.samples << " samples";
  if (predictions.labeled && predictions.regression) {
    c.log << ", " << regression_text(predictions.metrics) << ", loss " << predictions.loss;
  } else if (predictions.labeled) {
    c.log << ", accuracy " << predictions.accuracy << ", loss " << predictions.loss;
  } else {
    c.log << " without labels (no accuracy)";
  }
  c.log << ", " << predictions.samples_per_second << " samples/s" << std::endl;
}

// The figures of a labeled input: its loss, and its accuracy or RMSE, MAE and R^2.
void add_labeled_metrics(RunContext& c, const Predictions& predictions) {
  c.metrics["test_loss"] = predictions.loss;
  if (!predictions.regression) {
    c.metrics["test_accuracy"] = predictions.accuracy;
    return;
  }
  c.metrics["test_rmse"] = predictions.metrics.rmse;
  c.metrics["test_mae"] = predictions.metrics.mae;
  c.metrics["test_r2"] = predictions.metrics.r2;
  c.metrics["regression"] =
      Json{{"input", detail::regression_json(predictions.metrics, predictions.loss,
                                             predictions.target_names)}};
}

// The model's predictions of the predict section's rows: from a checkpoint (or weights), or from
// an ONNX model, whose rows are read as they come (docs/onnx.md).
struct InferenceResult {
  Predictions predictions;
  std::string input_name;
};

InferenceResult infer(RunContext& c, const TrainConfig& train_config,
                      const PredictSettings& settings) {
  InferenceResult result;
  Dataset input;
  std::unique_ptr<OnnxModel> onnx;
  std::unique_ptr<Predictor> predictor;
  if (settings.is_onnx()) {
    onnx = OnnxModel::load(settings.checkpoint, c.run.device);
    onnx->set_capture(settings.capture);
    c.log << "model: " << onnx->describe() << "\n";
    const std::vector<int64_t>& out = onnx->outputs().at(0).shape;
    const int64_t classes = out.size() == 2 && out[1] >= 2 ? out[1] : 0;
    input = value_or_throw(load_onnx_prediction_input(settings, train_config.data,
                                                      train_config.base_dir, *onnx, classes));
  } else {
    check_against_checkpoint(c.config, settings.checkpoint);
    predictor = std::make_unique<Predictor>(train_config, settings.checkpoint, c.run.device);
    input = value_or_throw(
        load_prediction_input(settings, train_config.data, train_config.base_dir, *predictor));
  }
  result.input_name = input.name;
  for (const std::string& note : input.notes) c.log << "data: " << note << "\n";
  report_dropped_rows(result.input_name, input.dropped_rows);
  if (c.task == "evaluate" && !input.labeled) {
    throw_error(invalid_argument("evaluate needs labels, and " + result.input_name +
                                 " has no target column; use task: predict"));
  }
  result.predictions = onnx ? predict_onnx(*onnx, input, settings.batch_size)
                            : predictor->predict(std::move(input), settings.batch_size);
  for (const std::string& note : result.predictions.notes) c.log << "model: " << note << "\n";
  if (onnx) c.log << "model: ran " << onnx->execution_summary() << "\n";
  return result;
}

void run_inference(RunContext& c, const TrainConfig& train_config) {
  const PredictSettings settings = value_or_throw(PredictSettings::from_config(c.config));
  if (c.task == "predict" && !settings.output.empty()) {
    throw_if_error(detail::check_output_file(settings.output, "predictions file")
                       .with_context("predict.output"));
  }
  (void)c.run.device->reset_peak_memory();
  const uint64_t fallbacks_before = c.run.device->fallback_calls();
  InferenceResult inference = infer(c, train_config, settings);
  const std::string& input_name = inference.input_name;
  const Predictions& predictions = inference.predictions;
  report_predictions(c, input_name, predictions);
  // Per-class figures need labels; unlabeled rows have none to compare with.
  std::optional<ClassificationReport> report;
  if (predictions.labeled && !predictions.regression) {
    ConfusionMatrix matrix(static_cast<int64_t>(predictions.class_names.size()));
    matrix.add_all(predictions.labels, predictions.predicted);
    report = classification_report(matrix);
    c.log << "\n";
    print_classification(c.log, input_name + ":", *report, predictions.class_names);
  }
  if (c.task == "predict" && !settings.output.empty() && current_communicator()->rank() == 0) {
    throw_if_error(write_predictions_csv(settings.output, predictions));
    c.log << "predictions: " << settings.output.string() << "\n";
  } else if (c.task == "predict") {
    write_predictions(std::cout, predictions);
    std::cout.flush();
  }
  uint64_t peak = 0;
  if (auto stats = c.run.device->memory_stats(); stats.ok()) peak = stats->peak_allocated_bytes;
  add_common_metrics(c);
  c.metrics["input"] = input_name;
  c.metrics["checkpoint"] = settings.checkpoint.string();
  c.metrics["epochs"] = 0;
  c.metrics["samples"] = predictions.samples;
  c.metrics["labeled"] = predictions.labeled;
  if (predictions.labeled) add_labeled_metrics(c, predictions);
  c.metrics["seconds"] = predictions.seconds;
  c.metrics["samples_per_second"] = predictions.samples_per_second;
  c.metrics["peak_device_memory_bytes"] = peak;
  c.metrics["fallback_ops"] = c.run.device->fallback_calls() - fallbacks_before;
  c.metrics["fallbacks"] = detail::fallbacks_json(*c.run.device);
  if (report) {
    c.metrics["classification"] = Json{
        {"input", detail::classification_json(*report, predictions.loss, predictions.class_names)}};
  }
}

void print_device(const RunDevice& run, std::ostream& log) {
  const DeviceInfo& info = run.device->info();
  log << "backend: " << info.backend << "  device: " << info.id() << " (" << info.name << ", "
      << device_type_name(info.type) << ")\n";
  const std::string settings = run.device->settings();
  if (!settings.empty()) log << "settings: " << settings << "\n";
  if (!run.note.empty()) log << run.note << "\n";
  log.flush();
  // Under mpirun every rank selects alike: the fallback line comes once, from rank 0; a warning
  // (a named device that is not usable) may be one rank's own, so each rank gives its own.
  const bool first_rank = current_communicator()->rank() == 0;
  print_selection_messages(first_rank ? run.fallback_note : std::string(), run.warnings);
}

// Rank 0 writes FILE; rank r > 0 writes FILE.rank<r> (each rank's own profile).
std::string rank_file(const std::string& path, int rank) {
  if (path.empty() || rank == 0) return path;
  return path + ".rank" + std::to_string(rank);
}

// Reads the task's settings; any error here is the configuration's fault (exit code 2).
Result<TrainConfig> read_settings(const Config& config, const std::string& task) {
  SY_ASSIGN_OR_RETURN(TrainConfig train_config, TrainConfig::from_config(config));
  if (task != "train") SY_RETURN_IF_ERROR(PredictSettings::from_config(config).status());
  return train_config;
}

// ---- --profile FILE (switchyard/profile.h) ------------------------------------------------------
// Records every op of the task under one span named after it; finish() prints the per-op summary
// and writes the trace.
class TaskProfile {
 public:
  TaskProfile(const std::string& path, const std::string& task, std::ostream& log)
      : path_(path), log_(log) {
    if (path_.empty()) return;
    profiler_ = std::make_unique<Profiler>();
    scope_ = std::make_unique<ProfileScope>(*profiler_);
    span_ = profiler_->span(task);
  }
  void finish() {
    if (profiler_ == nullptr) return;
    span_.end();
    scope_.reset();
    log_ << "profile:\n" << profiler_->summary_table();
    throw_if_error(profiler_->write_chrome_trace(path_));
    log_ << "trace: " << path_ << "\n";
  }

 private:
  std::string path_;
  std::ostream& log_;
  std::unique_ptr<Profiler> profiler_;
  std::unique_ptr<ProfileScope> scope_;
  ProfileSpan span_;
};

// The keys a run used without the file giving them: one line, so that no default is silent. The
// values are the settings the run resolved (TrainConfig), not a second copy of the defaults.
void print_defaults(const Config& config, const std::string& task, const TrainConfig& settings,
                    std::ostream& log) {
  const ConfigNode root = config.root();
  std::vector<std::pair<std::string, std::string>> keys;
  if (!root["task"].valid()) {
    keys.emplace_back(
        "task", task == "predict" ? "predict (the file has only a predict section)" : "train");
  }
  if (task == "train") {
    const DataSettings& data = settings.data;
    const TrainSettings& train = settings.train;
    std::ostringstream lr;
    lr << settings.optimizer.lr;
    std::string epochs = std::to_string(train.epochs);
    if (train.epochs_auto) {
      epochs = "auto (up to " + std::to_string(train.epochs) + ", early stopping on " +
               train.monitor.metric + " with patience " +
               std::to_string(train.early_stopping.patience) + ")";
    }
    std::ostringstream test_fraction;
    test_fraction << data.test_fraction;
    keys.insert(
        keys.end(),
        {{"seed", std::to_string(settings.seed)},
         {"data.test_fraction", test_fraction.str()},
         {"data.split_seed", std::to_string(data.split_seed)},
         {"data.scale",
          std::string(scale_mode_name(data.scale)) + (data.is_table() ? " (a table)" : "")},
         {"loss", std::string(loss_kind_name(settings.loss.kind)) +
                      (data.detect_regression ? " (mse for a target of numbers)" : "")},
         {"model.init", settings.model.init == InitScheme::kXavierUniform ? "xavier" : "kaiming"},
         {"optimizer.type", optimizer_kind_name(settings.optimizer.kind)},
         {"optimizer.lr", lr.str()},
         {"train.epochs", epochs},
         {"train.batch_size", std::to_string(train.batch_size)}});
    if (data.validation_is_default) {
      std::ostringstream fraction;
      fraction << data.validation_fraction << " (held out for train.epochs: auto)";
      keys.emplace_back("data.validation_fraction", fraction.str());
    }
  } else {
    keys.emplace_back("predict.batch_size", "256");
  }
  std::string text;
  for (const auto& [key, value] : keys) {
    const size_t dot = key.find('.');
    const ConfigNode node =
        dot == std::string::npos ? root[key] : root[key.substr(0, dot)][key.substr(dot + 1)];
    if (node.valid()) continue;
    text += (text.empty() ? "" : ", ") + key + ": " + value;
  }
  if (!text.empty()) log << "defaults (not in the file): " << text << std::endl;
}

// A rank that fails alone must not leave the others waiting in a collective until their deadline
// (nor wait itself in MPI_Finalize for ranks that wait for it): under mpirun it ends the job.
int stop_job_on_failure(int exit_code) {
  const std::shared_ptr<Communicator> communicator = current_communicator();
  if (communicator->size() > 1) communicator->abort_job(exit_code);
  return exit_code;
}

int run_task(const Config& config, const std::string& task, TrainConfig train_config,
             const std::string& metrics_path, const std::string& profile_path) {
  bool set_up = false;
  // Predictions without predict.output go to standard output; the report then goes to stderr.
  auto output = config.root()["predict"].string_or("output", "");
  std::ostream& log = task == "predict" && output.ok() && output->empty() ? std::cerr : std::cout;
  try {
    // Under mpirun, join the job first: every rank must, or the others wait for it.
    const std::shared_ptr<Communicator> communicator =
        value_or_throw(world_communicator(plugin_search_path(config.runtime().plugin_paths)));
    if (communicator->rank() != 0) {
      std::cout.setstate(std::ios::failbit);  // the report comes from rank 0; errors from all
    }
    RunContext context{config, value_or_throw(open_run_device(config.runtime())), task, log, {},
                       &set_up};
    print_device(context.run, log);
    print_defaults(config, task, train_config, log);
    TaskProfile profile(rank_file(profile_path, communicator->rank()), task, log);
    if (task == "train") {
      run_training(context, std::move(train_config));
    } else {
      run_inference(context, train_config);
    }
    profile.finish();
    if (!metrics_path.empty() && communicator->rank() == 0) {
      throw_if_error(write_metrics(metrics_path, context.metrics));
      log << "metrics: " << metrics_path << "\n";
    }
  } catch (const Error& error) {
    print_error(error.status());
    const bool config_fault = !set_up && error.status().code() == StatusCode::kInvalidArgument;
    return stop_job_on_failure(config_fault ? kExitUsage : kExitFailure);
  } catch (const std::exception& error) {
    write_stderr_line(std::string("switchyard: error: ") + error.what());
    return stop_job_on_failure(kExitFailure);
  }
  return kExitOk;
}

// Takes every "--set K=V" / "--set=K=V" out of `args`. (Done by hand: Boost's typed
// vector<string> value trips GCC 12's -Wnull-dereference at -O3 inside Boost's notify().)
Result<std::vector<std::string>> take_overrides(Args& args) {
  std::vector<std::string> overrides;
  Args rest;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--set") {
      if (i + 1 == args.size()) return invalid_argument("--set needs a value: --set key=value");
      overrides.push_back(absolutize_override(args[++i]));
    } else if (args[i].rfind("--set=", 0) == 0) {
      overrides.push_back(absolutize_override(args[i].substr(6)));
    } else {
      rest.push_back(args[i]);
    }
  }
  args = std::move(rest);
  return overrides;
}

}  // namespace

int run_command(const Args& all_args) {
  Args args = all_args;
  auto overrides = take_overrides(args);
  if (!overrides.ok()) {
    print_error(overrides.status());
    return kExitUsage;
  }
  po::options_description options("options");
  options.add_options()("config", po::value<std::string>(), "YAML file")(
      "set", po::value<std::string>()->value_name("KEY=VALUE"),
      "override one key of the file (repeatable)")("metrics", po::value<std::string>(),
                                                   "write the run's metrics as JSON to FILE")(
      "profile", po::value<std::string>(), "write a Chrome trace of every op to FILE");
  po::positional_options_description positional;
  positional.add("config", 1);
  po::variables_map values;
  if (auto exit = parse_args(args, kUsage, options, values, &positional)) return *exit;
  if (values.count("config") == 0) {
    std::cerr << "switchyard: run needs a CONFIG file\n\n" << kUsage << "\n";
    return kExitUsage;
  }

  std::optional<Config> config = load_config_or_report(values, *overrides);
  if (!config) return kExitUsage;
  const std::string metrics_path =
      values.count("metrics") != 0 ? values["metrics"].as<std::string>() : "";
  const std::string profile_path =
      values.count("profile") != 0 ? values["profile"].as<std::string>() : "";
  return run_loaded_config(*config, metrics_path, profile_path);
}

int run_loaded_config(const Config& config, const std::string& metrics_path,
                      const std::string& profile_path) {
  auto task = configured_task(config);
  if (!task.ok()) {
    print_error(task.status());
    return kExitUsage;
  }
  auto train_config = read_settings(config, *task);
  if (!train_config.ok()) {
    print_error(train_config.status());
    return kExitUsage;
  }
  return run_task(config, *task, std::move(train_config).value(), metrics_path, profile_path);
}

}  // namespace switchyard::cli
