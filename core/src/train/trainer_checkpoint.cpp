// Trainer::make_checkpoint and Trainer::restore: the complete state of a run, so that a resumed
// run continues exactly where the interrupted one stopped.
#include "model/train_state.h"
#include "switchyard/checkpoint.h"
#include "train/trainer_impl.h"

namespace switchyard {
namespace {

Status check_same_data(const Checkpoint& checkpoint, const Trainer::State& state) {
  SY_ASSIGN_OR_RETURN(const detail::DataLayout stored, detail::get_data_layout(checkpoint));
  const std::string current = detail::describe_data(state.config.data);
  if (stored.description != current) {
    return failed_precondition("checkpoint " + checkpoint.source() +
                               " was trained on other data:\n  checkpoint: " + stored.description +
                               "\n  config:     " + current);
  }
  const FeatureScaler& scaler = state.data.scaler;
  if (stored.scaler.offset != scaler.offset || stored.scaler.factor != scaler.factor) {
    return failed_precondition("checkpoint " + checkpoint.source() +
                               ": the data set's contents changed since it was written (the "
                               "scaling fitted on the training split differs)");
  }
  return ok_status();
}

Status restore_optimizer(const Checkpoint& checkpoint, Trainer::State& state) {
  SY_ASSIGN_OR_RETURN(const std::string kind, checkpoint.get_string("optim/kind"));
  const std::string expected = optimizer_kind_name(state.config.optimizer.kind);
  if (kind != expected) {
    return failed_precondition("checkpoint " + checkpoint.source() + " holds " + kind +
                               " optimizer state, but the config asks for " + expected);
  }
  SY_ASSIGN_OR_RETURN(
      const NamedTensors optim_state,
      detail::get_named_tensors(checkpoint, "optim/state/", state.optimizer->state_dict()));
  try {
    state.optimizer->load_state_dict(optim_state);
  } catch (const Error& error) {
    return error.status().with_context("loading optimizer state from " + checkpoint.source());
  }
  SY_ASSIGN_OR_RETURN(const double lr, checkpoint.get_f64("optim/lr"));
  state.optimizer->set_lr(lr);
  return ok_status();
}

Status restore_progress(const Checkpoint& checkpoint, Trainer::State& state) {
  SY_ASSIGN_OR_RETURN(const uint64_t epoch, checkpoint.get_u64("progress/epoch"));
  SY_ASSIGN_OR_RETURN(const uint64_t steps, checkpoint.get_u64("progress/optimizer_steps"));
  SY_ASSIGN_OR_RETURN(const uint64_t micro, checkpoint.get_u64("progress/micro_steps"));
  SY_ASSIGN_OR_RETURN(const uint64_t batch, checkpoint.get_u64("progress/batch_size"));
  SY_ASSIGN_OR_RETURN(const uint64_t seed, checkpoint.get_u64("progress/seed"));
  SY_ASSIGN_OR_RETURN(state.history, detail::get_history(checkpoint));
  if (seed != state.config.seed) {
    return failed_precondition("checkpoint " + checkpoint.source() + " was written with seed " +
                               std::to_string(seed) + ", the config says " +
                               std::to_string(state.config.seed) +
                               "; a resumed run must keep the seed");
  }
  state.completed_epochs = static_cast<int64_t>(epoch);
  state.optimizer_steps = static_cast<int64_t>(steps);
  state.micro_steps = static_cast<int64_t>(micro);
  if (state.config.train.batch_size == 0) state.batch_size = static_cast<int64_t>(batch);
  // A checkpoint without loss-scaler records (an f32 or bf16 run resumed in f16) starts the
  // scaler afresh.
  if (state.scaler && checkpoint.contains("amp/loss_scale")) {
    SY_ASSIGN_OR_RETURN(const double scale, checkpoint.get_f64("amp/loss_scale"));
    SY_ASSIGN_OR_RETURN(const uint64_t tracker, checkpoint.get_u64("amp/growth_tracker"));
    SY_ASSIGN_OR_RETURN(const uint64_t skipped, checkpoint.get_u64("amp/skipped_steps"));
    if (!(scale > 0)) return checkpoint.corrupt("record 'amp/loss_scale' is not positive");
    state.scaler->restore(scale, static_cast<int64_t>(tracker), static_cast<int64_t>(skipped));
  }
  if (state.scheduler) {
    state.scheduler->set_epoch(state.completed_epochs);
    state.optimizer->set_lr(state.scheduler->lr_at(state.completed_epochs));
  }
  return ok_status();
}

}  // namespace

const char* optimizer_kind_name(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd:
      return "sgd";
    case OptimizerKind::kAdam:
      return "adam";
    case OptimizerKind::kAdamW:
      return "adamw";
  }
  return "unknown";
}

