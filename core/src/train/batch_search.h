// Finding the largest batch that fits in a device's memory, by real trials: training steps
// (forward, loss, backward, gradients kept for the optimizer step) at each candidate size, on the
// run's own data, model and optimizer, measured against the device's cap. Used by
// `train.batch_size: auto` (powers of two) and `switchyard bench batch-size` (the exact size).
//
// A trial does not fit when an allocation fails with RESOURCE_EXHAUSTED; any other error
// propagates. The model's weights and the optimizer's state are left as they were: a trial runs
// no optimizer step and clears the gradients afterwards. It need not: SGD and Adam update in place
// and allocate nothing (their state tensors exist from the optimizer's constructor on), so holding
// the gradients is what the step needs; f16 loss scaling's extra gradient copy is reproduced.
//
// The search assumes memory grows with the batch size. It does, except at a few samples per batch,
// where the test split uploaded in many tiny batches (each a minimum-size block) can outweigh the
// step; under a cap that tight the search may report a size below the largest that fits.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/batching.h"
#include "switchyard/train.h"

namespace switchyard::detail {

// One candidate batch size and what happened.
struct BatchTrial {
  int64_t batch_size = 0;
  bool fits = false;
  uint64_t peak_bytes = 0;  // device peak during the trial (0 when the backend has no statistics)
  std::string error;        // the RESOURCE_EXHAUSTED message when it did not fit
};

struct BatchSearchOptions {
  int64_t max_batch_size = 256;
  // false: the largest power of two up to max_batch_size that fits (what `auto` uses).
  // true: then max_batch_size itself, or a binary search between the largest fitting power of two
  // and the smallest one that does not, for the exact largest batch that fits.
  bool exact = false;
};

struct BatchSearchResult {
  int64_t batch_size = 0;          // the largest batch that fit; 0 when not even one sample did
  uint64_t peak_bytes = 0;         // device peak during that batch's trial (0: unknown)
  bool memory_known = false;       // false when the backend reports no memory statistics
  uint64_t limit_bytes = 0;        // the device's cap (0: none)
  std::vector<BatchTrial> trials;  // in the order they ran

  // The smallest tried batch above batch_size that did not fit; null when none did.
  const BatchTrial* smallest_failure() const;
};

// Runs `trial(n)` for candidate sizes n from max_batch_size down (see BatchSearchOptions). A trial
// that throws Error with RESOURCE_EXHAUSTED does not fit; other errors propagate. The device's peak
// memory is reset before each trial and read after it.
BatchSearchResult search_batch_size(Device& device, const BatchSearchOptions& options,
                                    const std::function<void(int64_t)>& trial);

// What a training-step trial runs on: the run's data, model and optimizer.
struct StepTrialSubject {
  const Dataset* train = nullptr;
  const Dataset* test = nullptr;
  StepRecipe recipe;  // the model and how the loop runs a pass over it (forward_backward)
  Optimizer* optimizer = nullptr;
  std::shared_ptr<Device> device;
  // Where the test split goes, uploaded in batches of the trial's size: a run keeps it on the
  // device next to its training steps. Empty again after the trial.
  std::vector<DeviceBatch>* test_batches = nullptr;
  // The validation split likewise, when the run has one (null or empty: none).
  const Dataset* validation = nullptr;
  std::vector<DeviceBatch>* validation_batches = nullptr;
};

// One trial as the training loop runs: the test split (and the validation split, when there is
// one) uploaded in batches of `batch_size`, then
// two training steps (forward, loss, backward, running sums) on the first `batch_size` training
// samples, the second holding what the loop's later steps hold. Throws Error. Leaves nothing
// allocated: the gradients and the test batches are cleared however it ends.
void run_step_trial(const StepTrialSubject& subject, int64_t batch_size);

// "64 (128 did not fit: <the allocation error>)", "256 (the most auto tries)"...: the chosen size
// and why, for the run's log. `limit_reason` says what bounded the search.
std::string describe_choice(const BatchSearchResult& result, const std::string& limit_reason);

// Adds the batch size and what to do to a RESOURCE_EXHAUSTED status (others come back unchanged):
// the batch size is the knob a user can turn.
Status with_batch_hint(const Status& status, int64_t batch_size);

// The optimizer the settings name, over `params` (its state tensors are allocated here). Defined in
// trainer_setup.cpp; shared with the batch-size bench, which builds what a run builds.
std::unique_ptr<Optimizer> make_optimizer(const OptimizerSettings& settings,
                                          std::vector<Tensor> params);

// What `switchyard bench batch-size` reports about a configuration.
struct ConfigBatchSearch {
  BatchSearchResult result;
  std::string architecture;    // BuiltModel::architecture
  int64_t train_samples = 0;   // the training split
  int64_t max_batch_size = 0;  // the bound searched up to, after clipping to the training split
};

// Prepares the configuration's data, model and optimizer on `device` as a run would, and searches
// with `options`; max_batch_size is clipped to the training split, the most one step of a run
// takes. Throws Error (RESOURCE_EXHAUSTED when the model and optimizer alone do not fit).
ConfigBatchSearch search_config_batch_size(const TrainConfig& config,
                                           const std::shared_ptr<Device>& device,
                                           BatchSearchOptions options);

}  // namespace switchyard::detail
