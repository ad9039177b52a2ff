// `switchyard run`: exit codes, metrics, predictions, and a run killed with SIGKILL that resumes
// from its last checkpoint to the same final metrics as an uninterrupted run.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include "json_test_support.h"
#include "switchyard/checkpoint.h"
#include "test_support.h"
#include "train/train_test_support.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

void use_test_environment() {
  use_repository_data();
  ::setenv("SWITCHYARD_BACKENDS", "reference", 1);
  ::setenv("SWITCHYARD_PLUGIN_PATH", SWITCHYARD_TEST_PLUGIN_DIR, 1);
}

// A digits MLP: a few tens of milliseconds per epoch on the reference backend.
std::string digits_yaml(int epochs, const std::string& checkpoint) {
  return "seed: 5\n"
         "deterministic: true\n"
         "data: {dataset: digits, test_fraction: 0.2, scale: divide, divisor: 16}\n"
         "model:\n"
         "  layers:\n"
         "    - {type: linear, out_features: 64}\n"
         "    - {type: relu}\n"
         "    - {type: dropout, p: 0.1}\n"
         "    - {type: linear, out_features: 10}\n"
         "optimizer: {type: sgd, lr: 0.05, momentum: 0.9}\n"
         "train:\n"
         "  epochs: " +
         std::to_string(epochs) +
         "\n"
         "  batch_size: 32\n"
         "  progress: log\n" +
         (checkpoint.empty() ? "" : "  checkpoint: " + checkpoint + "\n");
}

// Every value of `key` in a metrics file, in order: the top level's, then each epoch's.
std::vector<Json> metric_values(const Json& metrics, const std::string& key) {
  std::vector<Json> values;
  if (metrics.contains(key)) values.push_back(metrics.at(key));
  for (const Json& epoch : metrics.at("history")) {
    if (epoch.contains(key)) values.push_back(epoch.at(key));
  }
  return values;
}

CommandResult run_cli(const std::string& arguments) {
  return run_command(cli() + " run " + arguments);
}

// Starts `switchyard run config`, waits until `checkpoint` appears, then kills the run with
// SIGKILL. Returns the wait status.
int run_until_first_checkpoint_then_kill(const std::filesystem::path& config,
                                         const std::filesystem::path& checkpoint) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Lowest priority, so the watching test process notices the first checkpoint promptly.
    ::setpriority(PRIO_PROCESS, 0, 19);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execl(SWITCHYARD_CLI, SWITCHYARD_CLI, "run", config.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  while (!std::filesystem::exists(checkpoint)) {
    REQUIRE(::waitpid(child, &status, WNOHANG) == 0);  // still running
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ::kill(child, SIGKILL);
  REQUIRE(::waitpid(child, &status, 0) == child);
  return status;
}

}  // namespace

TEST_CASE("switchyard run trains and writes the metrics file", "[cli]") {
  use_test_environment();
  TempDir dir;
  write_text(dir / "run.yaml", digits_yaml(2, "run.ckpt"));
  const auto result =
      run_cli((dir / "run.yaml").string() + " --metrics " + (dir / "m.json").string());
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  CHECK(result.output.find("backend: reference") != std::string::npos);
  const Json json = read_json_file(dir / "m.json");
  for (const char* key : {"backend", "device", "task", "epochs", "train_loss", "train_accuracy",
                          "test_accuracy", "epoch_seconds_median", "samples_per_second",
                          "peak_device_memory_bytes", "fallback_ops", "history"}) {
    CHECK(json.contains(key));
  }
  CHECK(json.at("epochs") == 2);
  CHECK(json.at("fallback_ops") == 0);
  CHECK(json.at("backend") == "reference");
  CHECK(json.at("history").size() == 2);
  // The checkpoint path in the file is relative to the file's folder.
  CHECK(std::filesystem::exists(dir / "run.ckpt"));

  SECTION("predict writes one row per test sample") {
    write_text(
        dir / "predict.yaml",
        digits_yaml(2, "") + "task: predict\npredict: {checkpoint: run.ckpt, output: p.csv}\n");
    const auto predicted = run_cli((dir / "predict.yaml").string());
    INFO(predicted.output);
    REQUIRE(predicted.exit_code == 0);
    std::ifstream csv(dir / "p.csv");
    std::string header;
    std::getline(csv, header);
    CHECK(header == "line,label,predicted,probability,p_0,p_1,p_2,p_3,p_4,p_5,p_6,p_7,p_8,p_9");
    int rows = 0;
    int correct = 0;
    for (std::string line; std::getline(csv, line);) {
      ++rows;
      std::vector<std::string> fields;
      std::stringstream row(line);
      for (std::string field; std::getline(row, field, ',');) fields.push_back(field);
      REQUIRE(fields.size() == 14);
      // The predicted class is named, with its own probability, the largest of the row's.
      const int predicted_class = std::stoi(fields[2]);
      CHECK(std::stod(fields[3]) == std::stod(fields[4 + predicted_class]));
      for (int c = 0; c < 10; ++c) CHECK(std::stod(fields[4 + c]) <= std::stod(fields[3]));
      correct += fields[1] == fields[2] ? 1 : 0;
    }
    CHECK(rows == 360);
    CHECK(contains(predicted.output, "accuracy " + std::to_string(correct / 360.0).substr(0, 5)));
  }
}

