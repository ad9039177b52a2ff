// Training: a model built from the YAML `model:` section, trained on a data set with the loss,
// optimizer and schedule the file names, with checkpoints that resume exactly.
//
// Nothing here names a backend: the Trainer runs on whatever Device it is given (usually the one
// open_run_device() selected from the configuration). Errors: functions returning Status/Result
// never throw; Trainer's methods are the user-facing API and throw switchyard::Error.
//
// Threads: a Trainer is used by one thread at a time, and its callbacks run on that thread; the
// settings, metrics and summaries are plain values. Two trainers may run at once on different
// threads, on one shared Device (device.h) or on different ones; two that checkpoint to the same
// path each write whole files and the last one written wins (checkpoint.h).
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "switchyard/capture.h"
#include "switchyard/checkpoint.h"
#include "switchyard/config.h"
#include "switchyard/data.h"
#include "switchyard/device.h"
#include "switchyard/init.h"
#include "switchyard/metrics.h"
#include "switchyard/nn.h"
#include "switchyard/optim.h"
#include "switchyard/status.h"

namespace switchyard {

// ---- Device setup
// --------------------------------------------------------------------------------

// The device a run uses, and what the selection had to say about it.
struct RunDevice {
  std::shared_ptr<Device> device;
  std::shared_ptr<Device> fallback_device;  // where unsupported ops run (null: none available)
  std::vector<std::string> warnings;        // fallbacks during selection, for the log
  std::string fallback_note;                // Choice::fallback_note: the device used instead
  std::string note;                         // how the device policy chose (Selection::note)
  std::vector<std::string> environment;     // the SWITCHYARD_* variables applied, "NAME=value"
};

// Applies the SWITCHYARD_* variables unless settings.use_environment is false, discovers plugins
// (SWITCHYARD_PLUGIN_PATH, plugin_paths, the default folders), selects a device per the settings,
// and installs the fallback policy with the runtime's oracle device (see open_oracle_device in
// registry.h) for ops the selected device lacks.
Result<RunDevice> open_run_device(const RuntimeSettings& settings);

// ---- Model
// ---------------------------------------------------------------------------------------

// One entry of `model.layers`, as read from the file.
struct LayerSpec {
  std::string type;          // linear, conv2d, maxpool2d, avgpool2d, dropout, layernorm, relu, ...
  int64_t out_features = 0;  // linear
  int64_t out_channels = 0;  // conv2d
  int kernel_size = 0;       // conv2d, pools
  int stride = 0;            // 0: 1 for conv2d, kernel_size for pools
  int padding = 0;
  int dilation = 1;
  int groups = 1;  // conv2d: divides the input and output channels; = channels is depthwise
  bool bias = true;
  double p = 0.5;     // dropout
  double eps = 1e-5;  // layernorm, batchnorm1d, batchnorm2d, transformer_encoder
  // Sequence layers, on samples shaped [time, features] (data.sample_shape):
  int64_t hidden_size = 0;          // lstm, gru
  int num_layers = 1;               // lstm, gru, transformer_encoder
  bool bidirectional = false;       // lstm, gru
  double dropout = 0.0;             // lstm, gru (between layers), transformer_encoder
  int64_t heads = 1;                // transformer_encoder
  int64_t feedforward = 0;          // transformer_encoder; 0: 4 x d_model
  std::string activation = "relu";  // transformer_encoder: relu or gelu
  bool norm_first = false;          // transformer_encoder
  std::string mode;  // sequence_pool: mean, last, first; positional_encoding: sinusoidal, learned
  int64_t max_len = 0;         // positional_encoding; 0: the sequence length
  int64_t num_embeddings = 0;  // embedding
  int64_t embedding_dim = 0;   // embedding
  int64_t padding_idx = -1;    // embedding; -1: none
  int64_t latent = 0;          // vae_latent: numbers in the code
  double beta = 1.0;           // vae_latent: weight of the KL term in the loss
  // Where the layer is in the YAML file (model.layers[i]), so that errors found while building
  // the model point at it; invalid for a layer made in code.
  ConfigNode node;
};

struct ModelSpec {
  std::vector<LayerSpec> layers;
  // True when the file has no model section: training then uses default_model_layers() and says
  // so. The layers are kept in checkpoints like any others.
  bool is_default = false;
  InitScheme init = InitScheme::kKaimingUniform;
  // Initial weights from a safetensors file (switchyard/safetensors.h) instead of `init`: every
  // parameter by its PyTorch name and shape, nothing missing, nothing extra. Empty: none. A
  // training run's train.resume, if given, takes precedence.
  std::filesystem::path weights;

