#include "model/batching.h"

#include <algorithm>

#include "switchyard/autocast.h"
#include "switchyard/autograd.h"
#include "switchyard/ops.h"

namespace switchyard::detail {

namespace {

void gather_targets(const Dataset& data, const int64_t* indices, size_t count,
                    const std::shared_ptr<Device>& device, DeviceBatch& batch) {
  const int64_t outputs = data.target_count();
  batch.host_targets.resize(count * static_cast<size_t>(outputs));
  batch.host_offsets.assign(count, 0.0f);
  for (size_t i = 0; i < count; ++i) {
    const auto row = data.targets.begin() + indices[i] * outputs;
    std::copy(row, row + outputs, batch.host_targets.begin() + static_cast<int64_t>(i) * outputs);
    if (!data.target_offsets.empty()) {
      batch.host_offsets[i] = data.target_offsets[static_cast<size_t>(indices[i])];
    }
  }
  batch.targets =
      Tensor::from_host(batch.host_targets, Shape{static_cast<int64_t>(count), outputs}, device);
}

// Rows of a batch in the targets' units: the scaling undone and the sample's offset added.
std::vector<float> in_target_units(std::vector<float> rows, const DeviceBatch& batch,
                                   const FeatureScaler& target_scaler) {
  target_scaler.unscale(rows);
  const size_t width = batch.host_offsets.empty() ? 1 : rows.size() / batch.host_offsets.size();
  for (size_t i = 0; i < rows.size() && !batch.host_offsets.empty(); ++i) {
    rows[i] += batch.host_offsets[i / width];
  }
  return rows;
}

}  // namespace

std::vector<float> unscaled_outputs(const Tensor& outputs, const DeviceBatch& batch,
                                    const FeatureScaler& target_scaler) {
  return in_target_units(outputs.to(DType::kF32).to_host_float(), batch, target_scaler);
}

std::vector<float> unscaled_truth(const DeviceBatch& batch, const FeatureScaler& target_scaler) {
  return in_target_units(batch.host_targets, batch, target_scaler);
}

DeviceBatch gather_batch(const Dataset& data, const int64_t* indices, size_t count,
                         const std::shared_ptr<Device>& device, DType dtype) {
  const int64_t width = data.feature_count();
  std::vector<float> features(count * static_cast<size_t>(width));
  DeviceBatch batch;
  batch.host_labels.resize(count);
  for (size_t i = 0; i < count; ++i) {
    const auto row = data.features.begin() + indices[i] * width;
    std::copy(row, row + width, features.begin() + static_cast<int64_t>(i) * width);
    batch.host_labels[i] = data.labels[static_cast<size_t>(indices[i])];
  }
  std::vector<int64_t> shape = {static_cast<int64_t>(count)};
  shape.insert(shape.end(), data.sample_shape.begin(), data.sample_shape.end());
  batch.features = Tensor::from_host(features, Shape(shape), device, dtype);
  batch.labels = Tensor::from_host(batch.host_labels, Shape{static_cast<int64_t>(count)}, device);
  if (data.is_regression() && !data.targets.empty())
    gather_targets(data, indices, count, device, batch);
  return batch;
}

std::vector<DeviceBatch> upload_in_batches(const Dataset& data, int64_t batch_size,
                                           const std::shared_ptr<Device>& device, DType dtype) {
  std::vector<int64_t> order(static_cast<size_t>(data.sample_count));
  for (int64_t i = 0; i < data.sample_count; ++i) order[i] = i;
  std::vector<DeviceBatch> batches;
  for (int64_t begin = 0; begin < data.sample_count; begin += batch_size) {
    const int64_t end = std::min(data.sample_count, begin + batch_size);
    batches.push_back(
        gather_batch(data, order.data() + begin, static_cast<size_t>(end - begin), device, dtype));
  }
  return batches;
}

int64_t count_correct(const Tensor& argmax_indices, const std::vector<int32_t>& labels) {
  const std::vector<int64_t> predicted = argmax_indices.to_host_int64();
  int64_t correct = 0;
  for (size_t i = 0; i < labels.size() && i < predicted.size(); ++i) {
    correct += predicted[i] == labels[i] ? 1 : 0;
  }
  return correct;
}

Tensor correct_count(const Tensor& logits, const Tensor& labels) {
  const Tensor predicted = argmax(logits, 1).to(DType::kF32);
  return sum(equal(predicted, labels.to(DType::kF32)));
}

StepRecipe make_step_recipe(const TrainConfig& config, Module* network, int64_t class_count,
                            const LossScaler* scaler) {
  StepRecipe recipe;
  recipe.network = network;
  recipe.loss = config.loss;
  recipe.class_count = class_count;
  recipe.precision = config.train.precision;
  recipe.accumulation_steps = config.train.gradient_accumulation_steps;
  recipe.scaler = scaler;
  if (network != nullptr) recipe.latents = find_latents(*network);
  return recipe;
}

std::vector<VaeLatent*> find_latents(Module& network) {
  std::vector<VaeLatent*> latents;
  for (Module* module : network.modules()) {
    if (auto* latent = dynamic_cast<VaeLatent*>(module)) latents.push_back(latent);
  }
  return latents;
}

Tensor latent_kl_loss(const std::vector<VaeLatent*>& latents) {
  Tensor total;
  for (const VaeLatent* latent : latents) {
    const Tensor term = latent->kl_loss();
    total = total.defined() ? total + term : term;
  }
  return total;
}

Tensor latent_kl(const std::vector<VaeLatent*>& latents) {
  Tensor total;
  for (const VaeLatent* latent : latents) {
    total = total.defined() ? total + latent->last_kl() : latent->last_kl();
  }
  return total;
}

PassValues forward_backward_pass(const StepRecipe& recipe, const DeviceBatch& batch) {
  Tensor logits;
  Tensor loss;
  {
    const AutocastGuard autocast(recipe.precision);
    logits = recipe.network->forward(batch.features);
    loss = compute_loss(recipe.loss, logits, batch.truth(), recipe.class_count);
    if (!recipe.latents.empty()) loss = loss + latent_kl_loss(recipe.latents);
  }
  const double factor = recipe.loss_weight / static_cast<double>(recipe.accumulation_steps);
  Tensor objective = factor != 1.0 ? loss * factor : loss;
  if (recipe.scaler != nullptr) objective = recipe.scaler->scale(objective);
  objective.backward();
  PassValues values;
  const Tensor value = loss.detach();
  values.weighted_loss = value * static_cast<double>(batch.size());
  if (!recipe.latents.empty()) {
    values.weighted_kl = latent_kl(recipe.latents).detach() * static_cast<double>(batch.size());
  }
  if (!batch.targets.defined()) {  // regression has no accuracy
    values.correct = correct_count(logits.detach(), batch.labels);
  }
  // x * 0 is 0 for a finite x and NaN otherwise, and NaN equals nothing: 1 exactly when finite.
  // Kept on the device like the sums, so that finding the first bad pass costs no host read.
  const Tensor zero = value * 0.0;
  values.finite = equal(zero, zero);
  return values;
}

void add_pass(RunningTotals& totals, const PassValues& values) {
  const auto add = [](Tensor& sum, const Tensor& term) {
    if (term.defined()) sum = sum.defined() ? sum + term : term;
  };
  add(totals.loss_sum, values.weighted_loss);
  add(totals.kl_sum, values.weighted_kl);
  add(totals.correct_sum, values.correct);
  totals.all_finite =
      totals.all_finite.defined() ? totals.all_finite * values.finite : values.finite;
  totals.finite_steps =
      totals.finite_steps.defined() ? totals.finite_steps + totals.all_finite : totals.all_finite;
}

void forward_backward(const StepRecipe& recipe, const DeviceBatch& batch, RunningTotals& totals) {
  add_pass(totals, forward_backward_pass(recipe, batch));
}

Evaluation evaluate(Module& model, const std::vector<DeviceBatch>& batches,
                    const LossSettings& loss, int64_t class_count,
                    const FeatureScaler& target_scaler) {
  const bool was_training = model.is_training();
  model.eval();
  NoGradGuard no_grad;
  Evaluation result;
  result.matrix = ConfusionMatrix(class_count);
  double loss_sum = 0;
  double kl_sum = 0;
  const std::vector<VaeLatent*> latents = find_latents(model);
  int64_t correct = 0;
  std::vector<float> truth;
  std::vector<float> predicted_values;
  for (const DeviceBatch& batch : batches) {
    const Tensor outputs = model.forward(batch.features);
    Tensor batch_loss = compute_loss(loss, outputs, batch.truth(), class_count);
    if (!latents.empty()) {
      batch_loss = batch_loss + latent_kl_loss(latents);
      kl_sum += latent_kl(latents).item() * static_cast<double>(batch.size());
    }
    loss_sum += batch_loss.item() * static_cast<double>(batch.size());
    result.samples += batch.size();
    if (batch.targets.defined()) {
      const std::vector<float> values = unscaled_outputs(outputs, batch, target_scaler);
      const std::vector<float> true_values = unscaled_truth(batch, target_scaler);
      predicted_values.insert(predicted_values.end(), values.begin(), values.end());
      truth.insert(truth.end(), true_values.begin(), true_values.end());
      continue;
    }
    const std::vector<int64_t> predicted = argmax(outputs, 1).to_host_int64();
    result.matrix.add_all(batch.host_labels, predicted);
    for (size_t i = 0; i < predicted.size() && i < batch.host_labels.size(); ++i) {
      correct += predicted[i] == batch.host_labels[i] ? 1 : 0;
    }
  }
  model.train(was_training);
  if (!batches.empty() && batches.front().targets.defined()) {
    result.regression = true;
    result.values = regression_metrics(truth, predicted_values, batches.front().targets.shape()[1]);
  }
  if (result.samples > 0) {
    result.has_kl = !latents.empty();
    result.kl = kl_sum / static_cast<double>(result.samples);
    result.loss = loss_sum / static_cast<double>(result.samples);
    result.accuracy = static_cast<double>(correct) / static_cast<double>(result.samples);
  }
  return result;
}

}  // namespace switchyard::detail
