// Runtime: what a host application that embeds switchyard holds. A configuration (a YAML file or
// text, with --set style overrides), the device it selects (opened once, on first use, with the
// fallback policy the configuration names), and what runs on that device: training runs and
// predictors. The C API (switchyard.h) and the Python package are thin layers over it.
//
// Errors: every method throws switchyard::Error with the message `switchyard run` would print.
// Threads: a Runtime may be shared by any number of threads. Its device is opened once, under a
// lock, by the first call that needs it; train() calls on one Runtime run one at a time (they
// would write the same checkpoint); everything else runs concurrently. The Predictors it makes
// may be shared too (predict.h), and so may their device (device.h).
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "switchyard/config.h"
#include "switchyard/predict.h"
#include "switchyard/train.h"

namespace switchyard {

class Runtime {
 public:
  // The configuration of a YAML file, or of YAML text whose relative paths resolve against
  // `base_dir`; `overrides` are "dotted.key=value" strings. An empty text is the defaults.
  // INVALID_ARGUMENT naming file, line, column and key for a bad configuration.
  static std::unique_ptr<Runtime> from_file(const std::filesystem::path& path,
                                            const std::vector<std::string>& overrides = {});
  static std::unique_ptr<Runtime> from_yaml(const std::string& text,
                                            const std::filesystem::path& base_dir,
                                            const std::vector<std::string>& overrides = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const Config& config() const;

  // `switchyard devices --json` and `doctor --json` (inventory.h), probed in this process: the
  // CLI probes each plugin in a child process instead, which a threaded host cannot do safely.
  std::string devices_json() const;
  std::string doctor_json() const;

  // The device the configuration selects, opened on first use and kept (SWITCHYARD_* variables
  // and device_policy: local_rank apply). UNAVAILABLE naming every backend's reason when nothing
  // is usable, or with fallback: error when the first choice is not.
  const RunDevice& device();

  // Trains as `switchyard run` does (task train; checkpoints only where train.checkpoint says),
  // without printing: a progress bar only when train.progress asks for one. `progress`, if
  // given, gets each epoch's figures; returning false ends the run after that epoch (its
  // checkpoint is written and the final weights evaluated; metrics say stopped_by_callback).
  // Returns the metrics document `switchyard run --metrics` writes, as JSON text.
  std::string train(const std::function<bool(const EpochMetrics&)>& progress = {});

  // A checkpoint (`switchyard run`'s) or a .safetensors file (its model and data layout from this
  // configuration's model and data sections) ready to predict on device().
  std::unique_ptr<Predictor> load_model(const std::filesystem::path& model);

  // The memory statistics of device(); UNIMPLEMENTED for a backend that keeps none.
  MemoryStats memory_stats();

 private:
  explicit Runtime(Config config);
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace switchyard

#pragma GCC visibility pop
