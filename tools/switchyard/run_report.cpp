#include "run_report.h"

#include <sstream>

namespace switchyard::cli {
std::string regression_text(const RegressionMetrics& metrics) {
  std::ostringstream text;
  text << "rmse " << metrics.rmse << ", mae " << metrics.mae << ", r2 " << metrics.r2;
  return text.str();
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
