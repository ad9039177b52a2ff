// Optimizers and learning-rate schedules.
//
// An optimizer holds the parameter tensors it updates (shared with the model) and its state
// tensors on the parameters' device. step() is one fused op per parameter (SY_OP_SGD_UPDATE or
// SY_OP_ADAM_UPDATE) that updates parameter and state in place; nothing is read back to the host.
// state_dict() names every state tensor ("0.momentum_buffer", "3.exp_avg", "step") for
// checkpoints; load_state_dict() copies them back in.
//
// Threads: an Optimizer, LossScaler or LrScheduler is used by one thread at a time. step() writes
// the parameters in place, so no forward or backward pass may run on them meanwhile (a model in
// eval mode may be shared only while nothing steps it, nn.h).
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "switchyard/tensor.h"

namespace switchyard {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Optimizer {
 public:
  Optimizer(std::vector<Tensor> parameters, double lr);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Applies one update from the parameters' grad(); parameters without a gradient are skipped.
  virtual void step() = 0;
  // For a step replayed from a recording (capture.h): counts one step as step() does, without
  // dispatching anything, and returns the update op and the parameters step() would have given
  // each of its calls (the learning rate and Adam's step count change from step to step), for the
  // recorded calls to be patched with.
  virtual std::pair<sy_op, sy_op_params> replayed_step() = 0;
  // Clears every parameter's gradient.
  void zero_grad();

  double lr() const { return lr_; }
  void set_lr(double lr) { lr_ = lr; }
  const std::vector<Tensor>& parameters() const { return parameters_; }
  // Number of step() calls so far (restored by load_state_dict).
  int64_t step_count() const { return step_count_; }

  // State tensors by name plus "step" (a one-element i64 tensor). Shared, not copied.
  virtual NamedTensors state_dict() const = 0;
  // Copies state back; throws an Error naming the key on a missing key or a shape mismatch.
  virtual void load_state_dict(const NamedTensors& state) = 0;

 protected:
  Tensor step_tensor() const;
  void load_step(const NamedTensors& state);

  std::vector<Tensor> parameters_;
  double lr_;
  int64_t step_count_ = 0;
};

struct SgdOptions {
  double lr = 0.01;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
};

// SGD with PyTorch's semantics (momentum buffer starts at zero, so the first step sets it to the
// gradient when dampening is 0).
class Sgd : public Optimizer {
 public:
  Sgd(std::vector<Tensor> parameters, const SgdOptions& options);
  void step() override;
  std::pair<sy_op, sy_op_params> replayed_step() override;
  NamedTensors state_dict() const override;
  void load_state_dict(const NamedTensors& state) override;
  const SgdOptions& options() const { return options_; }

 private:
  sy_op_params update_params() const;

  SgdOptions options_;
  std::vector<Tensor> momentum_buffers_;  // one per parameter, zeros; empty when momentum == 0
};

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double weight_decay = 0.0;
  bool decoupled_weight_decay = false;  // true = AdamW
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> parameters, const AdamOptions& options);
  void step() override;
  std::pair<sy_op, sy_op_params> replayed_step() override;
  NamedTensors state_dict() const override;
  void load_state_dict(const NamedTensors& state) override;
  const AdamOptions& options() const { return options_; }

 private:
  sy_op_params update_params() const;  // for the step step_count_ counts

  AdamOptions options_;
  std::vector<Tensor> exp_avg_;     // m
  std::vector<Tensor> exp_avg_sq_;  // v
};

// Adam with decoupled weight decay (default 0.01, as in PyTorch).
class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> parameters, AdamOptions options);
};

// Dynamic loss scaling for f16 training. f16 gradients underflow below 6e-8 and overflow above
// 65504; scaling the loss by S before backward() keeps small gradients representable, and steps
// whose gradients overflowed are skipped while S shrinks. The procedure (as PyTorch's GradScaler):
//   loss = scaler.scale(loss); loss.backward(); scaler.step(optimizer); optimizer.zero_grad();
// step() reads one number back from the device (whether any gradient is inf or NaN).
struct LossScalerOptions {
  double initial_scale = 65536.0;  // 2^16
  double growth_factor = 2.0;      // after growth_interval good steps in a row
  double backoff_factor = 0.5;     // after a step with inf/NaN gradients
  int64_t growth_interval = 2000;
  double max_scale = 16777216.0;  // 2^24: past this, scaled f32 master gradients lose nothing
};

class LossScaler {
 public:
  explicit LossScaler(LossScalerOptions options = {});
  // loss * scale().
  Tensor scale(const Tensor& loss) const;
  // If every gradient of the optimizer's parameters is finite: divides them by scale(), runs
  // optimizer.step() and returns true. Otherwise skips the step (the caller's zero_grad() drops
  // the gradients), counts it and returns false. Then updates the scale.
  bool step(Optimizer& optimizer);

  double scale_value() const { return scale_; }
  int64_t skipped_steps() const { return skipped_steps_; }
  int64_t growth_tracker() const { return growth_tracker_; }
  // For checkpoints: a resumed run continues with the same scale and counters.
  void restore(double scale, int64_t growth_tracker, int64_t skipped_steps);

 private:
  LossScalerOptions options_;
  double scale_;
  int64_t growth_tracker_ = 0;
  int64_t skipped_steps_ = 0;
};

// A learning rate that depends on the epoch. step() is called once per epoch, after it; the rate
// is a closed form of the epoch count, so a resumed run calls set_epoch() and continues exactly.
class LrScheduler {
 public:
  explicit LrScheduler(Optimizer& optimizer);
  virtual ~LrScheduler() = default;
  // Advances one epoch and sets the optimizer's rate.
  void step();
  int64_t epoch() const { return epoch_; }
  void set_epoch(int64_t epoch);
  double base_lr() const { return base_lr_; }
  // The rate for an epoch.
  virtual double lr_at(int64_t epoch) const = 0;

 protected:
  Optimizer& optimizer_;
  double base_lr_;
  int64_t epoch_ = 0;
};

// lr = base_lr * gamma^(epoch / step_size).
class StepLR : public LrScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);
  double lr_at(int64_t epoch) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

// lr = min_lr + (base_lr - min_lr) (1 + cos(pi epoch / t_max)) / 2, constant past t_max.
class CosineAnnealingLR : public LrScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, double min_lr = 0.0);
  double lr_at(int64_t epoch) const override;

 private:
  int64_t t_max_;
  double min_lr_;
};

}  // namespace switchyard

#pragma GCC visibility pop
