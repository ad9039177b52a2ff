// The JSON documents of a run: what `switchyard run --metrics` writes and the embedding APIs
// (switchyard.h, the Python package) return.
#include "train/run_metrics.h"

#include <algorithm>
#include <cstdio>

namespace switchyard::detail {
namespace {

Json scores_json(const ClassScores& s) {
  return Json{
      {"precision", s.precision}, {"recall", s.recall}, {"f1", s.f1}, {"support", s.support}};
}

const char* mode_name(MonitorMode mode) {
  return mode == MonitorMode::kMax ? "max" : "min";
}

}  // namespace

Json classification_json(const ClassificationReport& report, double loss,
                         const std::vector<std::string>& class_names) {
  const int64_t n = report.matrix.class_count();
  const bool named = static_cast<int64_t>(class_names.size()) == n;
  Json classes = Json::array();
  for (int64_t c = 0; c < n; ++c) {
    Json entry{{"index", c}, {"name", named ? class_names[c] : std::to_string(c)}};
    entry.update(scores_json(report.per_class[c]));
    classes.push_back(std::move(entry));
  }
  Json matrix = Json::array();
  for (int64_t t = 0; t < n; ++t) {
    Json row = Json::array();
    for (int64_t p = 0; p < n; ++p) row.push_back(report.matrix.at(t, p));
    matrix.push_back(std::move(row));
  }
  return Json{{"samples", report.samples},
              {"loss", loss},
              {"accuracy", report.accuracy},
              {"classes", std::move(classes)},
              {"macro_avg", scores_json(report.macro)},
              {"weighted_avg", scores_json(report.weighted)},
              {"confusion_matrix", std::move(matrix)}};
}

Json regression_json(const RegressionMetrics& metrics, double loss,
                     const std::vector<std::string>& target_names) {
  return Json{{"samples", metrics.samples}, {"loss", loss},     {"rmse", metrics.rmse},
              {"mae", metrics.mae},         {"r2", metrics.r2}, {"targets", target_names}};
}

Json baselines_json(const std::vector<BaselineScore>& baselines) {
  Json list = Json::array();
  for (const BaselineScore& b : baselines) {
    list.push_back(Json{{"name", b.name},
                        {"description", b.description},
                        {"test", Json{{"samples", b.test.samples},
                                      {"rmse", b.test.rmse},
                                      {"mae", b.test.mae},
                                      {"r2", b.test.r2}}}});
  }
  return list;
}

Json final_evaluations_json(const TrainSummary& summary) {
  Json splits = Json::object();
  for (const SplitEvaluation& e : summary.final_evaluations) {
    splits[e.split] = e.regression ? regression_json(e.values, e.loss, summary.target_names)
                                   : classification_json(e.report, e.loss, summary.class_names);
  }
  return splits;
}

Json monitor_json(const TrainSummary& summary, const TrainSettings& settings) {
  const MonitorOutcome& m = summary.monitor;
  Json out{{"metric", m.metric},
           {"mode", mode_name(settings.monitor.mode)},
           {"min_delta", settings.monitor.min_delta},
           {"early_stopping", settings.early_stopping.enabled},
           {"patience", settings.early_stopping.patience},
           {"best_epoch", m.best_epoch},
           {"best_value", m.best_value},
           {"stopped_early", m.stopped_early},
           {"stopped_epoch", m.stopped_epoch},
           {"message", m.stop_message},
           {"restore_best_weights", settings.early_stopping.restore_best_weights},
           {"restored_best_weights", m.restored_best_weights},
           {"final_weights_epoch", m.final_weights_epoch},
           {"best_checkpoint", m.best_checkpoint},
           {"best_checkpoint_epoch", m.best_checkpoint_epoch}};
  if (!m.restore_note.empty()) out["restore_note"] = m.restore_note;
  return out;
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

Json history_json(const std::vector<EpochMetrics>& history) {
  Json epochs = Json::array();
  for (const EpochMetrics& m : history) {
    epochs.push_back(Json{{"epoch", m.epoch},
                          {"train_loss", m.train_loss},
                          {"train_accuracy", m.train_accuracy},
                          {"test_loss", m.test_loss},
                          {"test_accuracy", m.test_accuracy},
                          {"learning_rate", m.learning_rate},
                          {"epoch_seconds", m.epoch_seconds},
                          {"samples_per_second", m.samples_per_second},
                          {"peak_device_memory_bytes", m.memory.peak_allocated_bytes},
                          {"skipped_steps", m.skipped_steps},
                          {"loss_scale", m.loss_scale}});
    if (m.has_kl) {
      epochs.back()["train_kl"] = m.train_kl;
      epochs.back()["test_kl"] = m.test_kl;
      if (m.has_validation) epochs.back()["val_kl"] = m.validation_kl;
    }
    if (m.regression) {
      epochs.back()["test_rmse"] = m.test_values.rmse;
      epochs.back()["test_mae"] = m.test_values.mae;
      epochs.back()["test_r2"] = m.test_values.r2;
    }
    if (m.has_validation && m.regression) {
      epochs.back()["val_loss"] = m.validation_loss;
      epochs.back()["val_rmse"] = m.validation_values.rmse;
      epochs.back()["val_mae"] = m.validation_values.mae;
      epochs.back()["val_r2"] = m.validation_values.r2;
    } else if (m.has_validation) {
      epochs.back()["val_loss"] = m.validation_loss;
      epochs.back()["val_accuracy"] = m.validation_accuracy;
      epochs.back()["val_f1_macro"] = m.validation_f1_macro;
    }
  }
  return epochs;
}

Json fallbacks_json(const Device& device) {
  Json fallbacks = Json::array();
  for (const FallbackCount& f : device.fallback_counts()) {
    fallbacks.push_back(Json{{"op", f.op},
                             {"dtype", f.dtype},
                             {"backend", f.backend},
                             {"calls", f.calls},
                             {"copies", f.copies}});
  }
  return fallbacks;
}

// FNV-1a (64-bit) over the bytes of every parameter, read back as f32, in parameter order: one
// number that tells whether two runs ended with bit-identical weights (`deterministic: true`).
std::string weights_fnv1a64(const Module& model) {
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a's offset basis
  for (const Tensor& parameter : model.parameters()) {
    const std::vector<float> values = parameter.to_host_float();
    hash = fnv1a64(values.data(), values.size() * sizeof(float), hash);
  }
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

Json device_metrics(const Device& device, bool deterministic, const std::string& task) {
  return Json{{"backend", device.backend()},       {"device", device.id()},
              {"device_name", device.info().name}, {"device_settings", device.settings()},
              {"deterministic", deterministic},    {"task", task}};
}

// The final weights' figures: test loss and accuracy, validation when present, per-class metrics
// and what the monitored metric did.
void add_final_metrics(Json& metrics, const TrainSummary& summary, const TrainSettings& settings) {
  for (const SplitEvaluation& e : summary.final_evaluations) {
    const std::string prefix = e.split == "validation" ? "val" : e.split;
    metrics[prefix + "_loss"] = e.loss;
    if (e.has_kl) metrics[prefix + "_kl"] = e.kl;
    if (e.regression) {
      metrics[prefix + "_rmse"] = e.values.rmse;
      metrics[prefix + "_mae"] = e.values.mae;
      metrics[prefix + "_r2"] = e.values.r2;
    } else {
      metrics[prefix + "_accuracy"] = e.accuracy;
    }
  }
  metrics["train_samples"] = summary.info.train_samples;
  metrics["validation_samples"] = summary.info.validation_samples;
  metrics["test_samples"] = summary.info.test_samples;
  const bool regression = !summary.target_names.empty();
  metrics[regression ? "regression" : "classification"] = final_evaluations_json(summary);
  if (regression) metrics["baselines"] = baselines_json(summary.baselines);
  metrics["monitor"] = monitor_json(summary, settings);
}

TrainingFigures add_training_metrics(Json& metrics, const TrainSummary& summary,
                                     const TrainSettings& settings, const Device& device,
                                     const Module& model) {
  const RunInfo& info = summary.info;
  const DType precision = settings.precision;
  std::vector<double> seconds;
  for (const auto& e : summary.history) {
    if (e.epoch >= info.first_epoch) seconds.push_back(e.epoch_seconds);
  }
  const double median = median_of(seconds);
  const EpochMetrics last = summary.history.empty() ? EpochMetrics{} : summary.history.back();
  const std::string checksum = weights_fnv1a64(model);
  metrics["epochs"] = last.epoch;
  metrics["train_loss"] = last.train_loss;
  metrics["test_loss"] = last.test_loss;
  if (!last.regression) {
    metrics["train_accuracy"] = last.train_accuracy;
    metrics["test_accuracy"] = last.test_accuracy;
  }
  metrics["epoch_seconds_median"] = median;
  metrics["samples_per_second"] = median > 0 ? static_cast<double>(info.train_samples) / median : 0;
  metrics["batch_size"] = info.batch_size;
  metrics["parameters"] = info.parameter_count;
  metrics["architecture"] = info.architecture;
  metrics["weights_fnv1a64"] = checksum;
  metrics["ranks"] = info.ranks;
  metrics["global_batch_size"] = info.batch_size * info.ranks;
  metrics["resumed_from"] = info.resumed_from;
  metrics["dropped_rows"] = info.dropped_rows;
  metrics["peak_device_memory_bytes"] = summary.peak_device_memory_bytes;
  metrics["fallback_ops"] = summary.fallback_ops;
  metrics["capture"] = summary.capture;
  metrics["precision"] = dtype_name(precision);
  metrics["skipped_steps"] = summary.skipped_steps;
  metrics["loss_scale"] = last.loss_scale;
  metrics["fallbacks"] = fallbacks_json(device);
  metrics["history"] = history_json(summary.history);
  metrics["stopped_by_callback"] = summary.stopped_by_callback;
  // Beside the checkpoint: the history as CSV, its curves as SVG, and the run's record.
  metrics["history_csv"] = summary.history_csv;
  metrics["curves_svg"] = summary.curves_svg;
  metrics["run_record"] = summary.run_record;
  metrics["warnings"] = summary.warnings;
  add_final_metrics(metrics, summary, settings);
  return TrainingFigures{median, checksum};
}

}  // namespace switchyard::detail
