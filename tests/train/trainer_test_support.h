// Building small training runs from YAML text for the trainer tests.
#pragma once

#include <sys/resource.h>

#include <csignal>
#include <cstring>
#include <string>
#include <vector>

#include "switchyard/config.h"
#include "switchyard/train.h"
#include "test_support.h"
#include "train/train_test_support.h"

namespace switchyard::testing {

// A breast-cancer MLP with dropout, Adam and a step schedule: small (1 s on the reference
// backend for a few epochs) yet exercising every piece of state a resume must restore.
inline std::string small_run_yaml(int epochs, const std::string& checkpoint,
                                  const std::string& resume = "", int hidden = 16,
                                  const std::string& precision = "f32") {
  std::string text =
      "seed: 3\n"
      "deterministic: true\n"
      "data: {dataset: breast_cancer, test_fraction: 0.2, split_seed: 1, scale: standard}\n"
      "model:\n"
      "  layers:\n"
      "    - {type: linear, out_features: " +
      std::to_string(hidden) +
      "}\n"
      "    - {type: relu}\n"
      "    - {type: dropout, p: 0.3}\n"
      "    - {type: linear, out_features: 2}\n"
      "optimizer: {type: adam, lr: 0.003}\n"
      "schedule: {type: step, step_size: 2, gamma: 0.5}\n"
      "train:\n"
      "  epochs: " +
      std::to_string(epochs) +
      "\n"
      "  batch_size: 48\n"
      "  gradient_accumulation_steps: 2\n"
      "  progress: none\n"
      "  precision: " +
      precision + "\n";
  if (!checkpoint.empty()) text += "  checkpoint: " + checkpoint + "\n";
  if (!resume.empty()) text += "  resume: " + resume + "\n";
  return text;
}

inline TrainConfig train_config_from(const std::string& yaml) {
  use_repository_data();
  const Config config = value_or_throw(Config::load_string(yaml, "test.yaml"));
  return value_or_throw(TrainConfig::from_config(config));
}

// Every parameter's bits, in state_dict order.
inline std::vector<uint32_t> parameter_bits(Module& model) {
  std::vector<uint32_t> bits;
  for (const auto& [name, tensor] : model.state_dict()) {
    for (const float value : tensor.to_host_float()) {
      uint32_t word = 0;
      std::memcpy(&word, &value, sizeof(word));
      bits.push_back(word);
    }
  }
  return bits;
}

// Runs `trainer` with files limited to 1 KiB (less than a checkpoint) from the end of epoch
// `after_epoch` on, SIGXFSZ ignored so a write fails with an error instead of a signal; returns the
// message of the error that ended the run ("" if it finished). The limit is lifted afterwards.
inline std::string run_with_writes_failing_after(Trainer& trainer, int64_t after_epoch) {
  rlimit saved{};
  if (getrlimit(RLIMIT_FSIZE, &saved) != 0) return "getrlimit failed";
  auto* previous_handler = std::signal(SIGXFSZ, SIG_IGN);
  trainer.add_callbacks({nullptr,
                         [&](const EpochMetrics& m) {
                           if (m.epoch != after_epoch) return;
                           rlimit limited = saved;
                           limited.rlim_cur = 1024;
                           setrlimit(RLIMIT_FSIZE, &limited);
                         },
                         nullptr, nullptr});
  std::string message;
  try {
    trainer.run();
  } catch (const Error& error) {
    message = error.status().message();
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, previous_handler);
  return message;
}

}  // namespace switchyard::testing