TEST_CASE("train.checkpoint=none switches checkpoints off", "[cli]") {
  use_test_environment();
  TempDir dir;
  write_text(dir / "run.yaml", digits_yaml(1, "run.ckpt"));
  const auto result = run_command("cd " + dir.path().string() + " && " + cli() + " run run.yaml" +
                                  " --set train.checkpoint=none");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  CHECK(contains(result.output,
                 "checkpoint: none (train.checkpoint: none): the trained model is not kept\n"));
  CHECK_FALSE(contains(result.output, "checkpoint: /"));
  CHECK_FALSE(std::filesystem::exists(dir / "run.ckpt"));
  CHECK_FALSE(std::filesystem::exists(dir / "runs"));
  CHECK_FALSE(std::filesystem::exists(dir / "none"));
}

TEST_CASE("switchyard run exit codes: 2 for a bad config, 1 for a failed run", "[cli]") {
  use_test_environment();
  TempDir dir;
  write_text(dir / "run.yaml", digits_yaml(1, ""));
  const auto bad = run_cli((dir / "run.yaml").string() + " --set train.epochs=0");
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("train.epochs") != std::string::npos);

  const auto missing = run_cli((dir / "run.yaml").string() +
                               " --set train.resume=" + (dir / "nowhere.ckpt").string());
  CHECK(missing.exit_code == 1);
  CHECK(missing.output.find("nowhere.ckpt") != std::string::npos);

  write_bytes(dir / "garbage.ckpt", std::vector<uint8_t>(100, 7));
  const auto garbage = run_cli((dir / "run.yaml").string() +
                               " --set train.resume=" + (dir / "garbage.ckpt").string());
  CHECK(garbage.exit_code == 1);
  CHECK(garbage.output.find("garbage.ckpt: not a switchyard checkpoint") != std::string::npos);
}

TEST_CASE("a run killed with SIGKILL resumes to the metrics of an uninterrupted run", "[cli]") {
  use_test_environment();
  TempDir dir;
  constexpr int kEpochs = 12;
  write_text(dir / "run.yaml", digits_yaml(kEpochs, "killed.ckpt"));
  const auto checkpoint = dir / "killed.ckpt";

  const int status = run_until_first_checkpoint_then_kill(dir / "run.yaml", checkpoint);
  CHECK(WIFSIGNALED(status));
  const uint64_t saved_epoch =
      value_or_throw(read_checkpoint(checkpoint)).get_u64("progress/epoch").value();
  REQUIRE(saved_epoch >= 1);
  REQUIRE(saved_epoch < static_cast<uint64_t>(kEpochs));  // killed mid-run

  const auto resumed =
      run_cli((dir / "run.yaml").string() + " --set train.resume=" + checkpoint.string() +
              " --metrics " + (dir / "resumed.json").string());
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  const auto whole = run_cli((dir / "run.yaml").string() +
                             " --set train.checkpoint=" + (dir / "whole.ckpt").string() +
                             " --metrics " + (dir / "whole.json").string());
  REQUIRE(whole.exit_code == 0);

  const Json a = read_json_file(dir / "resumed.json");
  const Json b = read_json_file(dir / "whole.json");
  for (const char* key : {"train_loss", "train_accuracy", "test_loss", "test_accuracy", "epochs"}) {
    INFO(key);
    CHECK(metric_values(a, key) == metric_values(b, key));
    CHECK_FALSE(metric_values(a, key).empty());
  }
  CHECK(a.at("history").size() == static_cast<size_t>(kEpochs));
  // The final weights and optimizer state agree bit for bit.
  const Checkpoint final_resumed = value_or_throw(read_checkpoint(checkpoint));
  const Checkpoint final_whole = value_or_throw(read_checkpoint(dir / "whole.ckpt"));
  CHECK(final_resumed.get_u64("progress/epoch").value() == kEpochs);
  for (const auto& key : final_whole.keys()) {
    if (key.rfind("param/", 0) != 0 && key.rfind("optim/", 0) != 0) continue;
    INFO(key);
    CHECK(final_resumed.get_bytes(key).value() == final_whole.get_bytes(key).value());
  }
}
