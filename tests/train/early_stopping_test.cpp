// Validation, early stopping and the best checkpoint on deterministic runs: the run stops at the
// epoch the recorded history says it should, the best checkpoint holds the weights of the best
// epoch, restore_best_weights ends the run with them, and a resumed run stops where an
// uninterrupted one does.

#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "switchyard/checkpoint.h"
#include "train/early_stopping.h"
#include "train/trainer_test_support.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

// small_run_yaml with a validation split and, when `early` is not empty, train.early_stopping.
std::string validated_yaml(int epochs, const std::string& checkpoint, const std::string& early,
                           const std::string& resume = "") {
  std::string text = small_run_yaml(epochs, checkpoint, resume);
  const std::string data = "scale: standard}";
  text.replace(text.find(data), data.size(), "scale: standard, validation_fraction: 0.2}");
  if (!early.empty()) text += "  early_stopping: " + early + "\n";
  return text;
}

struct Recorded {
  std::vector<EpochMetrics> epochs;
  std::map<int64_t, std::vector<uint32_t>> weights;  // by epoch
};

TrainSummary run_recorded(Trainer& trainer, Recorded& recorded) {
  trainer.add_callbacks({nullptr,
                         [&](const EpochMetrics& m) {
                           recorded.epochs.push_back(m);
                           recorded.weights[m.epoch] = parameter_bits(trainer.model());
                         },
                         nullptr, nullptr});
  return trainer.run();
}

// The epoch Keras' rule stops at (min mode): the first epoch that is `patience` epochs after the
// last one improving on the best by more than `min_delta`; 0 when none is.
struct Expected {
  int64_t stop_epoch = 0;
  int64_t best_epoch = 0;
};
Expected expected_stop(const std::vector<EpochMetrics>& history, int64_t patience,
                       double min_delta) {
  Expected e;
  double best = 0;
  for (const EpochMetrics& m : history) {
    if (e.best_epoch == 0 || m.validation_loss < best - min_delta) {
      best = m.validation_loss;
      e.best_epoch = m.epoch;
    } else if (m.epoch - e.best_epoch >= patience) {
      e.stop_epoch = m.epoch;
      return e;
    }
  }
  return e;
}

std::vector<uint32_t> checkpoint_bits(const Checkpoint& checkpoint, Module& like) {
  std::vector<uint32_t> bits;
  for (const auto& [name, tensor] : like.state_dict()) {
    const TensorRecord record = value_or_throw(checkpoint.get_tensor("param/" + name));
    for (const float value : record.floats) {
      uint32_t word = 0;
      std::memcpy(&word, &value, sizeof(word));
      bits.push_back(word);
    }
  }
  return bits;
}

EpochMetrics with_val_loss(int64_t epoch, double loss) {
  EpochMetrics m;
  m.epoch = epoch;
  m.has_validation = true;
  m.validation_loss = loss;
  return m;
}

constexpr int kEpochs = 30;
constexpr const char* kEarly = "{metric: val_loss, patience: 2, min_delta: 0.002}";

}  // namespace

TEST_CASE("the best tracker follows Keras: min_delta, patience and the stop message",
          "[early_stopping]") {
  MonitorSettings monitor;
  monitor.min_delta = 0.005;
  EarlyStoppingSettings early;
  early.enabled = true;
  early.patience = 3;
  detail::BestTracker tracker(monitor);
  const double losses[] = {1.0, 0.8, 0.79, 0.85, 0.7995, 0.81};
  const bool improves[] = {true, true, true, false, false, false};
  for (int i = 0; i < 6; ++i) {
    INFO("epoch " << i + 1);
    CHECK(tracker.observe(with_val_loss(i + 1, losses[i])) == improves[i]);
    CHECK(detail::should_stop(early, tracker) == (i == 5));
  }
  CHECK(tracker.best_epoch() == 3);
  CHECK(tracker.best_value() == 0.79);
  CHECK(detail::stop_message(6, tracker) ==
        "early stopping at epoch 6: val_loss did not improve by 0.005 for 3 epochs; best 0.79 at "
        "epoch 3");

  // Higher is better for accuracy; an epoch without the metric never improves.
  monitor = {"val_accuracy", MonitorMode::kMax, 0.0};
  detail::BestTracker accuracy(monitor);
  EpochMetrics m = with_val_loss(1, 0.5);
  m.validation_accuracy = 0.8;
  CHECK(accuracy.observe(m));
  m.epoch = 2;
  m.validation_accuracy = 0.79;
  CHECK_FALSE(accuracy.observe(m));
  m.epoch = 3;
  m.validation_accuracy = 0.81;
  CHECK(accuracy.observe(m));
  m.epoch = 4;
  m.has_validation = false;
  m.validation_accuracy = 0.99;
  CHECK_FALSE(accuracy.observe(m));
  CHECK(accuracy.best_epoch() == 3);
  CHECK(accuracy.epochs_without_improvement() == 1);
}

