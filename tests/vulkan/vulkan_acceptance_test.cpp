// Issue 12's acceptance figures on Vulkan (Mesa's lavapipe in CI, about 1 GFLOP/s and a fraction
// of a millisecond per dispatch), through the CLI as a user runs the shipped configs. A CTest test
// of their own (tests/CMakeLists.txt: vulkan_acceptance_recurrent, _transformer and _regression, by
// tag), so that CI runs these long trainings beside test_cli and each other.
//
// Which runs are whole, and why the others are shortened (figures measured on lavapipe, 2 shared
// AMD EPYC cores; docs/layers.md has them):
// - digits-lstm, digits-gru (about 3 minutes together) and diabetes-regression (seconds) train
//   whole and must reach their thresholds;
// - digits-transformer takes 15-18 s an epoch (4-5 minutes whole; it reached 0.983): it trains its
//   first 8 of 15 epochs, which must already reach the whole run's threshold, 0.95 (the reference
//   and onednn train it whole in test_cli);
// - co2-forecast's LSTM runs 52 steps of small ops per batch, about 60,000 dispatches an epoch:
//   45-60 s an epoch, 30-40 minutes whole, too long for CI. Its first 2 epochs run on Vulkan and
//   on the reference, which must agree closely (the same seeds, data and updates: Vulkan trains
//   what the reference trains); the reference and onednn train it whole to the threshold in
//   test_cli.
#include <catch2/catch.hpp>

#include <cmath>

#include "acceptance_support.h"

using namespace switchyard::testing;

namespace {

// Skips (with the reason) where lavapipe or another Vulkan device is not usable, or fails there
// where vulkan is required (tests/backend_support.h).
bool vulkan_usable() {
  return cli_backend_usable("vulkan");
}

double test_accuracy(const std::string& config, const std::string& overrides = "") {
  const Json metrics = train_config_on("vulkan", config, overrides);
  const double accuracy = metrics.at("test_accuracy").get<double>();
  INFO(config << " " << overrides << " on vulkan: test accuracy " << accuracy);
  return accuracy;
}

}  // namespace

TEST_CASE("digits-lstm and digits-gru reach 0.95 on vulkan", "[vulkan][acceptance][recurrent]") {
  if (!vulkan_usable()) return;
  CHECK(test_accuracy("digits-lstm.yaml") >= 0.95);
  CHECK(test_accuracy("digits-gru.yaml") >= 0.95);
}

TEST_CASE("digits-transformer reaches 0.95 on vulkan within 8 of its 15 epochs",
          "[vulkan][acceptance][transformer]") {
  if (!vulkan_usable()) return;
  CHECK(test_accuracy("digits-transformer.yaml", "--set train.epochs=8") >= 0.95);
}

TEST_CASE("diabetes-regression reaches R^2 0.40 on vulkan", "[vulkan][acceptance][regression]") {
  if (!vulkan_usable()) return;
  const Json metrics = train_config_on("vulkan", "diabetes-regression.yaml", "");
  const double r2 = metrics.at("test_r2").get<double>();
  const double linear = baseline_figures(metrics, "linear_least_squares").at("r2").get<double>();
  INFO("test R^2 " << r2 << ", least squares " << linear);
  CHECK(r2 >= 0.40);
}

TEST_CASE("co2-forecast's first 2 epochs on vulkan follow the reference's",
          "[vulkan][acceptance][regression]") {
  if (!vulkan_usable()) return;
  const std::string brief = "--set train.epochs=2";
  const Json vulkan = train_config_on("vulkan", "co2-forecast.yaml", brief);
  const Json reference = train_config_on("reference", "co2-forecast.yaml", brief);
  const Json& vulkan_epochs = vulkan.at("history");
  const Json& reference_epochs = reference.at("history");
  REQUIRE(vulkan_epochs.size() == 2);
  REQUIRE(reference_epochs.size() == 2);
  for (size_t epoch = 0; epoch < 2; ++epoch) {
    for (const char* figure : {"train_loss", "test_rmse"}) {
      const double on_vulkan = vulkan_epochs[epoch].at(figure).get<double>();
      const double on_reference = reference_epochs[epoch].at(figure).get<double>();
      INFO("epoch " << epoch + 1 << " " << figure << ": vulkan " << on_vulkan << ", reference "
                    << on_reference);
      CHECK(std::isfinite(on_vulkan));
      CHECK(on_vulkan == Approx(on_reference).epsilon(1e-3));
    }
  }
  // The same weeks: the baseline does not depend on the backend.
  CHECK(baseline_figures(vulkan, "last_value").at("rmse").get<double>() ==
        Approx(baseline_figures(reference, "last_value").at("rmse").get<double>()));
}
