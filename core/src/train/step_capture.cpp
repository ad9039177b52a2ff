#include "train/step_capture.h"

#include <sstream>

#include "data/seeded_random.h"
#include "switchyard/device.h"
#include "switchyard/dispatch.h"

namespace switchyard::detail {

// A recorded call whose parameters each replay sets: a random call's seed (the seed_slot-th of
// the SeedSource's), or the optimizer's update.
struct PatchedCall {
  uint64_t index = 0;
  bool update = false;  // the optimizer's; else random
  size_t seed_slot = 0;
};

struct StepCapture::Entry {
  bool seen = false;
  std::string refused;  // why this shape's steps stay eager
  std::unique_ptr<OpRecording> recording;
  DeviceBatch batch;  // the recorded step's inputs; later batches are copied into them
  PassValues values;  // what the recorded step adds to the totals, rewritten by each replay
  std::vector<PatchedCall> patched;
};

namespace {

std::string signature_of(const DeviceBatch& batch) {
  std::string text = batch.features.shape().to_string() + dtype_name(batch.features.dtype());
  const Tensor& truth = batch.truth();
  return text + "/" + truth.shape().to_string() + dtype_name(truth.dtype());
}

// The values with copies of their tensors: a sum that starts from one must not alias a tensor the
// next replay rewrites.
PassValues copies(const PassValues& values) {
  const auto copy = [](const Tensor& t) { return t.defined() ? t.clone() : Tensor(); };
  return {copy(values.weighted_loss), copy(values.weighted_kl), copy(values.correct),
          copy(values.finite)};
}

// The seed a random call draws with, or nullptr for a call that draws nothing.
uint64_t* drawn_seed(sy_op_call& call) {
  switch (call.op) {
    case SY_OP_RANDOM_UNIFORM:
    case SY_OP_RANDOM_NORMAL:
      return &call.params.random.seed;
    case SY_OP_SCALED_DOT_PRODUCT_ATTENTION:
    case SY_OP_SCALED_DOT_PRODUCT_ATTENTION_BACKWARD:
      return call.params.attention.dropout_p > 0.0 ? &call.params.attention.seed : nullptr;
    default:
      return nullptr;
  }
}

// The calls each replay must patch; a reason in `refused` when a random call's seed is not one
// of `seeds` exactly once.
std::vector<PatchedCall> find_patched_calls(const std::vector<sy_op_call>& calls,
                                            const std::vector<uint64_t>& seeds,
                                            std::string& refused) {
  std::vector<PatchedCall> patched;
  for (uint64_t i = 0; i < calls.size(); ++i) {
    sy_op_call call = calls[i];
    if (call.op == SY_OP_SGD_UPDATE || call.op == SY_OP_ADAM_UPDATE) {
      patched.push_back({i, true, 0});
      continue;
    }
    const uint64_t* seed = drawn_seed(call);
    if (seed == nullptr) continue;
    size_t slot = seeds.size();
    size_t matches = 0;
    for (size_t k = 0; k < seeds.size(); ++k) {
      if (seeds[k] == *seed) {
        slot = k;
        ++matches;
      }
    }
    if (matches != 1) {
      refused = std::string("op ") + op_name(static_cast<sy_op>(call.op)) +
                (matches == 0 ? " draws with a seed that is not one of the model's per-step seeds"
                              : " draws with a seed that two random layers share");
      return {};
    }
    patched.push_back({i, false, slot});
  }
  return patched;
}

}  // namespace

void seed_random_layers(const std::vector<Dropout*>& dropouts,
                        const std::vector<VaeLatent*>& latents, uint64_t seed, uint64_t step) {
  for (size_t i = 0; i < dropouts.size(); ++i) {
    dropouts[i]->set_random_state(derive_seed(seed, kDropoutStream + i, step), 0);
  }
  for (size_t i = 0; i < latents.size(); ++i) {
    latents[i]->set_random_state(derive_seed(seed, kLatentStream + i, step), 0);
  }
}

std::vector<uint64_t> random_layer_seeds(const std::vector<Dropout*>& dropouts,
                                         const std::vector<VaeLatent*>& latents) {
  std::vector<uint64_t> seeds;
  for (const Dropout* dropout : dropouts) seeds.push_back(dropout->seed());
  for (const VaeLatent* latent : latents) seeds.push_back(latent->seed());
  return seeds;
}

StepCapture::StepCapture(CaptureMode mode, std::shared_ptr<Device> device, SeedSource seeds,
                         std::string refused)
    : mode_(mode),
      device_(std::move(device)),
      seeds_(std::move(seeds)),
      refused_(std::move(refused)) {
  enabled_ = steps_captured(mode_, *device_) && refused_.empty();
}

StepCapture::~StepCapture() = default;

void StepCapture::eager_step(const StepRecipe& recipe, const DeviceBatch& batch,
                             RunningTotals& totals, Optimizer& optimizer) {
  forward_backward(recipe, batch, totals);
  optimizer.step();
  optimizer.zero_grad();
  ++eager_steps_;
}

void StepCapture::step(const StepRecipe& recipe, const DeviceBatch& batch, RunningTotals& totals,
                       Optimizer& optimizer) {
  std::unique_ptr<Entry>& slot = entries_[signature_of(batch)];
  if (slot == nullptr) slot = std::make_unique<Entry>();
  Entry& entry = *slot;
  if (!entry.refused.empty() || !entry.seen) {
    entry.seen = true;
    eager_step(recipe, batch, totals, optimizer);
  } else if (entry.recording == nullptr) {
    record(entry, recipe, batch, totals, optimizer);
  } else {
    replay(entry, batch, totals, optimizer);
  }
}

void StepCapture::record(Entry& entry, const StepRecipe& recipe, const DeviceBatch& batch,
                         RunningTotals& totals, Optimizer& optimizer) {
  size_t recordings = 0;
  for (const auto& [signature, other] : entries_) recordings += other->recording != nullptr;
  bool clean = true;
  for (const Tensor& parameter : optimizer.parameters()) {
    clean = clean && !parameter.grad().defined();
  }
  if (recordings >= kMaxRecordings || !clean) {
    entry.refused = !clean ? "the parameters held gradients before the step"
                           : "more than " + std::to_string(kMaxRecordings) + " batch shapes";
    eager_step(recipe, batch, totals, optimizer);
    return;
  }
  entry.batch = batch;  // the gathered tensors become the recording's own inputs
  const std::vector<uint64_t> seeds = seeds_ ? seeds_() : std::vector<uint64_t>{};
  PassValues values;
  std::unique_ptr<OpRecording> recording = OpRecording::record(
      device_,
      [&] {
        values = forward_backward_pass(recipe, entry.batch);
        optimizer.step();
        // Inside: what the pass leaves referenced when it ends stays out of the recording's pool.
        optimizer.zero_grad();
      },
      OpRecording::Options{.patches_random = true});
  ++eager_steps_;  // the recorded step ran eagerly
  std::string refused = recording->reason();
  if (refused.empty()) {
    entry.patched = find_patched_calls(recording->calls(), seeds, refused);
  }
  if (!refused.empty()) {
    entry.refused = refused;
    entry.batch = DeviceBatch{};
    add_pass(totals, values);
    return;
  }
  entry.recording = std::move(recording);
  entry.values = values;
  add_pass(totals, copies(values));
}

void StepCapture::replay(Entry& entry, const DeviceBatch& batch, RunningTotals& totals,
                         Optimizer& optimizer) {
  entry.batch.features.copy_(batch.features);
  entry.batch.labels.copy_(batch.labels);
  if (batch.targets.defined()) entry.batch.targets.copy_(batch.targets);
  const std::vector<uint64_t> seeds = seeds_ ? seeds_() : std::vector<uint64_t>{};
  const auto [update_op, update_params] = optimizer.replayed_step();
  std::vector<CallPatch> patches;
  patches.reserve(entry.patched.size());
  const std::vector<sy_op_call>& calls = entry.recording->calls();
  for (const PatchedCall& p : entry.patched) {
    if (p.update) {
      if (calls[p.index].op != static_cast<uint32_t>(update_op)) {
        throw_error(internal_error("train.capture: the optimizer's update op changed"));
      }
      patches.push_back({p.index, update_params});
      continue;
    }
    sy_op_call call = calls[p.index];
    *drawn_seed(call) = seeds.at(p.seed_slot);
    patches.push_back({p.index, call.params});
  }
  entry.recording->replay(patches);
  add_pass(totals, copies(entry.values));
  ++replayed_steps_;
}

std::string StepCapture::summary() const {
  if (!enabled_) {
    if (!refused_.empty() && mode_ != CaptureMode::kOff) return "eager: " + refused_;
    if (mode_ == CaptureMode::kAuto) {
      return "off (auto: the " + device_->backend() + " plugin has no native capture)";
    }
    return "off";
  }
  std::ostringstream text;
  text << replayed_steps_ << " steps replayed, " << eager_steps_ << " eager";
  for (const auto& [signature, entry] : entries_) {
    if (entry->recording != nullptr) {
      text << "; batch " << signature << " recorded as " << entry->recording->describe();
    } else if (!entry->refused.empty()) {
      text << "; batch " << signature << " eager: " << entry->refused;
    }
  }
  return text.str();
}

}  // namespace switchyard::detail