TEST_CASE(
    "early stopping stops at the epoch the validation history says, and the best "
    "checkpoint holds the best epoch's weights",
    "[early_stopping]") {
  // The same deterministic run without early stopping gives the history to judge by.
  Recorded full;
  Trainer whole(train_config_from(validated_yaml(kEpochs, "", "")), reference_device());
  run_recorded(whole, full);
  REQUIRE(full.epochs.size() == kEpochs);
  for (const EpochMetrics& m : full.epochs) REQUIRE(m.has_validation);
  const Expected expected = expected_stop(full.epochs, 2, 0.002);
  INFO("expected stop " << expected.stop_epoch << ", best " << expected.best_epoch);
  REQUIRE(expected.stop_epoch > 2);  // the rule must bite within the run for the test to mean
  REQUIRE(expected.stop_epoch < kEpochs);

  TempDir dir;
  const std::string last = (dir / "run.ckpt").string();
  Recorded stopped;
  Trainer trainer(train_config_from(validated_yaml(kEpochs, last, kEarly)), reference_device());
  const TrainSummary summary = run_recorded(trainer, stopped);
  CHECK(summary.history.size() == static_cast<size_t>(expected.stop_epoch));
  CHECK(summary.monitor.stopped_early);
  CHECK(summary.monitor.stopped_epoch == expected.stop_epoch);
  CHECK(summary.monitor.best_epoch == expected.best_epoch);
  CHECK(summary.monitor.best_value == full.epochs[expected.best_epoch - 1].validation_loss);
  CHECK(summary.monitor.stop_message.find("early stopping at epoch " +
                                          std::to_string(expected.stop_epoch) +
                                          ": val_loss did not improve by 0.002 for 2 epochs") == 0);
  // Deterministic: the stopped run is the full run's prefix, weights included.
  for (const EpochMetrics& m : stopped.epochs) {
    CHECK(m.validation_loss == full.epochs[m.epoch - 1].validation_loss);
    CHECK(stopped.weights[m.epoch] == full.weights[m.epoch]);
  }
  // The best checkpoint (derived beside the last) holds the best epoch; the last one the last.
  const std::string best = (dir / "run.best.ckpt").string();
  CHECK(summary.monitor.best_checkpoint == best);
  const Checkpoint best_file = value_or_throw(read_checkpoint(best));
  CHECK(best_file.get_u64("progress/epoch").value() == static_cast<uint64_t>(expected.best_epoch));
  CHECK(checkpoint_bits(best_file, trainer.model()) == full.weights[expected.best_epoch]);
  const Checkpoint last_file = value_or_throw(read_checkpoint(last));
  CHECK(last_file.get_u64("progress/epoch").value() == static_cast<uint64_t>(expected.stop_epoch));
  // Without restore_best_weights the run ends with the last epoch's weights.
  CHECK(parameter_bits(trainer.model()) == full.weights[expected.stop_epoch]);
  CHECK_FALSE(summary.monitor.restored_best_weights);
  CHECK(summary.monitor.final_weights_epoch == expected.stop_epoch);
}

