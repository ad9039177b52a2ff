// The monitored metric over a run: the best epoch, the best checkpoint, early stopping, and the
// final evaluation with per-class metrics (train.early_stopping, train.best_checkpoint).
#include <cmath>
#include <sstream>

#include "model/train_state.h"
#include "switchyard/autocast.h"
#include "switchyard/checkpoint.h"
#include "train/trainer_impl.h"

namespace switchyard {
namespace {

// The best state when the best epoch came before a resume: the checkpoint just restored when it is
// the best one, else train.best_checkpoint when it holds that epoch.
void find_best_state(Trainer::State& s, const Checkpoint& restored) {
  const int64_t best = s.best.best_epoch();
  if (best == s.completed_epochs) {
    s.best_state = restored;
    return;
  }
  const std::filesystem::path& path = s.config.train.best_checkpoint;
  s.best_state_note = "the best epoch (" + std::to_string(best) +
                      ") came before the resume and train.best_checkpoint ";
  if (path.empty()) {
    s.best_state_note += "is not set";
    return;
  }
  Result<Checkpoint> stored = read_checkpoint(path);
  if (!stored.ok()) {
    s.best_state_note += path.string() + " cannot be read: " + stored.status().message();
    return;
  }
  Result<uint64_t> epoch = stored->get_u64("progress/epoch");
  if (!epoch.ok() || static_cast<int64_t>(*epoch) != best) {
    s.best_state_note += path.string() + " holds another epoch";
    return;
  }
  s.best_state = std::move(*stored);
  s.best_state_note.clear();
  s.best_checkpoint = path.string();
  s.best_checkpoint_epoch = best;
}

SplitEvaluation split_evaluation(const std::string& split, const detail::Evaluation& e) {
  SplitEvaluation evaluation{split, e.loss, e.accuracy, {}, e.regression, e.values, e.has_kl, e.kl};
  if (!e.regression) evaluation.report = classification_report(e.matrix);
  return evaluation;
}

// Puts back the best epoch's weights when restore_best_weights asks and they differ from the
// last epoch's; returns whether it did.
bool restore_best(Trainer::State& s, MonitorOutcome& outcome) {
  if (!s.config.train.early_stopping.restore_best_weights || !s.best.has_best() ||
      s.best.best_epoch() == s.completed_epochs) {
    return false;
  }
  if (!s.best_state) {
    outcome.restore_note = s.best_state_note;
    return false;
  }
  throw_if_error(
      detail::load_model(*s.best_state, s.built)
          .with_context("restoring the weights of epoch " + std::to_string(s.best.best_epoch())));
  return true;
}

}  // namespace

bool monitor_epoch(Trainer::State& s, const EpochMetrics& metrics,
                   const std::function<const Checkpoint&()>& snapshot) {
  if (!s.monitoring) return false;
  if (s.best.observe(metrics)) {
    const std::filesystem::path& path = s.config.train.best_checkpoint;
    const bool keep = s.config.train.early_stopping.restore_best_weights;
    if (!path.empty() && s.writes_files) {
      const Status written = write_checkpoint(path, snapshot());
      throw_if_error(written.with_context("train.best_checkpoint after epoch " +
                                          std::to_string(metrics.epoch)));
      s.best_checkpoint = path.string();
      s.best_checkpoint_epoch = metrics.epoch;
    }
    if (keep) s.best_state = snapshot();
    s.best_state_note.clear();
  }
  if (!detail::should_stop(s.config.train.early_stopping, s.best)) return false;
  s.stopped_early = true;
  s.stopped_epoch = metrics.epoch;
  return true;
}

void replay_monitor(Trainer::State& s, const Checkpoint& restored) {
  s.best = detail::BestTracker(s.config.train.monitor);
  s.best_state.reset();
  s.best_state_note.clear();
  s.stopped_early = false;
  if (!s.monitoring) return;
  for (const EpochMetrics& m : s.history) s.best.observe(m);
  // Judged after the whole history, so that a resumed run with other settings (a longer patience)
  // goes on, and one that had stopped stays stopped.
  if (!s.history.empty() && detail::should_stop(s.config.train.early_stopping, s.best)) {
    s.stopped_early = true;
    s.stopped_epoch = s.history.back().epoch;
  }
  if (s.config.train.early_stopping.restore_best_weights && s.best.has_best()) {
    find_best_state(s, restored);
  }
}

void finish_monitoring(Trainer::State& s, TrainSummary& summary) {
  MonitorOutcome& outcome = summary.monitor;
  outcome.final_weights_epoch = s.completed_epochs;
  if (s.monitoring) {
    outcome.metric = s.config.train.monitor.metric;
    outcome.best_epoch = s.best.best_epoch();
    outcome.best_value = s.best.best_value();
    outcome.stopped_early = s.stopped_early;
    outcome.stopped_epoch = s.stopped_epoch;
    if (s.stopped_early) outcome.stop_message = detail::stop_message(s.stopped_epoch, s.best);
    outcome.best_checkpoint = s.best_checkpoint;
    outcome.best_checkpoint_epoch = s.best_checkpoint_epoch;
  }
  outcome.restored_best_weights = restore_best(s, outcome);
  if (outcome.restored_best_weights) outcome.final_weights_epoch = s.best.best_epoch();
  // The last epoch's evaluations hold for the final weights unless they changed or no epoch ran.
  const bool fresh = outcome.restored_best_weights || s.last_test.samples == 0;
  const detail::Evaluation test = fresh ? detail::evaluate_split(s, s.test_batches) : s.last_test;
  summary.final_evaluations.push_back(split_evaluation("test", test));
  if (!s.validation_batches.empty()) {
    const detail::Evaluation validation = fresh || !s.last_validation
                                              ? detail::evaluate_split(s, s.validation_batches)
                                              : *s.last_validation;
    summary.final_evaluations.push_back(split_evaluation("validation", validation));
  }
  summary.class_names = s.data.split.train.class_names;
  summary.target_names = s.data.split.train.target_names;
  summary.baselines = s.data.baselines;
}

namespace {

// The training loss of the first epochs growing 100x or more over the run's first batch's (a
// non-finite loss already stops the run with an error): the learning rate is too high for this
// data. An epoch's mean hides a loss that exploded and then fell back, so the first epochs are
// compared with the first batch, not with each other.
std::optional<std::string> divergence_warning(const Trainer::State& s) {
  constexpr size_t kWatched = 5;
  const double first = s.first_step_loss;
  if (!(first > 0) || !std::isfinite(first)) return std::nullopt;
  for (size_t i = 0; i < std::min(kWatched, s.history.size()); ++i) {
    const double loss = s.history[i].train_loss;
    if (!(loss >= 100 * first)) continue;
    std::ostringstream text;
    text << "the training loss grew from " << first << " (the first batch) to " << loss
         << " (epoch " << s.history[i].epoch << "'s mean): optimizer.lr (" << s.config.optimizer.lr
         << ") is probably too high for this data; try a rate 10x lower";
    if (s.config.data.scale == ScaleMode::kNone) text << ", or data.scale: standard";
    return text.str();
  }
  return std::nullopt;
}

// Every test prediction one class, while the test split holds several: the model learned nothing
// but the most common class.
std::optional<std::string> one_class_warning(const TrainSummary& summary) {
  if (summary.final_evaluations.empty() || summary.final_evaluations.front().regression) {
    return std::nullopt;
  }
  const ConfusionMatrix& m = summary.final_evaluations.front().report.matrix;
  const int64_t n = m.class_count();
  int64_t predicted_classes = 0, true_classes = 0, predicted = -1;
  for (int64_t c = 0; c < n; ++c) {
    int64_t as_predicted = 0, as_true = 0;
    for (int64_t other = 0; other < n; ++other) {
      as_predicted += m.at(other, c);
      as_true += m.at(c, other);
    }
    if (as_predicted > 0) {
      ++predicted_classes;
      predicted = c;
    }
    if (as_true > 0) ++true_classes;
  }
  if (predicted_classes != 1 || true_classes < 2) return std::nullopt;
  const std::vector<std::string>& names = summary.class_names;
  const std::string name = predicted < static_cast<int64_t>(names.size())
                               ? names[static_cast<size_t>(predicted)]
                               : std::to_string(predicted);
  return "every one of the " + std::to_string(m.samples()) + " test predictions is class '" + name +
         "', although the test split holds " + std::to_string(true_classes) +
         " classes: the model learned only the most common class (try data.scale: standard, "
         "optimizer.type: adam, more epochs, or check that the features carry the target)";
}

}  // namespace

void collect_warnings(const Trainer::State& s, TrainSummary& summary) {
  summary.warnings = s.data.warnings;
  if (auto w = divergence_warning(s)) summary.warnings.push_back(*w);
  if (auto w = one_class_warning(summary)) summary.warnings.push_back(*w);
}

detail::Evaluation detail::evaluate_split(Trainer::State& s,
                                          const std::vector<DeviceBatch>& batches) {
  const AutocastGuard autocast(s.config.train.precision);
  return evaluate(*s.built.network, batches, s.config.loss, s.data.split.train.output_count(),
                  s.data.target_scaler);
}

}  // namespace switchyard
