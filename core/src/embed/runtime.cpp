// Runtime: a configuration, its device and what runs there, for embedding hosts.
#include "switchyard/runtime.h"

#include <mutex>
#include <optional>

#include "switchyard/checkpoint.h"
#include "switchyard/inventory.h"
#include "train/run_metrics.h"

namespace switchyard {

struct Runtime::State {
  explicit State(Config c) : config(std::move(c)) {}
  const Config config;  // never changes after construction: read without a lock
  std::mutex device_mutex;
  std::optional<RunDevice> device;  // set once, under device_mutex, then only read
  std::mutex train_mutex;           // one training run at a time (they share checkpoint paths)
};

Runtime::Runtime(Config config) : state_(std::make_unique<State>(std::move(config))) {}

Runtime::~Runtime() = default;

std::unique_ptr<Runtime> Runtime::from_file(const std::filesystem::path& path,
                                            const std::vector<std::string>& overrides) {
  Config config = value_or_throw(Config::load_file(path, overrides));
  return std::unique_ptr<Runtime>(new Runtime(std::move(config)));
}

std::unique_ptr<Runtime> Runtime::from_yaml(const std::string& text,
                                            const std::filesystem::path& base_dir,
                                            const std::vector<std::string>& overrides) {
  Config config = value_or_throw(Config::load_string(
      text, "<yaml text>", base_dir.empty() ? std::filesystem::path(".") : base_dir, overrides));
  return std::unique_ptr<Runtime>(new Runtime(std::move(config)));
}

const Config& Runtime::config() const {
  return state_->config;
}

std::string Runtime::devices_json() const {
  const RuntimeSettings settings = value_or_throw(state_->config.runtime().with_environment());
  return switchyard::devices_json(take_inventory(settings, /*isolate=*/false));
}

std::string Runtime::doctor_json() const {
  const RuntimeSettings settings = value_or_throw(state_->config.runtime().with_environment());
  return switchyard::doctor_json(take_inventory(settings, /*isolate=*/false), settings);
}

const RunDevice& Runtime::device() {
  const std::lock_guard<std::mutex> lock(state_->device_mutex);
  if (!state_->device) state_->device = value_or_throw(open_run_device(state_->config.runtime()));
  return *state_->device;
}

std::string Runtime::train(const std::function<bool(const EpochMetrics&)>& progress) {
  const std::lock_guard<std::mutex> lock(state_->train_mutex);
  TrainConfig train_config = value_or_throw(TrainConfig::for_task(state_->config, "train"));
  if (train_config.train.progress == ProgressMode::kAuto) {
    train_config.train.progress = ProgressMode::kNone;
  }
  const TrainSettings settings = train_config.train;
  const std::shared_ptr<Device>& run_device = device().device;
  Trainer trainer(std::move(train_config), run_device);
  if (progress) {
    TrainCallbacks callbacks;
    callbacks.should_stop = [&progress](const EpochMetrics& epoch) { return !progress(epoch); };
    trainer.add_callbacks(std::move(callbacks));
  }
  const TrainSummary summary = trainer.run();
  detail::Json metrics =
      detail::device_metrics(*run_device, state_->config.runtime().deterministic, "train");
  detail::add_training_metrics(metrics, summary, settings, *run_device, trainer.model());
  if (!summary.last_checkpoint.empty()) metrics["checkpoint"] = summary.last_checkpoint;
  return detail::json_text(metrics);
}

std::unique_ptr<Predictor> Runtime::load_model(const std::filesystem::path& model) {
  const TrainConfig train_config = value_or_throw(TrainConfig::for_task(state_->config, "predict"));
  if (model.extension() != ".safetensors") {
    const Checkpoint checkpoint = value_or_throw(read_checkpoint(model));
    throw_if_error(check_config_against_checkpoint(state_->config, checkpoint));
  }
  return std::make_unique<Predictor>(train_config, model, device().device);
}

MemoryStats Runtime::memory_stats() {
  return value_or_throw(device().device->memory_stats());
}

}  // namespace switchyard
