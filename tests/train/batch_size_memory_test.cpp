// A device memory cap against the batch size, through the CLI on configs/digits-mlp.yaml: a batch
// over the cap fails with exit code 1 and a message naming the sizes, leaving an earlier
// checkpoint intact; `train.batch_size: auto` trains under the same cap with a smaller batch; and
// `bench batch-size` finds a batch B that fits where B + 1 does not, which real runs confirm.
//
// The cap is calibrated per backend (block rounding differs): halfway between the peak device
// memory of a batch of 128 and of 256, each measured by `bench batch-size --max N` without a cap.
// So 256 does not fit and 128 does, on the reference backend and on onednn where it is built.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "backend_support.h"
#include "json_test_support.h"
#include "test_support.h"
#include "train/train_test_support.h"

using namespace switchyard::testing;

using switchyard::testing::contains;
using switchyard::testing::read_text;

namespace {

const std::string kConfig = SWITCHYARD_SOURCE_DIR "/configs/digits-mlp.yaml";

std::vector<std::string> backends() {
  std::vector<std::string> names = {"reference"};
  if (plugin_built("onednn")) {
    names.push_back("onednn");
  } else {
    skip_backend("onednn", "its plugin is not built");  // fails where onednn is required
  }
  return names;
}

// Only this build's plugins, the repository's data, and the one backend under test.
std::string environment(const std::string& backend) {
  return "SWITCHYARD_DATA_DIR=" SWITCHYARD_SOURCE_DIR "/data SWITCHYARD_PLUGIN_PATH=" +
         std::string(SWITCHYARD_TEST_PLUGIN_DIR) + " SWITCHYARD_BACKENDS=" + backend + " ";
}

std::string cap_override(const std::string& backend, uint64_t cap) {
  return " --set backend_options." + backend + ".memory_limit_bytes=" + std::to_string(cap);
}

// `switchyard run` of digits-mlp for one epoch at `batch_size` ("auto" or a number) under `cap`.
CommandResult run_digits(const std::string& backend, uint64_t cap, const std::string& batch_size,
                         const std::string& extra = " --set train.checkpoint=none") {
  return run_command(environment(backend) + cli() + " run " + kConfig +
                     " --set train.epochs=1 --set train.progress=none --set train.batch_size=" +
                     batch_size + cap_override(backend, cap) + extra);
}

Json bench_json(const std::string& backend, const std::string& arguments) {
  const CommandResult result = run_command(environment(backend) + cli() + " bench batch-size " +
                                           kConfig + " --json" + arguments);
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  return parse_json(result.output);
}

// Peak device memory of one trial at `batch_size` with no cap.
uint64_t uncapped_peak(const std::string& backend, int64_t batch_size) {
  const Json json = bench_json(backend, " --max " + std::to_string(batch_size));
  REQUIRE(json.at("batch_size") == batch_size);
  REQUIRE(json.at("memory_known").get<bool>());
  return json.at("peak_bytes").get<uint64_t>();
}

// The calibrated cap of `backend` (see the top of the file), measured once per process.
uint64_t cap_for(const std::string& backend) {
  static std::map<std::string, uint64_t> caps;
  if (caps.count(backend) == 0) {
    const uint64_t p128 = uncapped_peak(backend, 128);
    const uint64_t p256 = uncapped_peak(backend, 256);
    INFO("peaks 128: " << p128 << ", 256: " << p256);
    REQUIRE(p256 > p128);
    caps[backend] = p128 + (p256 - p128) / 2;
  }
  return caps[backend];
}

}  // namespace

TEST_CASE("a batch over the memory cap exits 1 naming the sizes and keeps the checkpoint",
          "[cli][memory]") {
  for (const std::string& backend : backends()) {
    INFO(backend);
    const uint64_t cap = cap_for(backend);
    TempDir dir;
    const auto checkpoint = dir / "run.ckpt";
    const std::string with_checkpoint = " --set train.checkpoint=" + checkpoint.string();
    // An earlier run that fits writes the checkpoint...
    const CommandResult fits = run_digits(backend, cap, "128", with_checkpoint);
    INFO(fits.output);
    REQUIRE(fits.exit_code == 0);
    const std::vector<uint8_t> saved = read_bytes(checkpoint);
    REQUIRE_FALSE(saved.empty());

    // ...and a run whose batch does not fit fails cleanly without touching it.
    const CommandResult over = run_digits(backend, cap, "256", with_checkpoint);
    INFO(over.output);
    CHECK(over.exit_code == 1);  // -1 would be a signal (a crash)
    CHECK(contains(over.output, "switchyard: error: training with batch size 256 does not fit"));
    CHECK(contains(over.output, "lower train.batch_size, or set it to auto"));
    CHECK(contains(over.output, "cannot allocate"));
    CHECK(contains(over.output, "in use"));
    CHECK(contains(over.output, std::to_string(cap) + " bytes"));
    CHECK_FALSE(contains(over.output, "trained "));
    // One paragraph: the error is a single line.
    const size_t error_at = over.output.find("switchyard: error:");
    CHECK(over.output.find('\n', error_at) + 1 == over.output.size());
    CHECK(read_bytes(checkpoint) == saved);
    // No temporary or partial file left behind: the checkpoint and the earlier run's curves.
    const std::set<std::string> kept = {"run.ckpt", "history.csv", "curves.svg", "run.json"};
    size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
      CHECK(kept.count(entry.path().filename().string()) == 1);
      ++files;
    }
    CHECK(files == kept.size());
  }
}

