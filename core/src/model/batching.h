// Moving samples to the device in batches, and evaluating a model on such batches. Shared by the
// Trainer and the Predictor.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "switchyard/data.h"
#include "switchyard/metrics.h"
#include "switchyard/nn.h"
#include "switchyard/train.h"

namespace switchyard::detail {

struct DeviceBatch {
  Tensor features;  // [n, sample_shape...] in the run's precision
  Tensor labels;    // [n] i32
  std::vector<int32_t> host_labels;
  // Regression with targets: [n, outputs] f32 as the data set holds them (scaled in training),
  // and the same on the host with each sample's target offset (Dataset::target_offsets, else 0).
  Tensor targets;
  std::vector<float> host_targets;
  std::vector<float> host_offsets;
  int64_t size() const { return static_cast<int64_t>(host_labels.size()); }
  // What the loss compares the outputs with: the targets, or else the class labels.
  const Tensor& truth() const { return targets.defined() ? targets : labels; }
};

// The samples `indices[0..count)` of `data`, copied to `device`.
DeviceBatch gather_batch(const Dataset& data, const int64_t* indices, size_t count,
                         const std::shared_ptr<Device>& device, DType dtype);

// The whole data set in file order, in batches of `batch_size` (the last may be smaller).
std::vector<DeviceBatch> upload_in_batches(const Dataset& data, int64_t batch_size,
                                           const std::shared_ptr<Device>& device, DType dtype);

struct Evaluation {
  double loss = 0;      // mean over samples
  double accuracy = 0;  // fraction of argmax == label
  int64_t samples = 0;
  ConfusionMatrix matrix;  // labels against argmax predictions, class_count x class_count
  // Regression: RMSE, MAE and R^2 in the targets' units (unscaled, offsets added back).
  bool regression = false;
  RegressionMetrics values;
  // VAE models: the KL per sample (unweighted; mu and logvar of the eval-mode forward), averaged
  // over samples. `loss` includes beta times it.
  bool has_kl = false;
  double kl = 0;
};

// The model's outputs of one batch in the targets' units: `target_scaler` undone and each
// sample's offset added back (samples x outputs, row-major); the truth likewise.
std::vector<float> unscaled_outputs(const Tensor& outputs, const DeviceBatch& batch,
                                    const FeatureScaler& target_scaler);
std::vector<float> unscaled_truth(const DeviceBatch& batch, const FeatureScaler& target_scaler);

// Runs `model` in eval mode without autograd over `batches` and restores its training flag.
// Regression batches (with targets) need the scaler fitted on the training targets.
Evaluation evaluate(Module& model, const std::vector<DeviceBatch>& batches,
                    const LossSettings& loss, int64_t class_count,
                    const FeatureScaler& target_scaler = {});

// Number of predictions equal to the labels, from argmax tensors read back to the host.
int64_t count_correct(const Tensor& argmax_indices, const std::vector<int32_t>& labels);

// The same count as a one-element f32 tensor computed on the device (argmax of `logits` [N, C]
// against integer `labels` [N]), so a training step need not wait for the device.
Tensor correct_count(const Tensor& logits, const Tensor& labels);

// How a training pass runs, shared by the training loop and the batch-size trials (which must
// allocate what a real step allocates).
struct StepRecipe {
  Module* network = nullptr;
  LossSettings loss;
  int64_t class_count = 0;
  DType precision = DType::kF32;       // autocast for the forward pass and the loss (autocast.h)
  int64_t accumulation_steps = 1;      // the loss is divided by it before backward
  const LossScaler* scaler = nullptr;  // f16 runs: the loss is scaled before backward
  // Multiplies the loss before backward (not the reported loss): a data-parallel rank's share of
  // an uneven global batch. 1 leaves the loss as it is.
  double loss_weight = 1;
  // VAE latent layers in `network` (found by make_step_recipe): beta * their KL joins the loss.
  std::vector<VaeLatent*> latents;
};

// The VAE latent layers of `network`, depth first.
std::vector<VaeLatent*> find_latents(Module& network);
// The sum of beta * KL of each latent layer's last forward; undefined when there are none.
Tensor latent_kl_loss(const std::vector<VaeLatent*>& latents);
// The sum of the unweighted KL per sample of each latent layer's last forward; undefined when
// there are none.
Tensor latent_kl(const std::vector<VaeLatent*>& latents);

// The recipe a configuration asks for (loss, precision, accumulation) applied to `network`.
StepRecipe make_step_recipe(const TrainConfig& config, Module* network, int64_t class_count,
                            const LossScaler* scaler);

// Sums over the passes of an epoch, kept on the device: no host round trip per step, and nothing
// kept per step (memory stays flat however long the epoch).
struct RunningTotals {
  Tensor loss_sum;      // loss * batch size
  Tensor correct_sum;   // correct predictions
  Tensor all_finite;    // 1 while every loss so far was finite, then 0
  Tensor finite_steps;  // passes before the first non-finite loss: read only when the sum is not
  Tensor kl_sum;        // VAE models: the KL per sample (unweighted) * batch size
};

// What one pass adds to the RunningTotals, before it is added.
struct PassValues {
  Tensor weighted_loss;  // loss * batch size
  Tensor weighted_kl;    // VAE models: the KL per sample * batch size; undefined otherwise
  Tensor correct;        // classification: correct predictions; undefined for regression
  Tensor finite;         // 1 when the loss is finite, else 0
};

// One pass: forward and loss under autocast, backward (gradients accumulate into the parameters'
// grad()); returns the batch's loss and correct predictions. The optimizer step is the caller's.
PassValues forward_backward_pass(const StepRecipe& recipe, const DeviceBatch& batch);
// Adds a pass's values to `totals`.
void add_pass(RunningTotals& totals, const PassValues& values);
// forward_backward_pass, then add_pass.
void forward_backward(const StepRecipe& recipe, const DeviceBatch& batch, RunningTotals& totals);

}  // namespace switchyard::detail
