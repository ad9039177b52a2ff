// What a training run leaves beside its checkpoint for people (history.csv, curves.svg, run.json)
// and `switchyard report RUN_DIR`, which summarises them.
#include <catch2/catch.hpp>

#include <sstream>

#include "test_support.h"
#include "train/train_test_support.h"

using namespace switchyard::testing;

namespace {

const std::string kEnv = "SWITCHYARD_PLUGIN_PATH= SWITCHYARD_BACKENDS=reference ";

// The SVG parsed by Python's XML parser: one line per <polyline> of the SVG namespace, "id
// points", or the parser's error.
CommandResult svg_polylines(const std::filesystem::path& svg) {
  return run_command(
      "python3 -c \"import sys, xml.etree.ElementTree as E; "
      "root = E.parse(sys.argv[1]).getroot(); "
      "assert root.tag == '{http://www.w3.org/2000/svg}svg', root.tag; "
      "assert not [e for e in root.iter() if e.get('href') or "
      "e.get('{http://www.w3.org/1999/xlink}href') or e.tag.endswith('script')], 'external'; "
      "[print(p.get('id'), len(p.get('points').split())) "
      "for p in root.iter('{http://www.w3.org/2000/svg}polyline')]\" " +
      svg.string());
}

CommandResult run_config(const TempDir& dir, const std::string& yaml) {
  write_text(dir / "run.yaml", yaml);
  return run_command(kEnv + cli() + " run " + (dir / "run.yaml").string());
}

const std::string kIris = std::string(SWITCHYARD_SOURCE_DIR) + "/data/iris-species.csv";

std::string iris_config(int epochs) {
  return "data:\n  dataset: " + kIris +
         "\n  target: species\n  id: id\n  scale: standard\n  validation_fraction: 0.2\n"
         "model:\n  layers:\n    - {type: linear, out_features: 8}\n    - {type: relu}\n"
         "    - {type: linear, out_features: 3}\n"
         "optimizer: {type: adam, lr: 0.01}\n"
         "train:\n  epochs: " +
         std::to_string(epochs) +
         "\n  batch_size: 16\n  progress: none\n  checkpoint: out/m.ckpt\n";
}

}  // namespace

TEST_CASE("a classification run writes history.csv, curves.svg and run.json beside its checkpoint",
          "[cli][curves]") {
  TempDir dir;
  const CommandResult run = run_config(dir, iris_config(7));
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const std::filesystem::path out = dir / "out";
  CHECK_THAT(run.output, Catch::Contains("curves: " + (out / "curves.svg").string() +
                                         " (loss and accuracy per epoch)"));
  CHECK_THAT(run.output, Catch::Contains("history: " + (out / "history.csv").string()));

  const auto rows = csv_rows(read_text(out / "history.csv"));
  REQUIRE(rows.size() == 8);  // the header and one row per epoch
  CHECK(rows[0] == std::vector<std::string>{"epoch", "train_loss", "train_accuracy", "val_loss",
                                            "val_accuracy", "val_f1_macro", "test_loss",
                                            "test_accuracy", "learning_rate", "epoch_seconds"});
  for (size_t r = 1; r < rows.size(); ++r) {
    REQUIRE(rows[r].size() == rows[0].size());
    CHECK(std::stoi(rows[r][0]) == static_cast<int>(r));
    CHECK(std::stod(rows[r][1]) > 0);              // train loss
    CHECK(std::stod(rows[r][3]) > 0);              // validation loss
    CHECK(std::stod(rows[r][8]) == Approx(0.01));  // learning rate
  }
  // The loss falls over 7 epochs of adam on iris.
  CHECK(std::stod(rows[7][1]) < std::stod(rows[1][1]));

  const CommandResult svg = svg_polylines(out / "curves.svg");
  INFO(svg.output);
  REQUIRE(svg.exit_code == 0);
  CHECK(svg.output == "loss-train 7\nloss-val 7\naccuracy-train 7\naccuracy-val 7\n");

  const std::string record = read_text(out / "run.json");
  CHECK_THAT(record, Catch::Contains("\"format\": \"switchyard.run.v1\""));
  CHECK_THAT(record, Catch::Contains("\"reason\": \"epochs\""));
}

