#include "run_report.h"

#include <sstream>

namespace switchyard::cli {
namespace {

using detail::Json;

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

std::string regression_text(const RegressionMetrics& metrics) {
  std::ostringstream text;
  text << "rmse " << metrics.rmse << ", mae " << metrics.mae << ", r2 " << metrics.r2;
  return text.str();
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

void print_classification(std::ostream& out, const std::string& heading,
                          const ClassificationReport& report,
                          const std::vector<std::string>& class_names) {
  out << heading << "\n" << format_classification_report(report, class_names);
}

void print_training_report(std::ostream& out, const TrainSummary& summary,
                           const TrainSettings& settings) {
  const MonitorOutcome& m = summary.monitor;
  if (m.stopped_early) out << m.stop_message << "\n";
  if (!m.best_checkpoint.empty()) {
    out << "best checkpoint: " << m.best_checkpoint << " (epoch " << m.best_checkpoint_epoch << ", "
        << m.metric << " " << m.best_value << ")\n";
  }
  if (settings.early_stopping.restore_best_weights) {
    out << "final weights: epoch " << m.final_weights_epoch
        << (m.restored_best_weights                 ? " (the best, restored)"
            : m.final_weights_epoch == m.best_epoch ? " (the best)"
                                                    : " (the last)");
    if (!m.restore_note.empty()) out << "; not restored: " << m.restore_note;
    out << "\n";
  }
  for (const SplitEvaluation& e : summary.final_evaluations) {
    out << "\n";
    if (e.regression) {
      out << e.split << ": " << e.values.samples << " samples, loss " << e.loss << ", "
          << regression_text(e.values) << " (in the targets' units)\n";
      continue;
    }
    print_classification(out,
                         e.split + ": " + std::to_string(e.report.samples) + " samples, loss " +
                             std::to_string(e.loss) + ", accuracy " + std::to_string(e.accuracy),
                         e.report, summary.class_names);
  }
  for (const BaselineScore& b : summary.baselines) {
    out << "baseline " << b.name << " (" << b.description << "): test " << b.test.samples
        << " samples, " << regression_text(b.test) << "\n";
  }
}

}  // namespace switchyard::cli
