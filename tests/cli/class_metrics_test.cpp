// `switchyard run` with a validation split, early stopping and per-class metrics: the epoch lines,
// the stop line, the tables at the end of the run and the --metrics JSON; the per-class numbers
// and confusion matrices agree with scikit-learn's on the same predictions
// (tests/cli/class_metrics_peer.py), and a config error names file, line and column.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "backend_support.h"
#include "json_test_support.h"

using switchyard::testing::cli;
using switchyard::testing::contains;
using switchyard::testing::Json;
using switchyard::testing::read_json_file;
using switchyard::testing::run_command;

namespace {

const std::string kPython = "/usr/bin/python3";
const std::string kPeer = std::string(SWITCHYARD_SOURCE_DIR) + "/tests/cli/class_metrics_peer.py";

std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string run_cli(const std::string& config, const std::string& arguments) {
  return "SWITCHYARD_BACKENDS=reference " + cli() + " run " + std::string(SWITCHYARD_SOURCE_DIR) +
         "/configs/" + config + " " + arguments;
}

}  // namespace

TEST_CASE("per-class metrics and confusion matrices agree with scikit-learn", "[cli][metrics]") {
  const std::filesystem::path dir = fresh_dir("switchyard-class-metrics");
  const std::string checkpoint = (dir / "digits.ckpt").string();
  const std::string train_metrics = (dir / "train.json").string();
  const std::string predict_metrics = (dir / "predict.json").string();
  const std::string predictions = (dir / "predictions.csv").string();
  const std::string data = " --set data.validation_fraction=0.1";
  auto trained =
      run_command(run_cli("digits-mlp.yaml", "--set train.epochs=1" + data +
                                                 " --set train.progress=log"
                                                 " --set train.checkpoint=" +
                                                 checkpoint + " --metrics " + train_metrics));
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  CHECK(contains(trained.output, "  val loss "));
  CHECK(contains(trained.output, "\ntest: 360 samples, loss "));
  CHECK(contains(trained.output, "\nvalidation: 144 samples, loss "));  // ceil(0.1 * 1437)
  CHECK(contains(trained.output, "  class        precision    recall        f1   support\n"));
  CHECK(contains(trained.output, "confusion matrix (rows: true class, columns: predicted class"));

  const Json json = read_json_file(train_metrics);
  CHECK(json.at("train_samples") == 1437 - 144);
  CHECK(json.at("validation_samples") == 144);
  CHECK(json.at("test_samples") == 360);
  const Json& test = json.at("classification").at("test");
  CHECK(test.at("samples") == 360);
  CHECK(test.at("classes").size() == 10);
  CHECK(test.at("classes")[3].at("name") == "3");
  CHECK(test.at("accuracy") == json.at("test_accuracy"));
  CHECK(json.at("classification").at("validation").at("samples") == 144);
  CHECK(json.at("val_accuracy") == json.at("classification").at("validation").at("accuracy"));
  // The epoch's macro F1 is the final validation report's (the final weights are the last epoch's).
  CHECK(json.at("history")[0].at("val_f1_macro") ==
        json.at("classification").at("validation").at("macro_avg").at("f1"));

  // The checkpoint predicts the same test split; scikit-learn scores those predictions.
  auto predicted = run_command(run_cli(
      "digits-mlp.yaml", "--set task=predict" + data + " --set predict.checkpoint=" + checkpoint +
                             " --set predict.output=" + predictions + " --metrics " +
                             predict_metrics));
  INFO(predicted.output);
  REQUIRE(predicted.exit_code == 0);
  CHECK(read_json_file(predict_metrics).at("classification").at("input").at("samples") == 360);
  if (!std::filesystem::exists(kPython)) {
    switchyard::testing::skip_test("the scikit-learn comparison: " + kPython + " is not installed");
    return;
  }
  auto peer = run_command(kPython + " " + kPeer + " " + predictions + " " + predict_metrics + " " +
                          train_metrics);
  INFO(peer.output);
  if (peer.exit_code == 3) {
    switchyard::testing::skip_test("the scikit-learn comparison: " + peer.output);
    return;
  }
  CHECK(peer.exit_code == 0);
  CHECK(contains(peer.output, "ok predict: 10 classes, 360 samples"));
  CHECK(contains(peer.output, "ok train test: 10 classes, 360 samples"));
}

TEST_CASE("run prints the early stopping line and writes the best checkpoint and the outcome",
          "[cli][early_stopping]") {
  const std::filesystem::path dir = fresh_dir("switchyard-early-stopping-cli");
  const std::string checkpoint = (dir / "iris.ckpt").string();
  const std::string metrics = (dir / "m.json").string();
  // No loss falls by 1.0 from the first epoch's (below 1.2 here), so the run stops at epoch 3.
  auto run = run_command(run_cli(
      "iris-mlp.yaml",
      "--set data.validation_fraction=0.2 --set train.progress=none --set train.epochs=50"
      " --set 'train.early_stopping={patience: 2, min_delta: 1.0}' --set train.checkpoint=" +
          checkpoint + " --metrics " + metrics));
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const Json json = read_json_file(metrics);
  const Json& monitor = json.at("monitor");
  REQUIRE(json.at("history")[0].at("val_loss").get<double>() < 1.2);
  CHECK(json.at("history").size() == 3);
  CHECK(monitor.at("metric") == "val_loss");
  CHECK(monitor.at("mode") == "min");
  CHECK(monitor.at("stopped_early") == true);
  CHECK(monitor.at("stopped_epoch") == 3);
  CHECK(monitor.at("best_epoch") == 1);
  CHECK(monitor.at("best_value") == json.at("history")[0].at("val_loss"));
  const std::string best = (dir / "iris.best.ckpt").string();
  CHECK(monitor.at("best_checkpoint") == best);
  CHECK(monitor.at("best_checkpoint_epoch") == 1);
  CHECK(contains(run.output,
                 "early stopping at epoch 3: val_loss did not improve by 1 for 2 epochs; best "));
  CHECK(contains(run.output, "best checkpoint: " + best + " (epoch 1, val_loss "));
  CHECK(std::filesystem::is_regular_file(best));
}

TEST_CASE(
    "early stopping on val_loss without a validation split exits 2 naming the file, line "
    "and column",
    "[cli][early_stopping]") {
  const std::filesystem::path dir = fresh_dir("switchyard-early-stopping-config");
  const std::string config = (dir / "run.yaml").string();
  std::ofstream(config) << "data: {dataset: iris}\n"
                           "model:\n"
                           "  layers: [{type: linear, out_features: 3}]\n"
                           "train:\n"
                           "  epochs: 3\n"
                           "  early_stopping:\n"
                           "    metric: val_loss\n"
                           "    patience: 2\n";
  auto run = run_command("SWITCHYARD_BACKENDS=reference " + cli() + " run " + config);
  INFO(run.output);
  CHECK(run.exit_code == 2);
  CHECK(contains(run.output, config + ":7:13: key 'train.early_stopping.metric': early stopping "
                                      "monitors val_loss, which is measured on the validation "
                                      "split, and there is none"));
}