TEST_CASE("restore_best_weights ends the run with the best epoch's weights, also after a resume",
          "[early_stopping]") {
  const std::string early =
      "{metric: val_loss, patience: 2, min_delta: 0.002, restore_best_weights: true}";
  Recorded whole_record;
  Trainer whole(train_config_from(validated_yaml(kEpochs, "", early)), reference_device());
  const TrainSummary summary = run_recorded(whole, whole_record);
  REQUIRE(summary.monitor.stopped_early);
  const int64_t best = summary.monitor.best_epoch;
  const int64_t stop = summary.monitor.stopped_epoch;
  REQUIRE(best < stop);
  CHECK(summary.monitor.restored_best_weights);
  CHECK(summary.monitor.final_weights_epoch == best);
  CHECK(parameter_bits(whole.model()) == whole_record.weights[best]);
  // The final evaluation is of the restored weights: the best epoch's validation loss.
  REQUIRE(summary.final_evaluations.size() == 2);
  CHECK(summary.final_evaluations[1].split == "validation");
  CHECK(summary.final_evaluations[1].loss == Approx(whole_record.epochs[best - 1].validation_loss));
  CHECK(summary.final_evaluations[0].loss == Approx(whole_record.epochs[best - 1].test_loss));

  // Interrupted after the best epoch but before the stop, then resumed: the history replays to
  // the same best epoch and patience count, and the best weights come from the best checkpoint.
  TempDir dir;
  const std::string path = (dir / "run.ckpt").string();
  Trainer first(train_config_from(validated_yaml(static_cast<int>(stop - 1), path, early)),
                reference_device());
  const TrainSummary first_summary = first.run();
  CHECK_FALSE(first_summary.monitor.stopped_early);
  Trainer resumed(train_config_from(validated_yaml(kEpochs, path, early, path)),
                  reference_device());
  const TrainSummary resumed_summary = resumed.run();
  CHECK(resumed_summary.history.size() == static_cast<size_t>(stop));
  CHECK(resumed_summary.monitor.stopped_epoch == stop);
  CHECK(resumed_summary.monitor.best_epoch == best);
  CHECK(resumed_summary.monitor.restored_best_weights);
  CHECK(parameter_bits(resumed.model()) == whole_record.weights[best]);

  // Without a best checkpoint the best weights of an epoch before the resume are gone: the run
  // says so and keeps the last weights.
  TempDir other;
  const std::string bare = (other / "run.ckpt").string();
  const std::string no_best =
      validated_yaml(static_cast<int>(stop - 1), bare, early) + "  best_checkpoint: none\n";
  Trainer(train_config_from(no_best), reference_device()).run();
  std::string resumed_yaml =
      validated_yaml(kEpochs, bare, early, bare) + "  best_checkpoint: none\n";
  Trainer without(train_config_from(resumed_yaml), reference_device());
  const TrainSummary without_summary = without.run();
  CHECK(without_summary.monitor.stopped_epoch == stop);
  CHECK_FALSE(without_summary.monitor.restored_best_weights);
  CHECK(without_summary.monitor.restore_note ==
        "the best epoch (" + std::to_string(best) +
            ") came before the resume and train.best_checkpoint is not set");
  CHECK(parameter_bits(without.model()) == whole_record.weights[stop]);

  // Resuming the stopped run changes nothing: it stays stopped.
  Trainer again(train_config_from(validated_yaml(kEpochs, path, early, path)), reference_device());
  const TrainSummary again_summary = again.run();
  CHECK(again_summary.history.size() == static_cast<size_t>(stop));
  CHECK(again_summary.monitor.stopped_early);
  CHECK(parameter_bits(again.model()) == whole_record.weights[best]);
}