TEST_CASE("a regression run without a validation split plots the test split and RMSE",
          "[cli][curves]") {
  TempDir dir;
  const CommandResult run = run_config(
      dir, "data:\n  dataset: " + std::string(SWITCHYARD_SOURCE_DIR) +
               "/data/diabetes.csv\n  targets: [progression]\n  scale: standard\n"
               "model:\n  layers:\n    - {type: linear, out_features: 8}\n    - {type: relu}\n"
               "    - {type: linear, out_features: 1}\n"
               "loss: mse\noptimizer: {type: adam, lr: 0.01}\n"
               "train: {epochs: 3, batch_size: 32, progress: none, checkpoint: r/m.ckpt}\n");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto rows = csv_rows(read_text(dir / "r" / "history.csv"));
  REQUIRE(rows.size() == 4);
  CHECK(rows[0] == std::vector<std::string>{"epoch", "train_loss", "test_loss", "test_rmse",
                                            "test_mae", "test_r2", "learning_rate",
                                            "epoch_seconds"});
  const CommandResult svg = svg_polylines(dir / "r" / "curves.svg");
  INFO(svg.output);
  REQUIRE(svg.exit_code == 0);
  CHECK(svg.output == "loss-train 3\nloss-test 3\nrmse-test 3\n");
}

TEST_CASE("switchyard report prints a run's summary from the files it wrote", "[cli][report]") {
  TempDir dir;
  REQUIRE(run_config(dir, iris_config(5) + "  early_stopping: {patience: 2}\n").exit_code == 0);
  const std::filesystem::path out = dir / "out";
  const CommandResult report = run_command(kEnv + cli() + " report " + out.string());
  INFO(report.output);
  REQUIRE(report.exit_code == 0);
  CHECK_THAT(report.output, Catch::Contains("config: " + (dir / "run.yaml").string()));
  CHECK_THAT(report.output, Catch::Contains("backend: reference"));
  CHECK_THAT(report.output, Catch::Contains("data: 96 train, 24 validation, 30 test rows"));
  CHECK_THAT(report.output, Catch::Matches("(.|\n)*epochs: [0-9]+ of 5; stopped: (every epoch of "
                                           "train.epochs ran \\(5\\)|early stopping at epoch "
                                           ")(.|\n)*"));
  CHECK_THAT(report.output, Catch::Contains("val_loss "));
  CHECK_THAT(report.output, Catch::Contains("test (final weights): loss "));
  CHECK_THAT(report.output, Catch::Contains("checkpoint: " + (out / "m.ckpt").string()));
  CHECK_THAT(report.output, Catch::Contains("curves: " + (out / "curves.svg").string()));

  SECTION("a missing folder") {
    const CommandResult missing = run_command(cli() + " report " + (dir / "nowhere").string());
    CHECK(missing.exit_code == 2);
    CHECK_THAT(missing.output, Catch::Contains((dir / "nowhere").string() + " does not exist"));
  }
  SECTION("a folder without run.json") {
    const CommandResult empty = run_command(cli() + " report " + dir.path().string());
    CHECK(empty.exit_code == 2);
    CHECK_THAT(empty.output, Catch::Contains((dir / "run.json").string()));
  }
  SECTION("a truncated run.json") {
    const std::string record = read_text(out / "run.json");
    write_text(out / "run.json", record.substr(0, record.size() / 2));
    const CommandResult damaged = run_command(cli() + " report " + out.string());
    CHECK(damaged.exit_code == 2);
    CHECK_THAT(damaged.output,
               Catch::Contains((out / "run.json").string() + ": not a run record (malformed JSON"));
  }
  SECTION("a damaged history.csv") {
    std::string history = read_text(out / "history.csv");
    history.replace(history.find('\n') + 1, 1, "x");  // the first row's epoch
    write_text(out / "history.csv", history);
    const CommandResult damaged = run_command(cli() + " report " + out.string());
    CHECK(damaged.exit_code == 2);
    CHECK_THAT(damaged.output, Catch::Contains((out / "history.csv").string() +
                                               ":2:1: 'x' is not a number (column 'epoch')"));
  }
  SECTION("a history.csv that does not match run.json") {
    std::string history = read_text(out / "history.csv");
    history.erase(history.rfind('\n', history.size() - 2) + 1);  // the last epoch's row
    write_text(out / "history.csv", history);
    const CommandResult damaged = run_command(cli() + " report " + out.string());
    CHECK(damaged.exit_code == 2);
    CHECK_THAT(damaged.output, Catch::Contains((out / "history.csv").string() + " ends at epoch"));
  }
}

TEST_CASE("a run with train.checkpoint: none writes no curves and says nothing of them",
          "[cli][curves]") {
  TempDir dir;
  std::string config = iris_config(2);
  config.replace(config.find("out/m.ckpt"), std::string("out/m.ckpt").size(), "none");
  const CommandResult run = run_config(dir, config);
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK_FALSE(contains(run.output, "curves:"));
  CHECK_FALSE(std::filesystem::exists(dir / "history.csv"));
}
