// The Trainer: training reaches sensible accuracy, checkpoints restore exactly, resumed runs
// equal uninterrupted ones, and bad checkpoints are refused with clear messages.

#include <catch2/catch.hpp>

#include <set>

#include "switchyard/checkpoint.h"
#include "train/trainer_test_support.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

void check_same_history(const std::vector<EpochMetrics>& a, const std::vector<EpochMetrics>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("epoch " << a[i].epoch);
    CHECK(a[i].epoch == b[i].epoch);
    CHECK(a[i].train_loss == b[i].train_loss);
    CHECK(a[i].train_accuracy == b[i].train_accuracy);
    CHECK(a[i].test_loss == b[i].test_loss);
    CHECK(a[i].test_accuracy == b[i].test_accuracy);
    CHECK(a[i].learning_rate == b[i].learning_rate);
  }
}

}  // namespace

TEST_CASE("training learns the breast cancer data", "[trainer]") {
  Trainer trainer(train_config_from(small_run_yaml(4, "")), reference_device());
  const TrainSummary summary = trainer.run();
  REQUIRE(summary.history.size() == 4);
  CHECK(summary.history.back().test_accuracy > 0.9);
  CHECK(summary.history.back().train_loss < summary.history.front().train_loss);
  // The step schedule halves the rate every two epochs.
  CHECK(summary.history[0].learning_rate == Approx(0.003));
  CHECK(summary.history[2].learning_rate == Approx(0.0015));
  CHECK(summary.info.train_samples + summary.info.test_samples == 569);
}

TEST_CASE("a checkpoint restores bit-identical parameters and optimizer state", "[trainer]") {
  TempDir dir;
  const std::string path = (dir / "run.ckpt").string();
  Trainer trained(train_config_from(small_run_yaml(2, path)), reference_device());
  trained.run();
  Trainer restored(train_config_from(small_run_yaml(2, "", path)), reference_device());
  CHECK(restored.completed_epochs() == 2);
  CHECK(parameter_bits(restored.model()) == parameter_bits(trained.model()));
  const auto a = trained.optimizer().state_dict();
  const auto b = restored.optimizer().state_dict();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].first == b[i].first);
    if (is_floating(a[i].second.dtype())) {
      CHECK(a[i].second.to_host_float() == b[i].second.to_host_float());
    } else {
      CHECK(a[i].second.to_host_int64() == b[i].second.to_host_int64());
    }
  }
  CHECK(restored.optimizer().lr() == trained.optimizer().lr());
  // A fresh model differs, so the equality above is the checkpoint's doing.
  Trainer fresh(train_config_from(small_run_yaml(2, "")), reference_device());
  CHECK(parameter_bits(fresh.model()) != parameter_bits(trained.model()));
}

TEST_CASE("an interrupted and resumed run ends exactly like an uninterrupted one", "[trainer]") {
  TempDir dir;
  const std::string path = (dir / "run.ckpt").string();
  Trainer whole(train_config_from(small_run_yaml(5, "")), reference_device());
  const TrainSummary uninterrupted = whole.run();

  Trainer first_part(train_config_from(small_run_yaml(5, path)), reference_device());
  // Stop after epoch 2 the way a crash would: by leaving the loop from a callback.
  first_part.add_callbacks({nullptr,
                            [](const EpochMetrics& m) {
                              if (m.epoch == 2) throw std::runtime_error("interrupted");
                            },
                            nullptr, nullptr});
  CHECK_THROWS_WITH(first_part.run(), "interrupted");
  CHECK(value_or_throw(read_checkpoint(path)).get_u64("progress/epoch").value() == 2);

  Trainer resumed(train_config_from(small_run_yaml(5, path, path)), reference_device());
  const TrainSummary rest = resumed.run();
  CHECK(rest.info.first_epoch == 3);
  CHECK(rest.info.resumed_from == path);
  check_same_history(rest.history, uninterrupted.history);
  CHECK(parameter_bits(resumed.model()) == parameter_bits(whole.model()));
}

TEST_CASE("a checkpoint of another model is refused naming both architectures", "[trainer]") {
  TempDir dir;
  const std::string path = (dir / "run.ckpt").string();
  Trainer(train_config_from(small_run_yaml(1, path, "", 16)), reference_device()).run();
  try {
    Trainer other(train_config_from(small_run_yaml(2, "", path, 8)), reference_device());
    FAIL("a checkpoint of a 16-unit model was accepted by an 8-unit model");
  } catch (const Error& error) {
    const std::string& message = error.status().message();
    CHECK(error.status().code() == StatusCode::kFailedPrecondition);
    CHECK(message.find(path) != std::string::npos);
    CHECK(message.find("linear(30->16,bias)") != std::string::npos);
    CHECK(message.find("linear(30->8,bias)") != std::string::npos);
  }
}

TEST_CASE("a damaged checkpoint is refused by the trainer with DATA_LOSS", "[trainer]") {
  TempDir dir;
  const auto path = dir / "run.ckpt";
  Trainer(train_config_from(small_run_yaml(1, path.string())), reference_device()).run();
  auto bytes = read_bytes(path);
  SECTION("truncated") {
    bytes.resize(bytes.size() - 100);
  }
  SECTION("a flipped byte") {
    bytes[bytes.size() / 2] ^= 0x04;
  }
  write_bytes(path, bytes);
  try {
    Trainer resumed(train_config_from(small_run_yaml(2, "", path.string())), reference_device());
    FAIL("a damaged checkpoint was accepted");
  } catch (const Error& error) {
    CHECK(error.status().code() == StatusCode::kDataLoss);
    CHECK(error.status().message().find(path.string()) != std::string::npos);
  }
}

