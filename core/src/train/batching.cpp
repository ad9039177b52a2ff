#include "train/batching.h"

#include <algorithm>

#include "switchyard/autocast.h"
#include "switchyard/autograd.h"
#include "switchyard/ops.h"

namespace switchyard::detail {

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
  return recipe;
}

void forward_backward(const StepRecipe& recipe, const DeviceBatch& batch, RunningTotals& totals) {
  Tensor logits;
  Tensor loss;
  {
    const AutocastGuard autocast(recipe.precision);
    logits = recipe.network->forward(batch.features);
    loss = compute_loss(recipe.loss, logits, batch.labels, recipe.class_count);
  }
  Tensor objective = recipe.accumulation_steps > 1
                         ? loss * (1.0 / static_cast<double>(recipe.accumulation_steps))
                         : loss;
  if (recipe.scaler != nullptr) objective = recipe.scaler->scale(objective);
  objective.backward();
  const Tensor value = loss.detach();
  const Tensor weighted = value * static_cast<double>(batch.size());
  const Tensor correct = correct_count(logits.detach(), batch.labels);
  totals.loss_sum = totals.loss_sum.defined() ? totals.loss_sum + weighted : weighted;
  totals.correct_sum = totals.correct_sum.defined() ? totals.correct_sum + correct : correct;
  // x * 0 is 0 for a finite x and NaN otherwise, and NaN equals nothing: 1 exactly when finite.
  // Kept on the device like the sums, so that finding the first bad pass costs no host read.
  const Tensor zero = value * 0.0;
  const Tensor finite = equal(zero, zero);
  totals.all_finite = totals.all_finite.defined() ? totals.all_finite * finite : finite;
  totals.finite_steps =
      totals.finite_steps.defined() ? totals.finite_steps + totals.all_finite : totals.all_finite;
}

Evaluation evaluate(Module& model, const std::vector<DeviceBatch>& batches, LossKind loss,
                    int64_t class_count) {
  const bool was_training = model.is_training();
  model.eval();
  NoGradGuard no_grad;
  Evaluation result;
  result.matrix = ConfusionMatrix(class_count);
  double loss_sum = 0;
  int64_t correct = 0;
  for (const DeviceBatch& batch : batches) {
    const Tensor logits = model.forward(batch.features);
    loss_sum += compute_loss(loss, logits, batch.labels, class_count).item() *
                static_cast<double>(batch.size());
    const std::vector<int64_t> predicted = argmax(logits, 1).to_host_int64();
    result.matrix.add_all(batch.host_labels, predicted);
    for (size_t i = 0; i < predicted.size() && i < batch.host_labels.size(); ++i) {
      correct += predicted[i] == batch.host_labels[i] ? 1 : 0;
    }
    result.samples += batch.size();
  }
  model.train(was_training);
  if (result.samples > 0) {
    result.loss = loss_sum / static_cast<double>(result.samples);
    result.accuracy = static_cast<double>(correct) / static_cast<double>(result.samples);
  }
  return result;
}

}  // namespace switchyard::detail