  static Result<ModelSpec> from_config(const ConfigNode& model_section);
};

// The model a training run uses when the YAML file has no `model:` section: linear(64), relu,
// linear(one output per class). A linear layer with out_features 0 has one output per class.
std::vector<LayerSpec> default_model_layers();
// "linear(64), relu, linear(one output per class)", for the line a run prints.
std::string describe_default_model();

// A model built for a given input: the layers with their inferred sizes.
struct BuiltModel {
  std::shared_ptr<Sequential> network;
  std::vector<Dropout*> dropouts;  // borrowed from `network`, for seeding per step
  std::vector<VaeLatent*>
      latents;  // borrowed from `network`: seeded per step, their KL in the loss
  // A canonical one-line description: input shape, every layer, class count. Two models with the
  // same text have the same parameters (names and shapes).
  std::string architecture;
  uint64_t fingerprint = 0;  // FNV-1a 64 of `architecture`
};

// Builds the layers of `spec` for samples of `sample_shape` ([features] or [C, H, W]); the first
// Linear's in_features and the first Conv2d's in_channels come from the data, and a Flatten is put
// where a Linear follows image-shaped activations. The last layer must produce `class_count`
// outputs (INVALID_ARGUMENT naming the layer otherwise).
Result<BuiltModel> build_model(const ModelSpec& spec, const std::vector<int64_t>& sample_shape,
                               int64_t class_count, InitContext& init);

// ---- Settings
// ------------------------------------------------------------------------------------

// The `loss:` key. cross_entropy needs classes; the others (ops.h) compare the model's outputs with
// regression targets, or with one-hot class labels (mse, as before; bce_with_logits: one
// independent yes/no per output).
enum class LossKind { kCrossEntropy, kMse, kL1, kSmoothL1, kHuber, kBceWithLogits };
Result<LossKind> parse_loss_kind(const std::string& text);  // "cross_entropy", "mse", "l1", ...
const char* loss_kind_name(LossKind kind);

// A loss and its parameters (the `loss_options:` section). Converts from a LossKind, so that code
// naming only the kind keeps the default parameters.
struct LossSettings {
  LossSettings(LossKind loss_kind = LossKind::kCrossEntropy) : kind(loss_kind) {}  // NOLINT
  LossKind kind;
  double beta = 1.0;   // smooth_l1: where the quadratic part ends
  double delta = 1.0;  // huber: where the quadratic part ends, and the linear part's slope
};
enum class OptimizerKind { kSgd, kAdam, kAdamW };
const char* optimizer_kind_name(OptimizerKind kind);  // "sgd", "adam", "adamw"
enum class ScheduleKind { kNone, kStep, kCosine };
enum class ProgressMode { kAuto, kBar, kLog, kNone };

// Without an optimizer section: adam at 0.001, which trains tables, images and sequences alike
// (docs/config.md, "Defaults"); sgd's own default rate is 0.01.
struct OptimizerSettings {
  OptimizerKind kind = OptimizerKind::kAdam;
  double lr = 1e-3;
  double momentum = 0.0;
  bool nesterov = false;
  double weight_decay = 0.0;
  bool weight_decay_given = false;  // AdamW's default (0.01) applies when the file gives none
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
};

struct ScheduleSettings {
  ScheduleKind kind = ScheduleKind::kNone;
  int64_t step_size = 10;
  double gamma = 0.1;
  double min_lr = 0.0;
};

// What "the best epoch" means: a metric of EpochMetrics (train_loss, train_accuracy, val_loss,
// val_accuracy, val_f1_macro; for regression val_rmse, val_mae, val_r2), whether lower or higher
// is better, and by how much a value must
// beat the best so far to count as an improvement (Keras' min_delta).
enum class MonitorMode { kMin, kMax };
struct MonitorSettings {
  std::string metric = "val_loss";
  MonitorMode mode = MonitorMode::kMin;
  double min_delta = 0;
};

// train.early_stopping: stop once the monitored metric has not improved for `patience` epochs.
struct EarlyStoppingSettings {
  bool enabled = false;
  int64_t patience = 0;
  // At the end of the run, put back the weights of the best epoch (Keras' restore_best_weights);
  // otherwise the final weights are the last epoch's. The last checkpoint always holds the last
  // epoch, so that a resumed run continues where this one stopped.
  bool restore_best_weights = false;
};

struct TrainSettings {
  // train.epochs: auto (the default): up to kAutoEpochs, with early stopping on the validation
  // loss (patience kAutoPatience) unless train.early_stopping says otherwise, and a validation
  // split of kAutoValidationFraction when data.validation_fraction is not given.
  static constexpr int64_t kAutoEpochs = 200;
  static constexpr int64_t kAutoPatience = 10;
  static constexpr double kAutoValidationFraction = 0.1;
  int64_t epochs = kAutoEpochs;
  bool epochs_auto = true;
  int64_t batch_size = 64;  // 0 = auto: the largest power of two up to 256 that fits in memory
  int64_t gradient_accumulation_steps = 1;
  std::filesystem::path checkpoint;  // empty (the file says "none" or nothing): no checkpoints
  int64_t checkpoint_every = 1;
  std::filesystem::path resume;  // empty: a fresh run
  // A full checkpoint of the best epoch so far (by `monitor`), rewritten whenever it improves.
  // Empty: none. With early stopping and a checkpoint it defaults to <checkpoint stem>.best<ext>.
  std::filesystem::path best_checkpoint;
  MonitorSettings monitor;  // from train.early_stopping; val_loss (min) otherwise
  EarlyStoppingSettings early_stopping;
  // After the run, the model's parameters as a safetensors file with PyTorch's names and layouts
  // (switchyard/safetensors.h), written like a checkpoint. Empty: none.
  std::filesystem::path export_weights;
  // Mixed precision: bf16 or f16 run matrix products and convolutions in that dtype (autocast.h);
  // parameters, losses and optimizer state stay f32; f16 adds dynamic loss scaling.
  DType precision = DType::kF32;
  int64_t empty_cache_interval = 0;
  ProgressMode progress = ProgressMode::kAuto;
  // Capture and replay of whole training steps (docs/capture.md "Training steps"): per batch
  // shape the forward pass, backward pass and optimizer update are recorded once and replayed for
  // later batches; auto is on where the backend replays natively (vulkan: one submission a step).
  CaptureMode capture = CaptureMode::kAuto;
};

// Data-parallel training (docs/distributed.md): used only when a launcher started several ranks.
struct DistributedSettings {
  double timeout_s = 60;      // a collective that takes longer stops the job, naming the ranks
  double bucket_cap_mb = 25;  // gradient bytes (f32) per allreduce, 1 MB = 10^6 bytes
};

// The task a configuration runs: its `task` key; without one, "predict" when the file has a
// predict section and no data, model or train section (a checkpoint holds everything else), else
// "train". `switchyard run` says which when the file does not.
Result<std::string> configured_task(const Config& config);

// Everything a training run reads from a configuration; relative paths resolved.
struct TrainConfig {
  DataSettings data;
  ModelSpec model;
  LossSettings loss;
  OptimizerSettings optimizer;
  ScheduleSettings schedule;
  TrainSettings train;
  DistributedSettings distributed;
  uint64_t seed = 0;
  bool deterministic = false;
  std::filesystem::path base_dir;  // the YAML file's folder
  std::string config_file;         // the YAML file as given, or "<yaml text>" (for run.json)

