// Weights leave switchyard in a form other tools read: `train.export` writes a safetensors file
// that a standard-library Python reader parses and evaluates (names, PyTorch layouts, values:
// the same probabilities as `switchyard run` predicts), and, where
// Debian's python3-torch is installed, PyTorch loads into the same nn.Sequential with
// strict=True and computes the probabilities `switchyard run` predicted.
#include <catch2/catch.hpp>

#include <filesystem>
#include <limits>

#include "backend_support.h"
#include "test_support.h"

using switchyard::testing::cli;
using switchyard::testing::contains;
using switchyard::testing::run_command;

namespace {

const std::string kPython = "/usr/bin/python3";
const std::string kPeer = std::string(SWITCHYARD_SOURCE_DIR) + "/tests/cli/safetensors_peer.py";

// The peer's "max_abs_diff X" between its probabilities and our predictions file, which prints 6
// significant digits (and the frameworks sum in different orders): a bound of 2e-6 holds when
// names, layouts and values all agree. Infinity when the line is missing.
double max_abs_diff(const std::string& output) {
  const auto at = output.find("max_abs_diff ");
  return at == std::string::npos ? std::numeric_limits<double>::infinity()
                                 : std::stod(output.substr(at + 13));
}

}  // namespace

TEST_CASE("exported weights are read by other tools as the model switchyard trained",
          "[cli][safetensors]") {
  const std::filesystem::path dir = "/tmp/switchyard-safetensors-interop";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string weights = (dir / "digits.safetensors").string();
  const std::string checkpoint = (dir / "digits.ckpt").string();
  const std::string config = std::string(SWITCHYARD_SOURCE_DIR) + "/configs/digits-mlp.yaml";
  // `switchyard run` predicting `input_csv`'s rows from `weights_file` (a checkpoint or a
  // .safetensors file) into `output`.
  auto predict = [&](const std::string& weights_file, const std::string& input_csv,
                     const std::string& output, const std::string& extra = "") {
    return run_command("SWITCHYARD_BACKENDS=reference " + cli() + " run " + config +
                       " --set task=predict --set predict.checkpoint=" + weights_file +
                       " --set predict.input=" + input_csv + " --set predict.output=" + output +
                       extra);
  };
  auto trained =
      run_command("SWITCHYARD_BACKENDS=reference " + cli() + " run " + config +
                  " --set train.epochs=2 --set train.progress=none" +
                  " --set train.checkpoint=" + checkpoint + " --set train.export=" + weights);
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  CHECK(contains(trained.output, "weights: " + weights + " (safetensors)"));

  if (!std::filesystem::exists(kPython)) {
    switchyard::testing::skip_test(kPython + " is not installed");
    return;
  }
  auto header = run_command(kPython + " " + kPeer + " header " + weights);
  INFO(header.output);
  REQUIRE(header.exit_code == 0);
  CHECK(contains(header.output, "0.weight F32 [256, 64]\n"));
  CHECK(contains(header.output, "0.bias F32 [256]\n"));
  CHECK(contains(header.output, "2.weight F32 [256, 256]\n"));
  CHECK(contains(header.output, "4.weight F32 [10, 256]\n"));
  CHECK(contains(header.output, "meta format=pt"));
  CHECK(contains(header.output, "meta switchyard.architecture=input[64] linear(64->256,bias)"));

  // The first 40 images as a labeled CSV, predicted by switchyard from the checkpoint...
  const std::string input = (dir / "input.csv").string();
  const std::string predictions = (dir / "predictions.csv").string();
  REQUIRE(run_command("zcat " + std::string(SWITCHYARD_SOURCE_DIR) +
                      "/data/digits.csv.gz | head -n 40 > " + input)
              .exit_code == 0);
  auto predicted = predict(checkpoint, input, predictions);
  INFO(predicted.output);
  REQUIRE(predicted.exit_code == 0);
  // Predicting from the exported weights instead of the checkpoint gives the same file: the data
  // layout then comes from the configuration, the scaler fitted as in training.
  const std::string from_weights = (dir / "predictions-from-weights.csv").string();
  auto predicted_again = predict(weights, input, from_weights);
  INFO(predicted_again.output);
  REQUIRE(predicted_again.exit_code == 0);
  CHECK(switchyard::testing::read_text(from_weights) ==
        switchyard::testing::read_text(predictions));
  // A data section other than the one the weights were trained on would scale the inputs
  // differently; the export's metadata says what it was, so that is refused, not guessed.
  auto other_data = predict(weights, input, from_weights, " --set data.divisor=8");
  INFO(other_data.output);
  CHECK(other_data.exit_code != 0);
  CHECK(contains(other_data.output, "were trained on other data"));
  CHECK(contains(other_data.output, "divisor=16"));
  // ...by the same MLP evaluated in plain Python from the exported weights (no torch needed)...
  auto forward =
      run_command(kPython + " " + kPeer + " forward " + weights + " " + input + " " + predictions);
  INFO(forward.output);
  REQUIRE(forward.exit_code == 0);
  CHECK(max_abs_diff(forward.output) < 2e-6);
  // ...and by PyTorch from the exported weights.
  auto torch =
      run_command(kPython + " " + kPeer + " torch " + weights + " " + input + " " + predictions);
  INFO(torch.output);
  if (torch.exit_code == 3) {
    switchyard::testing::skip_test(
        "the PyTorch half: python3-torch is not installed (tools/bench/compare installs it)");
    return;
  }
  REQUIRE(torch.exit_code == 0);
  CHECK(max_abs_diff(torch.output) < 2e-6);

  // The other way: weights PyTorch initialised, predicted by switchyard, checked by PyTorch.
  const std::string torch_weights = (dir / "from-torch.safetensors").string();
  const std::string torch_predictions = (dir / "from-torch.csv").string();
  REQUIRE(run_command(kPython + " " + kPeer + " torch-export " + torch_weights + " " + input + " " +
                      torch_predictions)
              .exit_code == 0);
  auto imported = predict(torch_weights, input, torch_predictions);
  INFO(imported.output);
  REQUIRE(imported.exit_code == 0);
  auto compared = run_command(kPython + " " + kPeer + " torch-export " + torch_weights + " " +
                              input + " " + torch_predictions);
  INFO(compared.output);
  CHECK(max_abs_diff(compared.output) < 2e-6);
}
