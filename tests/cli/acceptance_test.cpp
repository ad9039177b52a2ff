// The issues' acceptance figures, checked through the CLI exactly as a user would run them:
// each shipped training config reaches its test-accuracy threshold on each usable CPU backend.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

#include "acceptance_support.h"

using switchyard::testing::cli;
using switchyard::testing::cli_backend_usable;
using switchyard::testing::entry_with;
using switchyard::testing::Json;
using switchyard::testing::parse_json;
using switchyard::testing::read_json_file;
using switchyard::testing::run_command;

namespace {

struct Run {
  std::string config;
  double threshold;
};

// Trains run.config on `backend` (with extra `--set` overrides) and returns its test accuracy.
double train_and_check(const std::string& backend, const Run& run,
                       const std::string& overrides = "") {
  const std::string metrics =
      "/tmp/switchyard-acceptance-" + std::to_string(::getpid()) + "-" + backend + ".json";
  std::remove(metrics.c_str());
  const std::string command = "SWITCHYARD_BACKENDS=" + backend + " SWITCHYARD_FALLBACK=error " +
                              cli() + " run " + SWITCHYARD_SOURCE_DIR "/configs/" + run.config +
                              " --set train.checkpoint=none --set train.progress=none " +
                              overrides + " --metrics " + metrics;
  auto result = run_command(command);
  INFO(command << "\n" << result.output);
  REQUIRE(result.exit_code == 0);

  const Json json = read_json_file(metrics);
  CHECK(json.at("backend") == backend);
  CHECK(json.at("fallback_ops") == 0);
  const double accuracy = json.at("test_accuracy").get<double>();
  INFO(run.config << " on " << backend << ": test_accuracy " << accuracy);
  CHECK(accuracy >= run.threshold);
  if (overrides.find("precision=f16") != std::string::npos) {
    CHECK(json.at("loss_scale").get<double>() > 0.0);      // the scaler ran
    CHECK(json.at("skipped_steps").is_number_unsigned());  // a count, maybe 0
  }
  return accuracy;
}

}  // namespace

const std::vector<Run> kAllConfigs = {
    {"digits-mlp.yaml", 0.96},   {"digits-cnn.yaml", 0.97},        {"iris-mlp.yaml", 0.93},
    {"iris-species.yaml", 0.93}, {"breast-cancer-mlp.yaml", 0.95}, {"digits-lstm.yaml", 0.95},
    {"digits-gru.yaml", 0.95},   {"digits-transformer.yaml", 0.95}};

// The sequence configs train for one epoch under the sanitizers (minutes each there otherwise).
bool brief_under_sanitizers(const Run& run) {
  return switchyard::testing::kSanitized && run.config.find("digits-") == 0 &&
         run.config != "digits-mlp.yaml" && run.config != "digits-cnn.yaml";
}

TEST_CASE("every shipped training config reaches its threshold on the reference", "[acceptance]") {
  for (const Run& run : kAllConfigs) {
    if (brief_under_sanitizers(run)) {
      train_and_check("reference", {run.config, 0.0}, "--set train.epochs=1");
    } else {
      train_and_check("reference", run);
    }
  }
}

TEST_CASE("every shipped training config reaches its threshold on onednn", "[acceptance]") {
  if (!cli_backend_usable("onednn")) return;
  for (const Run& run : kAllConfigs) train_and_check("onednn", run);
}

// lavapipe runs about 1 GFLOP/s: the MLP (about 30 s) is the acceptance run; the CNN is left out.
TEST_CASE("digits-mlp reaches 0.96 on vulkan", "[acceptance]") {
  if (!cli_backend_usable("vulkan")) return;
  train_and_check("vulkan", {"digits-mlp.yaml", 0.96});
}

// The sequence and regression models on Vulkan are in tests/vulkan/vulkan_acceptance_test.cpp: a
// CTest test of its own, which CI runs beside this one.

// Mixed precision (issue 7): bf16 within one percentage point of f32 on digits-mlp; f16 (with
// dynamic loss scaling) reaches the f32 threshold. The reference runs the low-precision products
// with f32 accumulation and rounding, as docs/ops.md defines them, so it checks the recipe; onednn
// checks the fast path.
TEST_CASE("digits-mlp in bf16 is within 1 point of f32, and f16 trains", "[acceptance]") {
  for (const std::string backend : {"reference", "onednn"}) {
    if (!cli_backend_usable(backend)) continue;
    const Run run{"digits-mlp.yaml", 0.96};
    const double f32 = train_and_check(backend, run, "--set train.precision=f32");
    const double bf16 = train_and_check(backend, run, "--set train.precision=bf16");
    INFO(backend << ": f32 " << f32 << ", bf16 " << bf16);
    CHECK(std::abs(f32 - bf16) <= 0.01);
    train_and_check(backend, run, "--set train.precision=f16");
  }
}

// The regression configs (issue 12) on onednn, whole: tests/cli/regression_cli_test.cpp runs them
// on the reference with their predictions and errors.
TEST_CASE("co2-forecast and diabetes-regression reach their figures on onednn",
          "[acceptance][regression]") {
  if (!cli_backend_usable("onednn")) return;
  using switchyard::testing::baseline_figures;
  using switchyard::testing::train_config_on;
  const Json co2 = train_config_on("onednn", "co2-forecast.yaml", "");
  const double rmse = co2.at("test_rmse").get<double>();
  const double last_value = baseline_figures(co2, "last_value").at("rmse").get<double>();
  INFO("co2-forecast on onednn: test RMSE " << rmse << " ppm, last value " << last_value);
  CHECK(rmse <= 0.45);
  CHECK(rmse < last_value);
  const Json diabetes = train_config_on("onednn", "diabetes-regression.yaml", "");
  INFO("diabetes-regression on onednn: test R^2 " << diabetes.at("test_r2").get<double>());
  CHECK(diabetes.at("test_r2").get<double>() >= 0.40);
}