TEST_CASE("batch_size auto trains under the cap a fixed batch exceeds, and says why",
          "[cli][memory]") {
  for (const std::string& backend : backends()) {
    INFO(backend);
    const uint64_t cap = cap_for(backend);
    TempDir dir;
    const CommandResult result =
        run_digits(backend, cap, "auto",
                   " --set train.checkpoint=none --metrics " + (dir / "auto.json").string());
    INFO(result.output);
    REQUIRE(result.exit_code == 0);
    CHECK(contains(result.output, "batch_size auto: 128 (peak "));
    CHECK(contains(result.output, "of a " + std::to_string(cap) + "-byte cap; 256 did not fit: "));
    CHECK(contains(result.output, "(85002 parameters, batch 128)"));
    const Json automatic = read_json_file(dir / "auto.json");
    CHECK(automatic.at("batch_size") == 128);

    // The trials left model and optimizer as they were: the run matches one given batch 128.
    const CommandResult fixed =
        run_digits(backend, cap, "128",
                   " --set train.checkpoint=none --metrics " + (dir / "fixed.json").string());
    REQUIRE(fixed.exit_code == 0);
    CHECK_FALSE(contains(fixed.output, "batch_size auto"));
    const Json given = read_json_file(dir / "fixed.json");
    for (const char* key : {"train_loss", "test_loss", "test_accuracy"}) {
      INFO(key);
      REQUIRE(automatic.contains(key));
      CHECK(automatic.at(key).get<double>() == given.at(key).get<double>());
    }
  }
}

TEST_CASE("bench batch-size finds B that fits where B + 1 does not, as real runs confirm",
          "[cli][memory]") {
  for (const std::string& backend : backends()) {
    INFO(backend);
    const uint64_t cap = cap_for(backend);
    const Json json = bench_json(backend, cap_override(backend, cap));
    CHECK(json.at("limit_bytes") == cap);
    const auto found = json.at("batch_size").get<int64_t>();
    CHECK(found >= 128);
    CHECK(found < 256);
    CHECK(json.at("peak_bytes").get<uint64_t>() <= cap);
    bool found_fits = false;
    bool next_fails = false;
    for (const Json& trial : json.at("trials")) {
      const auto size = trial.at("batch_size").get<int64_t>();
      if (trial.at("fits").get<bool>()) {
        CHECK(size <= found);
        CHECK(trial.at("peak_bytes").get<uint64_t>() <= cap);
        found_fits = found_fits || size == found;
      } else {
        CHECK(size > found);
        CHECK(contains(trial.at("error").get<std::string>(), "cannot allocate"));
        next_fails = next_fails || size == found + 1;
      }
    }
    CHECK(found_fits);
    CHECK(next_fails);
    // The trials are what a run does: B trains under the cap, B + 1 runs out of memory.
    const CommandResult at_found = run_digits(backend, cap, std::to_string(found));
    INFO(at_found.output);
    CHECK(at_found.exit_code == 0);
    const CommandResult above = run_digits(backend, cap, std::to_string(found + 1));
    INFO(above.output);
    CHECK(above.exit_code == 1);
    CHECK(contains(above.output, "batch size " + std::to_string(found + 1) + " does not fit"));
  }
}

TEST_CASE("bench batch-size: exit 1 when not even one sample fits, 2 for bad arguments",
          "[cli][memory]") {
  const std::string backend = "reference";
  // Without momentum the optimizer holds no state: the 85002 f32 parameters (340 KB) fit under
  // 500 KB, but no training step does, since the gradients take as much again.
  const CommandResult none =
      run_command(environment(backend) + cli() + " bench batch-size " + kConfig +
                  " --set optimizer.momentum=0" + cap_override(backend, 500000));
  INFO(none.output);
  CHECK(none.exit_code == 1);
  CHECK(contains(none.output, "batch 1: does not fit"));
  CHECK(contains(none.output, "switchyard: error: not even a batch of 1 sample fits"));

  const std::string bench = environment(backend) + cli() + " bench batch-size ";
  CHECK(run_command(bench).exit_code == 2);
  CHECK(run_command(bench + kConfig + " --max 0").exit_code == 2);
  const CommandResult bad_key = run_command(bench + kConfig + " --set train.batch_size=-3");
  CHECK(bad_key.exit_code == 2);
  CHECK(contains(bad_key.output, "train.batch_size"));
}
