// A run whose loss or weights stop being finite (issue 17) stops with ABORTED naming the epoch and
// the step, and never overwrites the last good checkpoint.
#include <catch2/catch.hpp>
#include <limits>

#include "switchyard/checkpoint.h"
#include "train/trainer_test_support.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

// Runs `trainer`, setting the learning rate to `lr` once epoch 1 has ended (and its checkpoint has
// been written); returns the error the run must end with, and the checkpoint's bytes after
// epoch 1 in `after_first`.
Status run_with_lr_after_first_epoch(Trainer& trainer, double lr,
                                     const std::filesystem::path& checkpoint,
                                     std::vector<uint8_t>& after_first) {
  TrainCallbacks raise_lr;
  raise_lr.on_epoch_end = [&](const EpochMetrics& metrics) {
    if (metrics.epoch != 1) return;
    after_first = read_bytes(checkpoint);
    trainer.optimizer().set_lr(lr);
  };
  trainer.add_callbacks(std::move(raise_lr));
  try {
    trainer.run();
  } catch (const Error& error) {
    return error.status();
  }
  FAIL("the run ended normally");
  return ok_status();
}

}  // namespace

TEST_CASE("a non-finite loss stops the run naming epoch and step; the checkpoint is kept",
          "[trainer][divergence]") {
  TempDir dir;
  const auto checkpoint = dir / "run.ckpt";
  Trainer trainer(train_config_from(small_run_yaml(3, checkpoint.string())), reference_device());
  std::vector<uint8_t> after_first;
  const Status status = run_with_lr_after_first_epoch(trainer, 1e30, checkpoint, after_first);
  CHECK(status.code() == StatusCode::kAborted);
  CHECK(status.message() ==
        "training diverged: the loss is not finite (NaN or infinite) at epoch 2, step 3 of 10; "
        "the last checkpoint, " +
            checkpoint.string() + " (epoch 1), is kept as it was");
  CHECK(trainer.completed_epochs() == 1);
  REQUIRE_FALSE(after_first.empty());
  CHECK(read_bytes(checkpoint) == after_first);
  CHECK(value_or_throw(value_or_throw(read_checkpoint(checkpoint)).get_u64("progress/epoch")) == 1);
}

TEST_CASE("weights made non-finite by an epoch's last step stop the run before its checkpoint",
          "[trainer][divergence]") {
  TempDir dir;
  const auto checkpoint = dir / "run.ckpt";
  std::string yaml = small_run_yaml(3, checkpoint.string());
  yaml.replace(yaml.find("batch_size: 48"), 14, "batch_size: 512");  // one step per epoch
  Trainer trainer(train_config_from(yaml), reference_device());
  std::vector<uint8_t> after_first;
  const Status status = run_with_lr_after_first_epoch(
      trainer, std::numeric_limits<double>::infinity(), checkpoint, after_first);
  CHECK(status.code() == StatusCode::kAborted);
  CHECK(status.message() ==
        "training diverged: the weights are not finite after epoch 2, step 1 (its last), although "
        "every loss was finite; the last checkpoint, " +
            checkpoint.string() + " (epoch 1), is kept as it was");
  CHECK(read_bytes(checkpoint) == after_first);
}

TEST_CASE("a run without a checkpoint says so when it diverges", "[trainer][divergence]") {
  TempDir dir;
  Trainer trainer(train_config_from(small_run_yaml(2, "")), reference_device());
  std::vector<uint8_t> unused;
  const Status status = run_with_lr_after_first_epoch(trainer, 1e30, dir / "none", unused);
  CHECK(status.message() ==
        "training diverged: the loss is not finite (NaN or infinite) at epoch 2, step 3 of 10");
}
