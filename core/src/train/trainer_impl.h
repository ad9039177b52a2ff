// Trainer's private state, shared by trainer.cpp (the loop) and trainer_checkpoint.cpp (saving
// and restoring it).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/batching.h"
#include "switchyard/checkpoint.h"
#include "switchyard/communicator.h"
#include "switchyard/train.h"
#include "train/early_stopping.h"
#include "train/gradient_reducer.h"
#include "train/step_capture.h"

namespace switchyard {

struct Trainer::State {
  TrainConfig config;
  std::shared_ptr<Device> device;
  PreparedData data;
  BuiltModel built;
  std::unique_ptr<Optimizer> optimizer;
  std::unique_ptr<LrScheduler> scheduler;  // null for a constant rate
  std::unique_ptr<LossScaler> scaler;      // f16 runs only
  std::vector<detail::DeviceBatch> test_batches;
  std::vector<detail::DeviceBatch> validation_batches;  // empty without a validation split
  std::vector<TrainCallbacks> callbacks;
  // Data parallelism: the process's communicator (one rank without a launcher) and, with more
  // than one rank, the reducer that averages gradients across them.
  std::shared_ptr<Communicator> communicator;
  std::unique_ptr<detail::GradientReducer> reducer;
  bool writes_files = true;  // rank 0 alone writes checkpoints and exported weights

  int64_t batch_size = 0;
  std::string batch_size_choice;  // why auto chose batch_size (RunInfo::batch_size_choice)
  int64_t completed_epochs = 0;
  int64_t optimizer_steps = 0;
  int64_t micro_steps = 0;     // forward/backward passes; seeds dropout
  double first_step_loss = 0;  // the mean loss of this run's first batch; 0 before it (or resumed)
  std::vector<EpochMetrics> history;
  std::string resumed_from;
  std::string last_checkpoint;
  int64_t checkpoint_epoch = 0;  // the epoch last_checkpoint holds; 0 when this run wrote none

  // The monitored metric (train.early_stopping, train.best_checkpoint); replayed from the history
  // on a resume. `monitoring` is false when neither asks for it.
  bool monitoring = false;
  detail::BestTracker best;
  bool stopped_early = false;
  int64_t stopped_epoch = 0;
  std::optional<Checkpoint> best_state;  // the best epoch's state, for restore_best_weights
  std::string best_state_note;           // why best_state is missing after a resume
  std::string best_checkpoint;           // written this run or found on a resume; "" otherwise
  int64_t best_checkpoint_epoch = 0;
  // The last epoch's evaluations (with confusion matrices), reused at the end of the run when the
  // final weights are the last epoch's.
  detail::Evaluation last_test;
  std::optional<detail::Evaluation> last_validation;
  // train.capture; last, so that its recordings (which hold the network's tensors and call back
  // into its modules on replay) go before the network does.
  std::unique_ptr<detail::StepCapture> capture;
};

// Monitoring (trainer_monitor.cpp): after each epoch, records the epoch in the tracker and, when it
// is the best so far, writes the best checkpoint and keeps its state for restore_best_weights
// (`snapshot` gives the current state, made once per epoch by the caller). Returns true when
// early stopping ends the run at this epoch.
bool monitor_epoch(Trainer::State& s, const EpochMetrics& metrics,
                   const std::function<const Checkpoint&()>& snapshot);
// After a restore: replays the history through the tracker and, for restore_best_weights, finds
// the best state (`restored` itself, or train.best_checkpoint when it holds the best epoch).
void replay_monitor(Trainer::State& s, const Checkpoint& restored);
// At the end of the run: restores the best weights when asked, evaluates the test and validation
// splits with the final weights and fills summary.monitor and summary.final_evaluations.
void finish_monitoring(Trainer::State& s, TrainSummary& summary);
// After finish_monitoring: the run's warnings (TrainSummary::warnings), from the data and from the
// history and the final test evaluation.
void collect_warnings(const Trainer::State& s, TrainSummary& summary);

namespace detail {
// Copies rank 0's parameters and buffers into every other rank (a no-op with one rank).
void broadcast_model_state(Trainer::State& s);
// The model (in eval mode, under the run's autocast) on one split's batches: loss, accuracy and
// confusion matrix, or for regression RMSE, MAE and R^2 in the targets' units.
Evaluation evaluate_split(Trainer::State& s, const std::vector<DeviceBatch>& batches);
}  // namespace detail

// Names used in checkpoints and messages.
const char* schedule_kind_name(ScheduleKind kind);

}  // namespace switchyard