TEST_CASE(
    "early stopping on a validation metric without a validation split is a config error "
    "naming file, line and column",
    "[early_stopping][config]") {
  use_repository_data();
  auto from = [](const std::string& yaml) -> Status {
    const Config config = value_or_throw(Config::load_string(yaml, "test.yaml"));
    return TrainConfig::from_config(config).status();
  };
  const std::string base = small_run_yaml(3, "");
  const Status metric = from(base + "  early_stopping: {metric: val_accuracy, patience: 2}\n");
  CHECK(metric.code() == StatusCode::kInvalidArgument);
  CHECK(metric.message() ==
        "test.yaml:18:28: key 'train.early_stopping.metric': early stopping monitors val_accuracy, "
        "which is measured on the validation split, and there is none: set "
        "data.validation_fraction (e.g. 0.1), or monitor train_loss");
  // Without a metric it is val_loss, and the error points at the section.
  const Status section = from(base + "  early_stopping:\n    patience: 2\n");
  INFO(section.message());
  CHECK(section.message().find("test.yaml:19:5: key 'train.early_stopping': early stopping "
                               "monitors val_loss, which") == 0);
  const Status best = from(base + "  best_checkpoint: best.ckpt\n");
  INFO(best.message());
  CHECK(best.message().find("test.yaml:18:20: key 'train.best_checkpoint': the best "
                            "checkpoint is chosen by val_loss, which") == 0);
  // A training metric needs no validation split.
  CHECK(from(base + "  early_stopping: {metric: train_loss, patience: 2}\n").ok());
  const Status same = from(small_run_yaml(3, "run.ckpt") +
                           "  early_stopping: {metric: train_loss, patience: 2}\n"
                           "  best_checkpoint: run.ckpt\n");
  CHECK(same.message().find("key 'train.best_checkpoint': is the same file as train.checkpoint") !=
        std::string::npos);
  // The schema: patience is required, the metric is one of a list.
  const auto missing = Config::load_string(base + "  early_stopping: {metric: train_loss}\n", "t");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("missing required key 'patience'") != std::string::npos);
  const auto unknown =
      Config::load_string(base + "  early_stopping: {metric: test_loss, patience: 1}\n", "t");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message().find("val_loss, val_accuracy, val_f1_macro, val_rmse, "
                                        "val_mae, val_r2, train_loss, train_accuracy") !=
        std::string::npos);
}

TEST_CASE(
    "the early stopping mode follows the metric unless given, and the best checkpoint "
    "defaults to a name beside the checkpoint",
    "[early_stopping][config]") {
  const std::string base = validated_yaml(3, "runs/model.ckpt", "");
  const TrainConfig loss = train_config_from(base + "  early_stopping: {patience: 2}\n");
  CHECK(loss.train.early_stopping.enabled);
  CHECK(loss.train.monitor.metric == "val_loss");
  CHECK(loss.train.monitor.mode == MonitorMode::kMin);
  CHECK(loss.train.best_checkpoint.filename() == "model.best.ckpt");
  CHECK(loss.train.best_checkpoint.parent_path() == loss.train.checkpoint.parent_path());
  const TrainConfig f1 =
      train_config_from(base + "  early_stopping: {metric: val_f1_macro, patience: 2}\n");
  CHECK(f1.train.monitor.mode == MonitorMode::kMax);
  const TrainConfig explicit_mode = train_config_from(
      base + "  early_stopping: {metric: val_accuracy, mode: min, patience: 2}\n");
  CHECK(explicit_mode.train.monitor.mode == MonitorMode::kMin);
  const TrainConfig off =
      train_config_from(base + "  early_stopping: {patience: 2}\n" + "  best_checkpoint: none\n");
  CHECK(off.train.best_checkpoint.empty());
  const TrainConfig none = train_config_from(base);
  CHECK_FALSE(none.train.early_stopping.enabled);
  CHECK(none.train.best_checkpoint.empty());
}

TEST_CASE("a best checkpoint write that fails keeps the previous best checkpoint",
          "[early_stopping]") {
  TempDir dir;
  const auto last = dir / "run.ckpt";
  const auto best = dir / "run.best.ckpt";
  // min_delta 0 and a fresh model: the validation loss falls in epoch 2, so its best is written.
  Trainer trainer(train_config_from(validated_yaml(3, last.string(), "{patience: 5}")),
                  reference_device());
  // After epoch 1 is saved, files may no longer grow past 1 KiB (less than a checkpoint).
  const std::string message = run_with_writes_failing_after(trainer, 1);
  CHECK(message.find("train.best_checkpoint after epoch 2") != std::string::npos);
  CHECK(message.find("cannot write checkpoint") != std::string::npos);
  CHECK(value_or_throw(read_checkpoint(best)).get_u64("progress/epoch").value() == 1);
  CHECK(value_or_throw(read_checkpoint(last)).get_u64("progress/epoch").value() == 1);
  // No temporary file is left: the checkpoints, and the curves of epoch 1 (train/run_files.h).
  std::set<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    files.insert(entry.path().filename().string());
  }
  CHECK(files == std::set<std::string>{"run.best.ckpt", "run.ckpt", "curves.svg", "history.csv"});
}
