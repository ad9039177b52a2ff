// The batch-size search: candidate sizes, one real training step each (see batch_search.h).
#include "train/batch_search.h"

#include <algorithm>
#include <numeric>

#include "switchyard/autocast.h"
#include "switchyard/autograd.h"
#include "switchyard/queue.h"

namespace switchyard::detail {
namespace {

// Runs one trial and records it in `result`; true when it fit.
bool attempt(Device& device, const std::function<void(int64_t)>& trial, int64_t batch_size,
             BatchSearchResult& result) {
  BatchTrial record;
  record.batch_size = batch_size;
  (void)device.reset_peak_memory();  // a backend without statistics has nothing to reset
  try {
    trial(batch_size);
    record.fits = true;
  } catch (const Error& error) {
    if (error.status().code() != StatusCode::kResourceExhausted) throw;
    record.error = error.status().message();
  }
  if (auto stats = device.memory_stats(); stats.ok())
    record.peak_bytes = stats->peak_allocated_bytes;
  if (record.fits && batch_size > result.batch_size) {
    result.batch_size = batch_size;
    result.peak_bytes = record.peak_bytes;
  }
  result.trials.push_back(std::move(record));
  return result.trials.back().fits;
}

// Clears what a trial leaves behind, however it ends.
class TrialCleanup {
 public:
  explicit TrialCleanup(const StepTrialSubject& subject) : subject_(subject) {}
  ~TrialCleanup() {
    subject_.optimizer->zero_grad();
    subject_.test_batches->clear();
    if (subject_.validation_batches != nullptr) subject_.validation_batches->clear();
  }
  TrialCleanup(const TrialCleanup&) = delete;
  TrialCleanup& operator=(const TrialCleanup&) = delete;