const char* schedule_kind_name(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kNone:
      return "none";
    case ScheduleKind::kStep:
      return "step";
    case ScheduleKind::kCosine:
      return "cosine";
  }
  return "unknown";
}

Checkpoint Trainer::make_checkpoint() const {
  const State& s = *state_;
  Checkpoint checkpoint;
  checkpoint.put_string("meta/kind", detail::kTrainCheckpointKind);
  checkpoint.put_string("meta/architecture", s.built.architecture);
  checkpoint.put_u64("meta/fingerprint", s.built.fingerprint);
  detail::DataLayout layout;
  layout.sample_shape = s.data.split.train.sample_shape;
  layout.class_names = s.data.split.train.class_names;
  layout.scaler = s.data.scaler;
  layout.description = detail::describe_data(s.config.data);
  layout.target_names = s.data.split.train.target_names;
  layout.target_scaler = s.data.target_scaler;
  layout.imputer = s.data.imputer;
  // A series is read by data.series, not by the table layout that predicting from a file alone
  // needs; such a checkpoint predicts with its YAML data section.
  layout.has_table = !s.config.data.series.enabled;
  layout.table = s.data.split.train.table;
  layout.settings = s.config.data;
  detail::put_data_layout(checkpoint, layout);
  detail::put_model_spec(checkpoint, s.config.model, s.config.loss);
  detail::put_named_tensors(checkpoint, "param/", s.built.network->state_dict());
  checkpoint.put_string("optim/kind", optimizer_kind_name(s.config.optimizer.kind));
  checkpoint.put_f64("optim/lr", s.optimizer->lr());
  detail::put_named_tensors(checkpoint, "optim/state/", s.optimizer->state_dict());
  checkpoint.put_string("schedule/kind", schedule_kind_name(s.config.schedule.kind));
  checkpoint.put_u64("progress/epoch", static_cast<uint64_t>(s.completed_epochs));
  checkpoint.put_u64("progress/optimizer_steps", static_cast<uint64_t>(s.optimizer_steps));
  checkpoint.put_u64("progress/micro_steps", static_cast<uint64_t>(s.micro_steps));
  checkpoint.put_u64("progress/batch_size", static_cast<uint64_t>(s.batch_size));
  checkpoint.put_u64("progress/seed", s.config.seed);
  detail::put_history(checkpoint, s.history);
  if (s.scaler) {
    checkpoint.put_f64("amp/loss_scale", s.scaler->scale_value());
    checkpoint.put_u64("amp/growth_tracker", static_cast<uint64_t>(s.scaler->growth_tracker()));
    checkpoint.put_u64("amp/skipped_steps", static_cast<uint64_t>(s.scaler->skipped_steps()));
  }
  return checkpoint;
}

void Trainer::restore(const Checkpoint& checkpoint) {
  // Everything is checked before anything is loaded, so that a rejected checkpoint leaves the
  // trainer as it was.
  throw_if_error(check_architecture(checkpoint, state_->built));
  throw_if_error(check_same_data(checkpoint, *state_));
  throw_if_error(detail::load_model(checkpoint, state_->built));
  throw_if_error(restore_optimizer(checkpoint, *state_));
  throw_if_error(restore_progress(checkpoint, *state_));
  replay_monitor(*state_, checkpoint);
  state_->resumed_from = checkpoint.source();
}

}  // namespace switchyard
