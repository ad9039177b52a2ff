// Training-step capture (train.capture, docs/capture.md "Training steps"): the trainer's whole
// step on a batch (forward, loss, backward, the batch's loss and correct count, and the optimizer's
// update) recorded once per batch shape and replayed for later batches of that shape: as one
// submission where the backend replays natively (vulkan, cuda), else op by op without the host's
// graph work.
//
// What changes from step to step is given to each replay as parameter patches of the recorded
// calls (OpRecording::replay with CallPatch): the optimizer's learning rate and step count
// (Optimizer::replayed_step) and the seeds of the random calls (dropout masks, a VAE's noise),
// whose per-pass values the trainer sets before every pass. A random call whose seed is not one of
// those the caller lists keeps the step eager, as does anything else a replay cannot repeat (a
// host read). BatchNorm's batch count advances through capture_before_replay. The epoch's sums
// (RunningTotals) are added after each step from copies of the recorded values, since the next
// replay rewrites them.
//
// Per batch shape the first step is eager (it fills the weight caches and the optimizer's state),
// the second recorded, the later ones replayed; summary() says which and why. In deterministic
// mode a replayed step is bit-identical to an eager one: the same calls with the same parameters
// on the same plugin.
//
// Thread safety: one training loop's; not to be shared between threads.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/batching.h"
#include "switchyard/capture.h"
#include "switchyard/optim.h"

namespace switchyard::detail {

// The model's random layers are reseeded before every step: each Dropout's masks and each VAE
// latent layer's eps depend only on (seed, layer, step), with offsets from 0, so that a resumed
// run draws the numbers an uninterrupted one would have drawn and a replayed step can be given
// the step's seeds (random_layer_seeds, a StepCapture's SeedSource).
void seed_random_layers(const std::vector<Dropout*>& dropouts,
                        const std::vector<VaeLatent*>& latents, uint64_t seed, uint64_t step);
// The seeds those layers hold now, dropouts first.
std::vector<uint64_t> random_layer_seeds(const std::vector<Dropout*>& dropouts,
                                         const std::vector<VaeLatent*>& latents);

class StepCapture {
 public:
  // The seeds the model's random layers hold for the coming pass, in a fixed order (the trainer
  // sets them before each pass).
  using SeedSource = std::function<std::vector<uint64_t>()>;

  // `refused`: why this run's steps cannot be recorded at all ("" when they can); they then stay
  // eager and summary() says why.
  StepCapture(CaptureMode mode, std::shared_ptr<Device> device, SeedSource seeds,
              std::string refused);
  ~StepCapture();
  StepCapture(const StepCapture&) = delete;
  StepCapture& operator=(const StepCapture&) = delete;

  // Whether steps are recorded and replayed at all (mode on, or auto on a native backend, and
  // nothing refused for the whole run). When not, the caller runs its steps itself.
  bool enabled() const { return enabled_; }

  // One step: forward_backward(recipe, batch, totals), optimizer.step() and
  // optimizer.zero_grad(), run eagerly, recorded or replayed. The parameters' grad() must be
  // undefined before (one pass per step).
  void step(const StepRecipe& recipe, const DeviceBatch& batch, RunningTotals& totals,
            Optimizer& optimizer);

  // For the run's report: "off ...", "eager: <why>", or what was replayed ("118 steps replayed,
  // 4 eager; batch [64, 64]f32/[64]i32 recorded as 31 ops (holding 1.2 MiB; captured
  // natively)").
  std::string summary() const;

  // The most batch shapes recorded at once (a training run has two: the batch and the last,
  // smaller one); steps of further shapes stay eager.
  static constexpr size_t kMaxRecordings = 4;

 private:
  struct Entry;
  void eager_step(const StepRecipe& recipe, const DeviceBatch& batch, RunningTotals& totals,
                  Optimizer& optimizer);
  void record(Entry& entry, const StepRecipe& recipe, const DeviceBatch& batch,
              RunningTotals& totals, Optimizer& optimizer);
  void replay(Entry& entry, const DeviceBatch& batch, RunningTotals& totals, Optimizer& optimizer);

  CaptureMode mode_;
  std::shared_ptr<Device> device_;
  SeedSource seeds_;
  bool enabled_ = false;
  std::string refused_;  // for the whole run
  std::map<std::string, std::unique_ptr<Entry>> entries_;
  int64_t eager_steps_ = 0;
  int64_t replayed_steps_ = 0;
};

}  // namespace switchyard::detail