 private:
  const StepTrialSubject& subject_;
};

}  // namespace

const BatchTrial* BatchSearchResult::smallest_failure() const {
  const BatchTrial* found = nullptr;
  for (const BatchTrial& t : trials) {
    if (!t.fits && t.batch_size > batch_size && (!found || t.batch_size < found->batch_size)) {
      found = &t;
    }
  }
  return found;
}

BatchSearchResult search_batch_size(Device& device, const BatchSearchOptions& options,
                                    const std::function<void(int64_t)>& trial) {
  BatchSearchResult result;
  if (auto stats = device.memory_stats(); stats.ok()) {
    result.memory_known = true;
    result.limit_bytes = stats->limit_bytes;
  }
  const int64_t max = std::max<int64_t>(1, options.max_batch_size);
  int64_t power = 1;
  while (power <= max / 2) power *= 2;
  // From the top down: with no cap (the common case) the first trial is the answer.
  int64_t smallest_failed = 0;  // 0: nothing failed yet
  for (; power >= 1; power /= 2) {
    if (attempt(device, trial, power, result)) break;
    smallest_failed = power;
  }
  if (result.batch_size == 0 || !options.exact) return result;
  int64_t fits = result.batch_size;
  int64_t fails = smallest_failed;
  if (fails == 0) {  // every power of two up to max fit: max itself, or between the two
    if (fits == max || attempt(device, trial, max, result)) return result;
    fails = max;
  }
  // Invariant: `fits` fit and `fails` did not; both were tried, so the report shows the boundary.
  while (fails - fits > 1) {
    const int64_t middle = fits + (fails - fits) / 2;
    if (attempt(device, trial, middle, result)) {
      fits = middle;
    } else {
      fails = middle;
    }
  }
  return result;
}

void run_step_trial(const StepTrialSubject& s, int64_t batch_size) {
  const TrialCleanup cleanup(s);
  *s.test_batches = upload_in_batches(*s.test, batch_size, s.device, s.recipe.precision);
  if (s.validation != nullptr && s.validation->sample_count > 0) {
    *s.validation_batches =
        upload_in_batches(*s.validation, batch_size, s.device, s.recipe.precision);
  }
  const int64_t count = std::min(batch_size, s.train->sample_count);
  std::vector<int64_t> indices(static_cast<size_t>(count));
  std::iota(indices.begin(), indices.end(), int64_t{0});
  const DeviceBatch batch =
      gather_batch(*s.train, indices.data(), indices.size(), s.device, s.recipe.precision);
  s.recipe.network->train();
  // Two steps, because the loop's later steps hold more than its first: the running loss and
  // accuracy sums, and with accumulation the gradients the step adds to. Between the two, what the
  // optimizer step does to memory: the gradients go (zero_grad) unless they accumulate.
  RunningTotals running;
  for (int step = 0; step < 2; ++step) {
    if (step == 1 && s.recipe.accumulation_steps == 1) s.optimizer->zero_grad();
    forward_backward(s.recipe, batch, running);  // exactly the loop's pass
    // The optimizer step, with this step's tensors still alive as in the loop. SGD and Adam update
    // in place, so the gradients held here are what it needs; loss scaling first replaces each
    // gradient by an unscaled copy, one at a time, so for a moment one gradient exists twice.
    if (step == 1 && s.recipe.scaler != nullptr) {
      const NoGradGuard no_grad;
      for (const Tensor& parameter : s.optimizer->parameters()) {
        const Tensor grad = parameter.grad();
        if (grad.defined()) (void)(grad * 1.0);
      }
    }
  }
  // Errors of queued work surface here rather than in the real run.
  throw_if_error(s.device->default_queue().finish());
}

std::string describe_choice(const BatchSearchResult& result, const std::string& limit_reason) {
  std::string text = std::to_string(result.batch_size) + " (";
  if (result.memory_known && result.batch_size > 0) {
    text += "peak " + std::to_string(result.peak_bytes) + " bytes";
    text += result.limit_bytes != 0 ? " of a " + std::to_string(result.limit_bytes) + "-byte cap"
                                    : ", no memory cap";
    text += "; ";
  }
  if (const BatchTrial* failed = result.smallest_failure()) {
    return text + std::to_string(failed->batch_size) + " did not fit: " + failed->error + ")";
  }
  return text + limit_reason + ")";
}

Status with_batch_hint(const Status& status, int64_t batch_size) {
  if (status.code() != StatusCode::kResourceExhausted) return status;
  return status.with_context(
      "training with batch size " + std::to_string(batch_size) +
      " does not fit in device memory (lower train.batch_size, or set it to auto to use the "
      "largest that fits; gradient_accumulation_steps keeps the effective batch size)");
}

ConfigBatchSearch search_config_batch_size(const TrainConfig& config,
                                           const std::shared_ptr<Device>& device,
                                           BatchSearchOptions options) {
  const PreparedData data = value_or_throw(prepare_data(config.data, config.base_dir));
  const Dataset& train = data.split.train;
  // As Trainer's constructor: f32 master weights whatever the precision, a loss scaler for f16.
  InitContext init{device, config.model.init, config.seed, 0, DType::kF32};
  const BuiltModel built =
      value_or_throw(build_model(config.model, train.sample_shape, train.class_count(), init));
  const std::unique_ptr<Optimizer> optimizer =
      make_optimizer(config.optimizer, built.network->parameters());
  const std::unique_ptr<LossScaler> scaler =
      config.train.precision == DType::kF16 ? std::make_unique<LossScaler>() : nullptr;
  std::vector<DeviceBatch> test_batches;
  StepTrialSubject subject;
  subject.train = &train;
  subject.test = &data.split.test;
  subject.recipe = make_step_recipe(config, built.network.get(), train.class_count(), scaler.get());
  subject.optimizer = optimizer.get();
  subject.device = device;
  subject.test_batches = &test_batches;
  std::vector<DeviceBatch> validation_batches;
  subject.validation = &data.split.validation;
  subject.validation_batches = &validation_batches;

  ConfigBatchSearch search;
  search.architecture = built.architecture;
  search.train_samples = train.sample_count;
  options.max_batch_size = std::min(options.max_batch_size, train.sample_count);
  search.max_batch_size = options.max_batch_size;
  search.result = search_batch_size(
      *device, options, [&](int64_t batch_size) { run_step_trial(subject, batch_size); });
  return search;
}

}  // namespace switchyard::detail