  // With task: train (the default), data.dataset and model.layers are required (INVALID_ARGUMENT
  // naming the file and, where the section exists, its line); predict and evaluate take what is
  // missing from the checkpoint.
  static Result<TrainConfig> from_config(const Config& config);
  // The same for a task given by the caller instead of the file ("train", "predict", "evaluate").
  static Result<TrainConfig> for_task(const Config& config, const std::string& task);
};

// ---- Metrics and callbacks ----------------------------------------------------------------------

struct EpochMetrics {
  int64_t epoch = 0;  // 1-based
  double train_loss = 0;
  double train_accuracy = 0;
  double test_loss = 0;
  double test_accuracy = 0;
  // With data.validation_fraction: the validation split's loss, accuracy and macro-averaged F1.
  bool has_validation = false;
  double validation_loss = 0;
  double validation_accuracy = 0;
  double validation_f1_macro = 0;
  // Regression (no accuracy): the test and validation splits' RMSE, MAE and R^2 in the targets'
  // units.
  bool regression = false;
  RegressionMetrics test_values;
  RegressionMetrics validation_values;
  // Models with a vae_latent layer: the KL per sample (unweighted, in nats) on the training batches
  // (sampled z, as trained) and on the test and validation splits (eval mode). The losses above
  // include beta times it.
  bool has_kl = false;
  double train_kl = 0;
  double test_kl = 0;
  double validation_kl = 0;
  double learning_rate = 0;  // used during this epoch
  double epoch_seconds = 0;  // training steps only (evaluation excluded)
  double samples_per_second = 0;
  bool memory_known = false;  // false when the backend reports no memory statistics
  MemoryStats memory;         // device memory at the end of the epoch
  // f16 training only (dynamic loss scaling): optimizer steps skipped in this epoch because a
  // gradient overflowed, and the loss scale at the end of the epoch (0 without loss scaling).
  int64_t skipped_steps = 0;
  double loss_scale = 0;
};

struct RunInfo {
  std::string backend;
  std::string device_id;
  std::string device_name;
  std::string architecture;
  int64_t parameter_count = 0;
  int64_t train_samples = 0;
  int64_t test_samples = 0;
  int64_t validation_samples = 0;  // 0 without data.validation_fraction
  int64_t batch_size = 0;
  // With train.batch_size: auto, the choice and why: "64 (peak ... bytes of a ...-byte cap; 128
  // did not fit: <the allocation error>)". Empty for a batch size the file gives.
  std::string batch_size_choice;
  int64_t first_epoch = 1;  // > 1 after a resume
  int64_t epochs = 0;
  std::string resumed_from;  // the checkpoint, or "" for a fresh run
  int64_t dropped_rows = 0;  // data rows left out for non-finite values (data.non_finite)
  // Data-parallel runs (docs/distributed.md): train.batch_size is per rank, so each optimizer
  // step sees batch_size * ranks samples.
  int ranks = 1;
  int rank = 0;
  std::string communicator;      // "mpi (Open MPI v4.1.4)"; "" for one process
  std::string gradient_buckets;  // "2 buckets (1.05 MB, 0.07 MB)"
  double timeout_s = 0;
};

// One split evaluated with the final weights: loss, accuracy and the per-class report.
struct SplitEvaluation {
  std::string split;  // "test" or "validation"
  double loss = 0;
  double accuracy = 0;
  ClassificationReport report;  // classification only
  bool regression = false;
  RegressionMetrics values;  // regression only: RMSE, MAE, R^2 in the targets' units
  bool has_kl = false;       // models with a vae_latent layer:
  double kl = 0;             // the KL per sample (unweighted), mu and logvar in eval mode
};

// What the monitored metric did over the run (train.early_stopping, train.best_checkpoint).
struct MonitorOutcome {
  std::string metric;      // "" when nothing was monitored
  int64_t best_epoch = 0;  // 0 when no epoch had a value
  double best_value = 0;
  bool stopped_early = false;
  int64_t stopped_epoch = 0;
  std::string stop_message;            // "early stopping at epoch 7: val_loss did not improve ..."
  bool restored_best_weights = false;  // the final weights were put back to the best epoch's
  std::string restore_note;            // why restore_best_weights could not restore, "" otherwise
  int64_t final_weights_epoch = 0;     // the epoch whose weights the model ends the run with
  std::string best_checkpoint;         // the file, once written; "" otherwise
  int64_t best_checkpoint_epoch = 0;
};

struct TrainSummary {
  RunInfo info;
  std::vector<std::string> class_names;
  std::vector<std::string> target_names;  // regression: one per output
  // Regression: simple models fitted on the training part, scored on the test split
  // (PreparedData::baselines), for the run's report beside the model's figures.
  std::vector<BaselineScore> baselines;
  // The test split, then the validation split when there is one, evaluated with the final weights
  // (the last epoch's, or the best epoch's with restore_best_weights).
  std::vector<SplitEvaluation> final_evaluations;
  MonitorOutcome monitor;
  std::vector<EpochMetrics> history;  // every epoch, including those before a resume
  uint64_t peak_device_memory_bytes = 0;
  uint64_t fallback_ops = 0;     // op calls that ran on the fallback device
  int64_t skipped_steps = 0;     // f16 loss scaling: steps skipped for overflow, whole run
  std::string last_checkpoint;   // "" when none was written
  std::string exported_weights;  // train.export, once written; "" otherwise
  // Beside the last checkpoint (rank 0 only; "" without train.checkpoint): history.csv (one row
  // per epoch), curves.svg (loss and metric per epoch) and run.json (what `switchyard report`
  // prints), rewritten after every epoch (run.json at the end of the run).
  std::string history_csv;
  std::string curves_svg;
  std::string run_record;
  bool stopped_by_callback = false;  // TrainCallbacks::should_stop ended the run
  // Signs that the model is not worth keeping, one sentence each with what to change: the loss
  // grew by orders of magnitude in the first epochs, every test prediction is the same class,
  // features differ in scale by more than 100x with data.scale: none. The CLI prints them as
  // "warning: ..." lines, the metrics JSON lists them, Python's run() raises them as
  // switchyard.TrainingWarning.
  std::vector<std::string> warnings;
  // train.capture's account of the run: "off", "eager: <why>", or how many passes were replayed
  // and what each recording holds (StepCapture::summary).
  std::string capture;
};

// Hooks for an embedding application. Each may be empty. They run on the training thread; an
// exception thrown by one stops the run and propagates out of Trainer::run().
struct TrainCallbacks {
  std::function<void(const RunInfo&)> on_run_start;
  std::function<void(const EpochMetrics&)> on_epoch_end;
  std::function<void(const TrainSummary&)> on_run_end;
  // Asked after each epoch, before its checkpoint is written: true ends the run there as if it
  // had no more epochs (the checkpoint is written, the final weights are evaluated and exported)
  // and sets TrainSummary::stopped_by_callback. A progress bar's "stop" button, for instance.
  std::function<bool(const EpochMetrics&)> should_stop;
};

// ---- The trainer
// ---------------------------------------------------------------------------------

class Trainer {
 public:
  // Loads and prepares the data and builds model, optimizer and schedule on `device`; resumes from
  // settings.train.resume when set. Throws Error (e.g. DATA_LOSS for a bad checkpoint).
  Trainer(TrainConfig config, std::shared_ptr<Device> device);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  void add_callbacks(TrainCallbacks callbacks);

