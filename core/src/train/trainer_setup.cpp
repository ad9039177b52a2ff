// Building a Trainer: data, model, optimizer, schedule, batch size, and the resume.
#include <algorithm>

#include "switchyard/checkpoint.h"
#include "switchyard/queue.h"
#include "train/trainer_impl.h"

namespace switchyard {
namespace {

constexpr int64_t kAutoBatchLimit = 256;

std::unique_ptr<Optimizer> make_optimizer(const OptimizerSettings& o, std::vector<Tensor> params) {
  if (o.kind == OptimizerKind::kSgd) {
    SgdOptions options;
    options.lr = o.lr;
    options.momentum = o.momentum;
    options.nesterov = o.nesterov;
    options.weight_decay = o.weight_decay;
    return std::make_unique<Sgd>(std::move(params), options);
  }
  AdamOptions options;
  options.lr = o.lr;
  options.beta1 = o.beta1;
  options.beta2 = o.beta2;
  options.epsilon = o.eps;
  options.weight_decay = o.weight_decay;
  if (o.kind == OptimizerKind::kAdam) return std::make_unique<Adam>(std::move(params), options);
  if (!o.weight_decay_given) options.weight_decay = 0.01;
  return std::make_unique<AdamW>(std::move(params), options);
}

std::unique_ptr<LrScheduler> make_scheduler(const ScheduleSettings& s, int64_t epochs,
                                            Optimizer& optimizer) {
  switch (s.kind) {
    case ScheduleKind::kNone:
      return nullptr;
    case ScheduleKind::kStep:
      return std::make_unique<StepLR>(optimizer, s.step_size, s.gamma);
    case ScheduleKind::kCosine:
      return std::make_unique<CosineAnnealingLR>(optimizer, epochs, s.min_lr);
  }
  return nullptr;
}

// One forward and backward pass at `batch_size`, to see whether it fits in device memory.
bool batch_fits(Trainer::State& s, int64_t batch_size) {
  std::vector<int64_t> indices(static_cast<size_t>(batch_size));
  for (int64_t i = 0; i < batch_size; ++i) indices[i] = i;
  try {
    const auto batch = detail::gather_batch(s.data.split.train, indices.data(), indices.size(),
                                            s.device, s.config.train.precision);
    const Tensor logits = s.built.network->forward(batch.features);
    compute_loss(s.config.loss, logits, batch.labels, s.data.split.train.class_count()).backward();
    s.optimizer->zero_grad();
    (void)s.device->default_queue().finish();
    return true;
  } catch (const Error& error) {
    s.optimizer->zero_grad();
    if (error.status().code() == StatusCode::kResourceExhausted) return false;
    throw;
  }
}

// Uploads the test split in batches of the training batch size: evaluation keeps no autograd
// graph, so what fits in training fits here too.
void upload_test_batches(Trainer::State& s) {
  s.test_batches.clear();
  s.test_batches = detail::upload_in_batches(s.data.split.test, s.batch_size, s.device,
                                             s.config.train.precision);
}

// batch_size: auto picks the largest power of two up to 256 (and the training split) whose
// training step fits in device memory next to the uploaded test split.
void choose_batch_size(Trainer::State& s) {
  s.batch_size = 1;
  while (s.batch_size * 2 <= std::min(kAutoBatchLimit, s.data.split.train.sample_count)) {
    s.batch_size *= 2;
  }
  for (; s.batch_size >= 1; s.batch_size /= 2) {
    try {
      upload_test_batches(s);
    } catch (const Error& error) {
      if (error.status().code() != StatusCode::kResourceExhausted) throw;
      continue;
    }
    if (batch_fits(s, s.batch_size)) return;
  }
  throw_error(
      resource_exhausted("train.batch_size auto: even a batch of 1 sample does not fit "
                         "in the memory of " +
                         s.device->id()));
}

}  // namespace

Trainer::Trainer(TrainConfig config, std::shared_ptr<Device> device)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.config = std::move(config);
  s.device = std::move(device);
  if (!s.device) throw_error(invalid_argument("Trainer needs a device"));
  s.data = value_or_throw(prepare_data(s.config.data, s.config.base_dir));
  InitContext init{s.device, s.config.model.init, s.config.seed, 0, s.config.train.precision};
  const Dataset& train = s.data.split.train;
  s.built =
      value_or_throw(build_model(s.config.model, train.sample_shape, train.class_count(), init));
  s.optimizer = make_optimizer(s.config.optimizer, s.built.network->parameters());
  s.scheduler = make_scheduler(s.config.schedule, s.config.train.epochs, *s.optimizer);
  if (!s.config.train.resume.empty()) {
    restore(value_or_throw(read_checkpoint(s.config.train.resume)));
  }
  if (s.batch_size == 0 && s.config.train.batch_size > 0) {
    s.batch_size = s.config.train.batch_size;
  }
  if (s.batch_size > 0) {
    upload_test_batches(s);
  } else {
    choose_batch_size(s);
  }
}

Trainer::~Trainer() = default;

void Trainer::add_callbacks(TrainCallbacks callbacks) {
  state_->callbacks.push_back(std::move(callbacks));
}

Sequential& Trainer::model() {
  return *state_->built.network;
}
const BuiltModel& Trainer::built_model() const {
  return state_->built;
}
Optimizer& Trainer::optimizer() {
  return *state_->optimizer;
}
const PreparedData& Trainer::data() const {
  return state_->data;
}
int64_t Trainer::completed_epochs() const {
  return state_->completed_epochs;
}

}  // namespace switchyard
