// The training loop: epochs of shuffled batches, evaluation, checkpoints and callbacks.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <thread>

#include "autograd/engine.h"
#include "data/seeded_random.h"
#include "formats/onnx_export.h"
#include "model/train_state.h"
#include "runtime/file_bytes.h"
#include "switchyard/autocast.h"
#include "switchyard/autograd.h"
#include "switchyard/checkpoint.h"
#include "switchyard/dispatch.h"
#include "switchyard/onnx.h"
#include "switchyard/ops.h"
#include "switchyard/profile.h"
#include "train/batch_search.h"
#include "train/progress.h"
#include "train/run_files.h"
#include "train/trainer_impl.h"

namespace switchyard {
namespace {

// Dropout masks and VAE eps for this pass (detail::seed_random_layers).
void seed_dropouts(Trainer::State& s) {
  detail::seed_random_layers(s.built.dropouts, s.built.latents, s.config.seed,
                             static_cast<uint64_t>(s.micro_steps));
}

struct EpochTotals {
  int64_t skipped_before = 0;  // the loss scaler's skipped-step count when the epoch began
  double loss_sum = 0;
  double kl_sum = 0;  // VAE models: the KL per sample * batch size, summed
  int64_t correct = 0;
  int64_t samples = 0;
  double seconds = 0;
};

void optimizer_step(Trainer::State& s) {
  if (s.scaler) {
    s.scaler->step(*s.optimizer);  // skips the update when a gradient overflowed
  } else {
    s.optimizer->step();
  }
  s.optimizer->zero_grad();
  ++s.optimizer_steps;
}

// What became of the checkpoint file, for the divergence message: the run stops before writing one.
std::string checkpoint_note(const Trainer::State& s) {
  if (s.config.train.checkpoint.empty()) return "";
  const std::string path = s.config.train.checkpoint.string();
  if (s.checkpoint_epoch == 0) return "; the run stopped without writing " + path;
  return "; the last checkpoint, " + path + " (epoch " + std::to_string(s.checkpoint_epoch) +
         "), is kept as it was";
}

// ABORTED for a loss that is NaN or infinite: the weights after such a step are garbage, and
// training on would only spread them (f16 loss scaling skips steps whose scaled gradients
// overflow; the loss itself is f32 and stays finite in those).
Status diverged(const Trainer::State& s, int64_t epoch, const detail::RunningTotals& running,
                int64_t steps) {
  const auto good = static_cast<int64_t>(running.finite_steps.item());
  const std::string at = "epoch " + std::to_string(epoch) + ", step ";
  const std::string what =
      good < steps ? "the loss is not finite (NaN or infinite) at " + at +
                         std::to_string(good + 1) + " of " + std::to_string(steps)
                   : "the sum of the losses overflowed in epoch " + std::to_string(epoch);
  return {StatusCode::kAborted, "training diverged: " + what + checkpoint_note(s)};
}

// x * 0 summed over every parameter: 0 when all are finite, NaN otherwise. One host read.
bool weights_finite(Module& network) {
  const NoGradGuard no_grad;
  Tensor total;
  for (const Tensor& parameter : network.parameters()) {
    const Tensor part = sum(parameter * 0.0);
    total = total.defined() ? total + part : part;
  }
  return !total.defined() || std::isfinite(total.item());
}

// Test-only fault injection (tests/distributed): SWITCHYARD_FAULT_RANK_EXIT=R:K makes rank R
// exit with status 3 before optimizer step K, SWITCHYARD_FAULT_RANK_HANG=R:K makes it sleep there,
// as a crashed or hung rank would, so that the others' failure handling can be tested.
void inject_fault(const Trainer::State& s) {
  for (const char* variable : {"SWITCHYARD_FAULT_RANK_EXIT", "SWITCHYARD_FAULT_RANK_HANG"}) {
    const char* value = std::getenv(variable);
    if (value == nullptr) continue;
    int rank = -1;
    long long step = -1;
    if (std::sscanf(value, "%d:%lld", &rank, &step) != 2) continue;
    if (rank != s.communicator->rank() || step != s.optimizer_steps + 1) continue;
    std::fprintf(stderr, "switchyard: %s: rank %d stops at optimizer step %lld\n", variable, rank,
                 step);
    if (std::string(variable) == "SWITCHYARD_FAULT_RANK_EXIT") std::_Exit(3);
    while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

// This rank's part of a global batch of `count` samples starting at `begin`: the ranks split it
// as evenly as they can, in rank order.
std::pair<int64_t, int64_t> rank_slice(int64_t begin, int64_t count, int rank, int ranks) {
  const int64_t first = begin + count * rank / ranks;
  const int64_t last = begin + count * (rank + 1) / ranks;
  return {first, last - first};
}

// Sums the epoch's running totals over the ranks, so that every rank reports the whole epoch.
void sum_totals_over_ranks(Trainer::State& s, double& loss_sum, double& correct) {
  if (s.communicator->size() == 1) return;
  std::vector<float> values = {static_cast<float>(loss_sum), static_cast<float>(correct)};
  throw_if_error(s.communicator->allreduce_sum_ordered(values, "the sum of the epoch's losses"));
  loss_sum = static_cast<double>(values[0]);
  correct = static_cast<double>(values[1]);
}

EpochTotals train_one_epoch(Trainer::State& s, int64_t epoch, detail::ProgressReporter& progress) {
  const Dataset& train = s.data.split.train;
  const auto order = epoch_permutation(train.sample_count, s.config.seed, epoch);
  // Every rank draws the same order; one optimizer step takes batch_size samples per rank.
  const int ranks = s.communicator->size();
  const int rank = s.communicator->rank();
  const int64_t global_batch = s.batch_size * ranks;
  const int64_t steps = (train.sample_count + global_batch - 1) / global_batch;
  const int64_t accumulate = s.config.train.gradient_accumulation_steps;
  const auto start = std::chrono::steady_clock::now();
  progress.start_epoch(epoch, steps);
  s.built.network->train();
  detail::StepRecipe recipe = detail::make_step_recipe(s.config, s.built.network.get(),
                                                       train.output_count(), s.scaler.get());
  detail::RunningTotals running;
  EpochTotals totals;
  if (s.scaler) totals.skipped_before = s.scaler->skipped_steps();
  for (int64_t step = 0; step < steps; ++step) {
    const ProfileSpan step_span = profile_span("train_step");
    const int64_t global_begin = step * global_batch;
    const int64_t global_count = std::min(global_batch, train.sample_count - global_begin);
    const auto [begin, count] = rank_slice(global_begin, global_count, rank, ranks);
    const bool sync = (step + 1) % accumulate == 0 || step + 1 == steps;
    if (ranks > 1) inject_fault(s);
    // The gradients are averaged over the ranks; a rank's share of an uneven last batch is
    // weighted so that the average is the gradient of the mean loss over the global batch.
    recipe.loss_weight = static_cast<double>(count * ranks) / static_cast<double>(global_count);
    bool stepped = false;  // the step capture ran the optimizer step too
    seed_dropouts(s);
    if (s.reducer && sync) {
      s.reducer->begin_step(1.0 / ranks);
      const LeafGradientReadyScope hook(
          [&s](const Tensor& leaf) { s.reducer->gradient_ready(leaf); });
      if (count > 0) {
        const auto batch =
            detail::gather_batch(train, order.data() + begin, static_cast<size_t>(count), s.device,
                                 s.config.train.precision);
        detail::forward_backward(recipe, batch, running);
      }
      s.reducer->finish_step("epoch " + std::to_string(epoch) + ", step " +
                             std::to_string(step + 1) + " of " + std::to_string(steps));
    } else if (count > 0) {
      const auto batch =
          detail::gather_batch(train, order.data() + begin, static_cast<size_t>(count), s.device,
                               s.config.train.precision);
      if (s.capture->enabled()) {
        // The whole step, optimizer included: eager, recorded or replayed (train.capture).
        s.capture->step(recipe, batch, running, *s.optimizer);
        stepped = true;
      } else {
        detail::forward_backward(recipe, batch, running);
      }
    }
    // The run's very first loss (one wait for the device, once per run): the level that
    // collect_warnings compares the first epochs' losses with.
    if (s.micro_steps == 0 && count > 0 && running.loss_sum.defined()) {
      s.first_step_loss = running.loss_sum.item() / static_cast<double>(count);
    }
    ++s.micro_steps;
    if (stepped) {
      ++s.optimizer_steps;
    } else if (sync) {
      optimizer_step(s);
    }
    progress.step_done(step + 1);
  }
  // Waits for the device, so the time below is complete.
  totals.loss_sum = running.loss_sum.defined() ? running.loss_sum.item() : 0.0;
  double correct = running.correct_sum.defined() ? running.correct_sum.item() : 0.0;
  sum_totals_over_ranks(s, totals.loss_sum, correct);
  if (!std::isfinite(totals.loss_sum)) throw_error(diverged(s, epoch, running, steps));
  if (!weights_finite(*s.built.network)) {
    throw_error({StatusCode::kAborted,
                 "training diverged: the weights are not finite after epoch " +
                     std::to_string(epoch) + ", step " + std::to_string(steps) +
                     " (its last), although every loss was finite" + checkpoint_note(s)});
  }
  // Running statistics (BatchNorm) saw only this rank's samples: every rank takes rank 0's.
  detail::broadcast_model_state(s);
  totals.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  totals.kl_sum = running.kl_sum.defined() ? running.kl_sum.item() : 0.0;
  totals.correct = static_cast<int64_t>(correct);
  totals.samples = train.sample_count;
  return totals;
}

EpochMetrics finish_epoch(Trainer::State& s, int64_t epoch, const EpochTotals& totals, double lr) {
  EpochMetrics m;
  if (s.scaler) {
    m.skipped_steps = s.scaler->skipped_steps() - totals.skipped_before;
    m.loss_scale = s.scaler->scale_value();
  }
  m.epoch = epoch;
  m.learning_rate = lr;
  m.train_loss = totals.loss_sum / static_cast<double>(totals.samples);
  m.train_accuracy = static_cast<double>(totals.correct) / static_cast<double>(totals.samples);
  m.epoch_seconds = totals.seconds;
  m.samples_per_second =
      totals.seconds > 0 ? static_cast<double>(totals.samples) / totals.seconds : 0;
  const ProfileSpan eval_span = profile_span("evaluate");
  const AutocastGuard autocast(s.config.train.precision);
  s.last_test = detail::evaluate_split(s, s.test_batches);
  m.test_loss = s.last_test.loss;
  m.test_accuracy = s.last_test.accuracy;
  m.regression = s.last_test.regression;
  m.test_values = s.last_test.values;
  m.has_kl = s.last_test.has_kl;
  m.train_kl = totals.kl_sum / static_cast<double>(totals.samples);
  m.test_kl = s.last_test.kl;
  if (!s.validation_batches.empty()) {
    s.last_validation = detail::evaluate_split(s, s.validation_batches);
    m.has_validation = true;
    m.validation_loss = s.last_validation->loss;
    m.validation_accuracy = s.last_validation->accuracy;
    m.validation_values = s.last_validation->values;
    m.validation_kl = s.last_validation->kl;
    if (!m.regression) {
      m.validation_f1_macro = classification_report(s.last_validation->matrix).macro.f1;
    }
  }
  if (auto stats = s.device->memory_stats(); stats.ok()) {
    m.memory = *stats;
    m.memory_known = true;
  }
  return m;
}

bool checkpoint_due(const Trainer::State& s, int64_t epoch) {
  if (s.config.train.checkpoint.empty()) return false;
  return epoch % s.config.train.checkpoint_every == 0 || epoch == s.config.train.epochs;
}

// Adds the batch size to RESOURCE_EXHAUSTED errors: it is the knob a user can turn.
[[noreturn]] void rethrow_with_batch_hint(const Error& error, int64_t batch_size) {
  if (error.status().code() != StatusCode::kResourceExhausted) throw error;
  throw_error(detail::with_batch_hint(error.status(), batch_size));
}

RunInfo describe_run(const Trainer::State& s) {
  RunInfo info;
  info.backend = s.device->backend();
  info.device_id = s.device->id();
  info.device_name = s.device->info().name;
  info.architecture = s.built.architecture;
  info.parameter_count = s.built.network->parameter_count();
  info.train_samples = s.data.split.train.sample_count;
  info.test_samples = s.data.split.test.sample_count;
  info.validation_samples = s.data.split.validation.sample_count;
  info.batch_size = s.batch_size;
  info.batch_size_choice = s.batch_size_choice;
  info.first_epoch = s.completed_epochs + 1;
  info.epochs = s.config.train.epochs;
  info.resumed_from = s.resumed_from;
  info.dropped_rows = s.data.dropped_rows;
  info.ranks = s.communicator->size();
  info.rank = s.communicator->rank();
  if (info.ranks > 1) {
    info.communicator = s.communicator->name() + " (" + s.communicator->description() + ")";
    info.gradient_buckets = s.reducer->describe();
    info.timeout_s = s.communicator->timeout_s();
  }
  return info;
}

// One epoch of training and its evaluation; the schedule advances after it.
EpochMetrics train_and_evaluate(Trainer::State& s, int64_t epoch,
                                detail::ProgressReporter& progress) {
  const double lr = s.optimizer->lr();
  EpochMetrics metrics;
  const ProfileSpan epoch_span = profile_span("epoch " + std::to_string(epoch));
  try {
    const EpochTotals totals = train_one_epoch(s, epoch, progress);
    metrics = finish_epoch(s, epoch, totals, lr);
  } catch (const Error& error) {
    rethrow_with_batch_hint(error, s.batch_size);
  }
  if (s.scheduler) s.scheduler->step();
  s.completed_epochs = epoch;
  s.history.push_back(metrics);
  return metrics;
}

// The model and what a checkpoint keeps of the data, for train.export: model.onnx.
detail::OnnxExportSource onnx_source(const Trainer::State& s) {
  detail::OnnxExportSource source;
  source.model = &s.built;
  source.sample_shape = s.data.split.train.sample_shape;
  source.class_names = s.data.split.train.class_names;
  source.target_names = s.data.split.train.target_names;
  source.scaler = s.data.scaler;
  source.target_scaler = s.data.target_scaler;
  source.relative_to_last = s.config.data.series.enabled && s.config.data.series.relative_to_last;
  source.data_description = detail::describe_data(s.config.data);
  if (!s.config.data.series.enabled) {
    source.table_record = detail::table_record_text(s.data.split.train.table, s.config.data);
  }
  return source;
}

// The folder that keeps the run's history.csv, curves.svg and run.json: the checkpoint's; empty
// when this rank writes no files or the run keeps no checkpoint.
std::filesystem::path run_folder(const Trainer::State& s) {
  if (!s.writes_files || s.config.train.checkpoint.empty()) return {};
  const std::filesystem::path folder = s.config.train.checkpoint.parent_path();
  return folder.empty() ? std::filesystem::path(".") : folder;
}

// history.csv and curves.svg as of the last epoch, so that a long run can be watched.
void write_history(const Trainer::State& s) {
  const std::filesystem::path folder = run_folder(s);
  if (folder.empty()) return;
  const std::string title = s.config.config_file + ": " + s.built.architecture;
  throw_if_error(detail::write_history_files(folder, s.history, title));
}

}  // namespace

TrainSummary Trainer::run() {
  State& s = *state_;
  TrainSummary summary;
  summary.info = describe_run(s);
  for (const auto& c : s.callbacks) {
    if (c.on_run_start) c.on_run_start(summary.info);
  }
  (void)s.device->reset_peak_memory();  // a backend without memory statistics has nothing to reset
  const uint64_t fallbacks_before = s.device->fallback_calls();
  detail::ProgressReporter progress(s.config.train.progress, s.config.train.epochs);
  for (int64_t epoch = s.completed_epochs + 1; epoch <= s.config.train.epochs && !s.stopped_early;
       ++epoch) {
    const EpochMetrics metrics = train_and_evaluate(s, epoch, progress);
    summary.peak_device_memory_bytes =
        std::max(summary.peak_device_memory_bytes, metrics.memory.peak_allocated_bytes);
    // This epoch's state, made once for the files that need it (best and last checkpoint).
    std::optional<Checkpoint> current;
    const auto snapshot = [&]() -> const Checkpoint& {
      if (!current) current = make_checkpoint();
      return *current;
    };
    bool stop = monitor_epoch(s, metrics, snapshot);
    for (const auto& c : s.callbacks) {
      if (c.should_stop && c.should_stop(metrics)) summary.stopped_by_callback = true;
    }
    stop = stop || summary.stopped_by_callback;
    if (checkpoint_due(s, epoch) || (stop && !s.config.train.checkpoint.empty())) {
      if (s.writes_files) {
        const Status written = write_checkpoint(s.config.train.checkpoint, snapshot());
        throw_if_error(written.with_context("after epoch " + std::to_string(epoch)));
      }
      s.last_checkpoint = s.config.train.checkpoint.string();
      s.checkpoint_epoch = epoch;
    }
    if (s.config.train.empty_cache_interval > 0 &&
        epoch % s.config.train.empty_cache_interval == 0) {
      (void)s.device->empty_cache();
    }
    write_history(s);
    progress.end_epoch(metrics);
    for (const auto& c : s.callbacks) {
      if (c.on_epoch_end) c.on_epoch_end(metrics);
    }
    if (summary.stopped_by_callback) break;
  }
  finish_monitoring(s, summary);
  collect_warnings(s, summary);
  summary.history = s.history;
  for (const EpochMetrics& m : s.history) summary.skipped_steps += m.skipped_steps;
  summary.fallback_ops = s.device->fallback_calls() - fallbacks_before;
  summary.capture = s.capture->summary();
  summary.last_checkpoint = s.last_checkpoint;
  if (!s.config.train.export_weights.empty() && s.writes_files) {
    const std::filesystem::path& path = s.config.train.export_weights;
    if (is_onnx_path(path)) {
      throw_if_error(detail::write_onnx_model(path, onnx_source(s)).with_context("train.export"));
    } else {
      const Status written = write_safetensors(
          path, detail::export_parameters(s.built, detail::describe_data(s.config.data)));
      throw_if_error(written.with_context("exporting the weights"));
    }
    summary.exported_weights = path.string();
  }
  if (const std::filesystem::path folder = run_folder(s); !folder.empty()) {
    // A resumed run that had already stopped trains no epoch: its files are written here.
    if (summary.info.first_epoch > s.completed_epochs) write_history(s);
    const std::string record = detail::json_text(
        detail::run_record_json(summary, s.config.train, s.config.config_file), 2);
    throw_if_error(detail::write_file_atomically(folder / detail::kRunRecordName,
                                                 std::vector<uint8_t>(record.begin(), record.end()),
                                                 "run record"));
    summary.history_csv = (folder / detail::kHistoryCsvName).string();
    summary.curves_svg = (folder / detail::kCurvesSvgName).string();
    summary.run_record = (folder / detail::kRunRecordName).string();
  }
  for (const auto& c : s.callbacks) {
    if (c.on_run_end) c.on_run_end(summary);
  }
  return summary;
}

}  // namespace switchyard