  // Trains the remaining epochs. Throws Error; RESOURCE_EXHAUSTED messages name the batch size.
  TrainSummary run();

  Sequential& model();
  const BuiltModel& built_model() const;
  Optimizer& optimizer();
  const PreparedData& data() const;
  int64_t completed_epochs() const;

  // The complete state (model, optimizer, schedule, progress, scaler, history) as a checkpoint.
  Checkpoint make_checkpoint() const;
  // Restores a state made by make_checkpoint(); throws Error on an architecture mismatch.
  void restore(const Checkpoint& checkpoint);

  // The private state (defined in core/src/train/trainer_impl.h); public only as a name, so the
  // implementation files' helper functions can take it.
  struct State;

 private:
  std::unique_ptr<State> state_;
};

// Architecture check shared by Trainer and Predictor: DATA_LOSS/FAILED_PRECONDITION naming both
// architectures when the checkpoint was written for another model.
Status check_architecture(const Checkpoint& checkpoint, const BuiltModel& model);

// Loss of a batch. With integer class labels [N]: cross-entropy on the logits, or the other losses
// against one-hot labels. With float regression targets [N, outputs] (scaled as in training):
// the loss of the outputs against them; cross_entropy is then INVALID_ARGUMENT (thrown).
Tensor compute_loss(const LossSettings& loss, const Tensor& outputs,
                    const Tensor& labels_or_targets, int64_t class_count);

}  // namespace switchyard

#pragma GCC visibility pop
