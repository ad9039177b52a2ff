// Trainers on several threads at once (train.h, "Threads"): each trains as it would alone, on one
// shared device, and the two that checkpoint to one path leave a whole checkpoint of one of them.
#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "switchyard/checkpoint.h"
#include "switchyard/train.h"
#include "tensor/tensor_test_support.h"
#include "train/trainer_test_support.h"

namespace switchyard {
namespace {

using testing::parameter_bits;
using testing::small_run_yaml;
using testing::test_device;
using testing::train_config_from;

TEST_CASE("trainers on four threads share a device and each trains as it would alone",
          "[threads][train]") {
  const testing::TempDir dir;
  const std::shared_ptr<Device> device = test_device();
  std::vector<uint32_t> expected;
  {
    Trainer trainer(train_config_from(small_run_yaml(3, (dir / "alone.ckpt").string())), device);
    trainer.run();
    expected = parameter_bits(trainer.model());
  }
  REQUIRE_FALSE(expected.empty());
  // Threads 2 and 3 checkpoint to the same file.
  const std::vector<std::string> checkpoints = {"a.ckpt", "b.ckpt", "shared.ckpt", "shared.ckpt"};
  const std::vector<TrainConfig> configs = [&] {
    std::vector<TrainConfig> made;
    for (const std::string& name : checkpoints) {
      made.push_back(train_config_from(small_run_yaml(3, (dir / name).string())));
    }
    return made;
  }();
  std::vector<std::string> problems(configs.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < configs.size(); ++t) {
    threads.emplace_back([&, t] {
      try {
        Trainer trainer(configs[t], device);
        trainer.run();
        if (parameter_bits(trainer.model()) != expected) problems[t] = "other weights";
      } catch (const std::exception& e) {
        problems[t] = e.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (size_t t = 0; t < problems.size(); ++t) {
    INFO("thread " << t);
    CHECK(problems[t] == "");
  }
  for (const char* name : {"a.ckpt", "b.ckpt", "shared.ckpt"}) {
    INFO(name);
    CHECK(read_checkpoint(dir / name).ok());
  }
}

}  // namespace
}  // namespace switchyard
