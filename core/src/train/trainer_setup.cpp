// Building a Trainer: data, model, optimizer, schedule, batch size, and the resume.
#include <algorithm>

#include "formats/onnx_export.h"
#include "model/train_state.h"
#include "runtime/input_file.h"
#include "switchyard/autograd.h"
#include "switchyard/checkpoint.h"
#include "switchyard/communicator.h"
#include "switchyard/onnx.h"
#include "train/batch_search.h"
#include "train/trainer_impl.h"

namespace switchyard {

std::unique_ptr<Optimizer> detail::make_optimizer(const OptimizerSettings& o,
                                                  std::vector<Tensor> params) {
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

namespace {

constexpr int64_t kAutoBatchLimit = 256;

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

// Uploads the test split (and the validation split, when there is one) in batches of the training
// batch size: evaluation keeps no autograd graph, so what fits in training fits here too.
void upload_test_batches(Trainer::State& s) {
  s.test_batches.clear();
  s.validation_batches.clear();
  try {
    s.test_batches = detail::upload_in_batches(s.data.split.test, s.batch_size, s.device,
                                               s.config.train.precision);
    if (s.data.split.has_validation()) {
      s.validation_batches = detail::upload_in_batches(s.data.split.validation, s.batch_size,
                                                       s.device, s.config.train.precision);
    }
  } catch (const Error& error) {
    throw_error(detail::with_batch_hint(error.status(), s.batch_size));
  }
}

// batch_size: auto picks the largest power of two up to 256 (and the training split) whose
// training steps fit in device memory next to the uploaded test and validation splits, and says
// why.
void choose_batch_size(Trainer::State& s) {
  const int64_t train_samples = s.data.split.train.sample_count;
  detail::BatchSearchOptions options;
  options.max_batch_size = std::min(kAutoBatchLimit, train_samples);
  detail::StepTrialSubject subject;
  subject.train = &s.data.split.train;
  subject.test = &s.data.split.test;
  subject.recipe = detail::make_step_recipe(s.config, s.built.network.get(),
                                            s.data.split.train.output_count(), s.scaler.get());
  subject.optimizer = s.optimizer.get();
  subject.device = s.device;
  subject.test_batches = &s.test_batches;
  subject.validation = &s.data.split.validation;
  subject.validation_batches = &s.validation_batches;
  const detail::BatchSearchResult result = detail::search_batch_size(
      *s.device, options, [&](int64_t batch_size) { detail::run_step_trial(subject, batch_size); });
  if (result.batch_size == 0) {
    throw_error(resource_exhausted(
        "train.batch_size auto: even a batch of 1 sample does not fit in the memory of " +
        s.device->id() + ": " + result.trials.back().error));
  }
  s.batch_size = result.batch_size;
  s.batch_size_choice = detail::describe_choice(
      result, train_samples < kAutoBatchLimit
                  ? "the largest power of two within the " + std::to_string(train_samples) +
                        " training samples"
                  : "auto tries powers of two up to " + std::to_string(kAutoBatchLimit));
  upload_test_batches(s);
}

// The files the run will write must be writable as files: a directory there would otherwise fail
// only after the first epoch.
void check_output_files(const TrainSettings& train) {
  if (!train.checkpoint.empty()) {
    throw_if_error(
        detail::check_output_file(train.checkpoint, "checkpoint").with_context("train.checkpoint"));
  }
  if (!train.best_checkpoint.empty()) {
    throw_if_error(detail::check_output_file(train.best_checkpoint, "checkpoint")
                       .with_context("train.best_checkpoint"));
  }
  if (!train.export_weights.empty()) {
    const char* what = is_onnx_path(train.export_weights) ? "ONNX model" : "weights";
    throw_if_error(
        detail::check_output_file(train.export_weights, what).with_context("train.export"));
  }
}

}  // namespace

namespace detail {

void broadcast_model_state(Trainer::State& s) {
  Communicator& communicator = *s.communicator;
  if (communicator.size() == 1) return;
  const NoGradGuard no_grad;
  std::vector<Tensor> tensors;
  for (const auto& [name, tensor] : s.built.network->state_dict()) tensors.push_back(tensor);
  // One message for every value (as f32, or int64 for integer buffers), then back into place.
  std::vector<float> floats;
  std::vector<int64_t> integers;
  for (const Tensor& tensor : tensors) {
    if (is_floating(tensor.dtype())) {
      const std::vector<float> values = tensor.to_host_float();
      floats.insert(floats.end(), values.begin(), values.end());
    } else {
      const std::vector<int64_t> values = tensor.to_host_int64();
      integers.insert(integers.end(), values.begin(), values.end());
    }
  }
  throw_if_error(communicator.broadcast(std::as_writable_bytes(std::span<float>(floats)), 0,
                                        "the broadcast of rank 0's parameters"));
  if (!integers.empty()) {
    throw_if_error(communicator.broadcast(std::as_writable_bytes(std::span<int64_t>(integers)), 0,
                                          "the broadcast of rank 0's integer buffers"));
  }
  size_t next_float = 0;
  size_t next_integer = 0;
  for (Tensor& tensor : tensors) {
    const auto n = static_cast<size_t>(tensor.numel());
    if (is_floating(tensor.dtype())) {
      const std::vector<float> values(floats.begin() + static_cast<ptrdiff_t>(next_float),
                                      floats.begin() + static_cast<ptrdiff_t>(next_float + n));
      tensor.copy_(Tensor::from_host(values, tensor.shape(), tensor.device(), tensor.dtype()));
      next_float += n;
    } else {
      const std::vector<int64_t> values(
          integers.begin() + static_cast<ptrdiff_t>(next_integer),
          integers.begin() + static_cast<ptrdiff_t>(next_integer + n));
      tensor.copy_(Tensor::from_host(values, tensor.shape(), tensor.device()));
      next_integer += n;
    }
  }
}

}  // namespace detail

namespace {

// With several ranks: one model for all (rank 0's weights), one batch size (rank 0's, should
// train.batch_size: auto differ), gradients averaged in buckets, files and progress from rank 0.
void join_ranks(Trainer::State& s) {
  s.communicator = current_communicator();
  Communicator& communicator = *s.communicator;
  if (communicator.size() == 1) return;
  communicator.set_timeout_s(s.config.distributed.timeout_s);
  s.writes_files = communicator.rank() == 0;
  if (communicator.rank() != 0) s.config.train.progress = ProgressMode::kNone;
  int64_t batch_size = s.batch_size;
  throw_if_error(communicator.broadcast(std::as_writable_bytes(std::span(&batch_size, 1)), 0,
                                        "the broadcast of rank 0's batch size"));
  s.batch_size = batch_size;
  detail::broadcast_model_state(s);
  const auto cap_bytes = static_cast<size_t>(s.config.distributed.bucket_cap_mb * 1e6);
  s.reducer = std::make_unique<detail::GradientReducer>(
      s.communicator, s.built.network->parameters(), cap_bytes, s.config.deterministic);
}

// Why train.capture cannot replay this run's passes; "" when it can.
std::string capture_refusal(const Trainer::State& s) {
  if (s.communicator->size() > 1) {
    return "data-parallel training reduces the gradients between the backward pass and the "
           "optimizer step";
  }
  if (s.config.train.gradient_accumulation_steps > 1) {
    return "train.gradient_accumulation_steps adds several passes' gradients before a step";
  }
  if (s.scaler) return "f16's loss scale changes between steps";
  return "";
}

}  // namespace

Trainer::Trainer(TrainConfig config, std::shared_ptr<Device> device)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.config = std::move(config);
  s.device = std::move(device);
  if (!s.device) throw_error(invalid_argument("Trainer needs a device"));
  check_output_files(s.config.train);
  s.data = value_or_throw(prepare_data(s.config.data, s.config.base_dir));
  // A target of numbers read as a regression (prepare_data's note says so): the settings the
  // checkpoint keeps say so too, so that predict reads the file the same way.
  if (!s.data.detected_regression.empty()) {
    s.config.data.targets = {s.data.detected_regression};
    s.config.data.target.clear();
    s.config.loss = LossSettings(LossKind::kMse);
  }
  // train.epochs: auto on a split too small to spare validation rows (prepare_data's note says
  // so): early stopping watches the training loss instead.
  if (s.config.data.validation_is_default && s.data.split.validation.sample_count == 0 &&
      s.config.train.monitor.metric.rfind("val_", 0) == 0) {
    s.config.data.validation_fraction = 0;
    s.config.train.monitor = MonitorSettings{"train_loss", MonitorMode::kMin, 0};
  }
  // Parameters are f32 master weights whatever the precision; autocast lowers the products.
  InitContext init{s.device, s.config.model.init, s.config.seed, 0, DType::kF32};
  const Dataset& train = s.data.split.train;
  s.built =
      value_or_throw(build_model(s.config.model, train.sample_shape, train.output_count(), init));
  if (!s.config.model.weights.empty()) {
    Result<SafetensorsFile> weights = read_safetensors(s.config.model.weights);
    throw_if_error(weights.status().with_context("model.weights"));
    throw_if_error(detail::import_parameters(*weights, s.config.model.weights.string(), s.built));
  }
  s.optimizer = detail::make_optimizer(s.config.optimizer, s.built.network->parameters());
  s.scheduler = make_scheduler(s.config.schedule, s.config.train.epochs, *s.optimizer);
  if (s.config.train.precision == DType::kF16) s.scaler = std::make_unique<LossScaler>();
  s.monitoring = s.config.train.early_stopping.enabled || !s.config.train.best_checkpoint.empty();
  s.best = detail::BestTracker(s.config.train.monitor);
  if (!s.config.train.resume.empty()) {
    Result<Checkpoint> checkpoint = read_checkpoint(s.config.train.resume);
    throw_if_error(checkpoint.status().with_context("train.resume"));
    restore(*checkpoint);
  }
  if (s.batch_size == 0 && s.config.train.batch_size > 0) {
    s.batch_size = s.config.train.batch_size;
  }
  if (s.batch_size > 0) {
    upload_test_batches(s);
  } else {
    choose_batch_size(s);
  }
  join_ranks(s);
  // The seeds the random layers get before each pass.
  const BuiltModel* built = &s.built;
  auto seeds = [built] { return detail::random_layer_seeds(built->dropouts, built->latents); };
  s.capture = std::make_unique<detail::StepCapture>(s.config.train.capture, s.device,
                                                    std::move(seeds), capture_refusal(s));
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