TEST_CASE("a checkpoint write that fails mid-run keeps the previous checkpoint", "[trainer]") {
  TempDir dir;
  const auto path = dir / "run.ckpt";
  Trainer trainer(train_config_from(small_run_yaml(3, path.string())), reference_device());
  // After epoch 1 is saved, files may no longer grow past 1 KiB (less than a checkpoint).
  const std::string message = run_with_writes_failing_after(trainer, 1);
  CHECK(message.find("after epoch 2") != std::string::npos);
  CHECK(message.find("cannot write checkpoint") != std::string::npos);
  const Checkpoint kept = value_or_throw(read_checkpoint(path));
  CHECK(kept.get_u64("progress/epoch").value() == 1);
  // No temporary file is left: the checkpoints, and the curves of epoch 1 (train/run_files.h).
  std::set<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    files.insert(entry.path().filename().string());
  }
  CHECK(files == std::set<std::string>{"run.ckpt", "curves.svg", "history.csv"});
}

TEST_CASE("callbacks see the run start, every epoch and the end", "[trainer]") {
  Trainer trainer(train_config_from(small_run_yaml(3, "")), reference_device());
  std::vector<int64_t> epochs;
  std::string backend;
  size_t history_at_end = 0;
  trainer.add_callbacks({[&](const RunInfo& info) { backend = info.backend; },
                         [&](const EpochMetrics& m) { epochs.push_back(m.epoch); },
                         [&](const TrainSummary& s) { history_at_end = s.history.size(); },
                         nullptr});
  trainer.run();
  CHECK(backend == "reference");
  CHECK(epochs == std::vector<int64_t>{1, 2, 3});
  CHECK(history_at_end == 3);
}

TEST_CASE("should_stop ends the run after that epoch, with its checkpoint written", "[trainer]") {
  const TempDir dir;
  const std::string path = (dir.path() / "stopped.ckpt").string();
  Trainer trainer(train_config_from(small_run_yaml(5, path)), reference_device());
  std::vector<int64_t> epochs;
  TrainCallbacks callbacks;
  callbacks.on_epoch_end = [&](const EpochMetrics& m) { epochs.push_back(m.epoch); };
  callbacks.should_stop = [](const EpochMetrics& m) { return m.epoch == 2; };
  trainer.add_callbacks(std::move(callbacks));
  const TrainSummary summary = trainer.run();
  CHECK(summary.stopped_by_callback);
  CHECK(epochs == std::vector<int64_t>{1, 2});
  CHECK(summary.history.size() == 2);
  CHECK_FALSE(summary.final_evaluations.empty());
  CHECK(value_or_throw(read_checkpoint(path)).get_u64("progress/epoch").value() == 2);
}

TEST_CASE("mixed precision trains f32 master weights and an f16 run resumes exactly",
          "[trainer][precision]") {
  for (const std::string precision : {"bf16", "f16"}) {
    INFO(precision);
    TempDir dir;
    const std::string path = (dir / "run.ckpt").string();
    Trainer whole(train_config_from(small_run_yaml(4, "", "", 16, precision)), reference_device());
    const TrainSummary uninterrupted = whole.run();
    for (const auto& [name, tensor] : whole.model().state_dict()) {
      CHECK(tensor.dtype() == DType::kF32);
    }
    CHECK(uninterrupted.history.back().test_accuracy > 0.9);
    if (precision == "f16") {
      CHECK(uninterrupted.history.back().loss_scale > 0);
    } else {
      CHECK(uninterrupted.history.back().loss_scale == 0);
    }

    Trainer first_part(train_config_from(small_run_yaml(4, path, "", 16, precision)),
                       reference_device());
    first_part.add_callbacks({nullptr,
                              [](const EpochMetrics& m) {
                                if (m.epoch == 2) throw std::runtime_error("interrupted");
                              },
                              nullptr, nullptr});
    CHECK_THROWS_WITH(first_part.run(), "interrupted");
    const Checkpoint written = value_or_throw(read_checkpoint(path));
    CHECK(written.contains("amp/loss_scale") == (precision == "f16"));
    Trainer resumed(train_config_from(small_run_yaml(4, path, path, 16, precision)),
                    reference_device());
    const TrainSummary rest = resumed.run();
    check_same_history(rest.history, uninterrupted.history);
    for (size_t i = 0; i < rest.history.size(); ++i) {
      CHECK(rest.history[i].loss_scale == uninterrupted.history[i].loss_scale);
      CHECK(rest.history[i].skipped_steps == uninterrupted.history[i].skipped_steps);
    }
    CHECK(parameter_bits(resumed.model()) == parameter_bits(whole.model()));
  }
}

TEST_CASE("a run without layers says whether model.layers is missing or empty, and where",
          "[trainer]") {
  const std::string data = "data: {dataset: iris}\n";
  // No model section at all: the default model, marked so that the run says so.
  auto absent = Config::load_string(data, "run.yaml");
  REQUIRE(absent.ok());
  const TrainConfig defaulted = value_or_throw(TrainConfig::from_config(*absent));
  CHECK(defaulted.model.is_default);
  REQUIRE(defaulted.model.layers.size() == 3);
  CHECK(defaulted.model.layers[0].out_features == 64);
  CHECK(defaulted.model.layers[2].out_features == 0);
  auto missing = Config::load_string(data + "model: {init: xavier}\n", "run.yaml");
  REQUIRE(missing.ok());
  CHECK(TrainConfig::from_config(*missing).status().message() ==
        "run.yaml: model.layers is missing; training needs a model, e.g. layers: [{type: linear, "
        "out_features: 10}]");
  auto empty = Config::load_string(data + "model:\n  layers: []\n", "run.yaml");
  REQUIRE(empty.ok());
  CHECK(TrainConfig::from_config(*empty).status().message().rfind(
            "run.yaml:3:11: model.layers is empty;", 0) == 0);
}
