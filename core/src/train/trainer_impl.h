// Trainer's private state, shared by trainer.cpp (the loop) and trainer_checkpoint.cpp (saving
// and restoring it).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "switchyard/train.h"
#include "train/batching.h"

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
  std::vector<TrainCallbacks> callbacks;

  int64_t batch_size = 0;
  std::string batch_size_choice;  // why auto chose batch_size (RunInfo::batch_size_choice)
  int64_t completed_epochs = 0;
  int64_t optimizer_steps = 0;
  int64_t micro_steps = 0;  // forward/backward passes; seeds dropout
  std::vector<EpochMetrics> history;
  std::string resumed_from;
  std::string last_checkpoint;
  int64_t checkpoint_epoch = 0;  // the epoch last_checkpoint holds; 0 when this run wrote none
};

// Names used in checkpoints and messages.
const char* optimizer_kind_name(OptimizerKind kind);
const char* schedule_kind_name(ScheduleKind kind);

}  // namespace switchyard
