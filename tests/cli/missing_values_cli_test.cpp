// Missing values end to end (issue 29): a table with 5% of its cells empty or NA trains with
// data.missing: median, and `switchyard predict` fills new rows' holes with the training split's
// medians, kept in the checkpoint: its predictions are those of the same rows filled by hand.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <sstream>

#include "json_test_support.h"
#include "switchyard/checkpoint.h"
#include "switchyard/config.h"
#include "switchyard/data.h"
#include "test_support.h"
#include "train/train_test_support.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

constexpr int kRows = 240;
constexpr int kFeatures = 6;

// A wine-like table: an id, six features of different scales, a class name; deterministic.
double feature_value(int row, int feature) {
  const int kind = row % 3;
  const double wobble = std::sin(row * 12.9898 + feature * 78.233) * 0.9;
  return (kind * 1.5 + feature * 0.3 + wobble) * (feature == 1 ? 10.0 : 1.0);
}

// Whether cell (row, feature) is a hole: 5% of the cells of the features and the class (84 of
// 1680), spread by a fixed stride.
bool is_hole(int row, int feature) {
  const int cell = row * kFeatures + feature;
  return (cell * 37) % 100 < 6 && feature < kFeatures && cell % 7 != 3;
}

std::string hole_text(int row, int feature) {
  return (row + feature) % 2 == 0 ? "NA" : "";
}

std::string format(double value) {
  std::ostringstream text;
  text.precision(6);
  text << value;
  return text.str();
}

std::string run_in(const TempDir& dir, const std::string& args, int expected_exit = 0) {
  const std::string command =
      "cd " + dir.path().string() +
      " && SWITCHYARD_BACKENDS=reference SWITCHYARD_PLUGIN_PATH=" + SWITCHYARD_TEST_PLUGIN_DIR +
      " " + cli() + " " + args;
  const CommandResult result = run_command(command);
  INFO(command << "\n" << result.output);
  REQUIRE(result.exit_code == expected_exit);
  return result.output;
}

}  // namespace

TEST_CASE("missing: median trains on a table with 5% holes; predict fills new rows' holes",
          "[cli][missing]") {
  TempDir dir;
  std::ostringstream table;
  table << "id,f1,f2,f3,f4,f5,f6,kind\n";
  int holes = 0;
  for (int row = 0; row < kRows; ++row) {
    table << "w" << row;
    for (int f = 0; f < kFeatures; ++f) {
      table << ",";
      if (is_hole(row, f)) {
        table << hole_text(row, f);
        ++holes;
      } else {
        table << format(feature_value(row, f));
      }
    }
    table << ",kind_"
          << "abc"[row % 3] << "\n";
  }
  // About 5% of the feature cells.
  CHECK(holes >= kRows * kFeatures * 4 / 100);
  CHECK(holes <= kRows * kFeatures * 6 / 100);
  write_text(dir / "wine.csv", table.str());
  write_text(dir / "run.yaml",
             "backends: [reference]\n"
             "seed: 1\n"
             "data: {dataset: wine.csv, target: kind, id: id, missing: median, scale: standard}\n"
             "model: {layers: [{type: linear, out_features: 16}, {type: relu}, "
             "{type: linear, out_features: 3}]}\n"
             "optimizer: {type: adam, lr: 0.01}\n"
             "train: {epochs: 5, batch_size: 16, progress: none, checkpoint: model.ckpt}\n");
  const std::string trained = run_in(dir, "run run.yaml");
  CHECK(contains(trained, "data: filled " + std::to_string(holes) +
                              " missing value(s) with each feature's median on the training "
                              "split (data.missing: median)"));

  // The training split's medians, computed here from its rows' values in the file.
  const Config config = value_or_throw(Config::load_file(dir / "run.yaml"));
  const DataSettings settings = value_or_throw(DataSettings::from_config(config.root()["data"]));
  const PreparedData prepared = value_or_throw(prepare_data(settings, dir.path()));
  std::vector<float> medians;
  for (int f = 0; f < kFeatures; ++f) {
    std::vector<float> known;
    for (const int64_t line : prepared.split.train.source_lines) {
      const int row = static_cast<int>(line) - 2;  // data row 0 is line 2
      if (!is_hole(row, f)) known.push_back(std::stof(format(feature_value(row, f))));
    }
    std::sort(known.begin(), known.end());
    const size_t n = known.size();
    medians.push_back(n % 2 == 1 ? known[n / 2] : (known[n / 2 - 1] + known[n / 2]) / 2.0f);
  }
  // ... which the checkpoint keeps.
  const Checkpoint checkpoint = value_or_throw(read_checkpoint(dir / "model.ckpt"));
  CHECK(value_or_throw(checkpoint.get_string("data/imputer/strategy")) == "median");
  const std::vector<float> stored = value_or_throw(checkpoint.get_floats("data/imputer/values"));
  REQUIRE(stored.size() == medians.size());
  for (size_t f = 0; f < medians.size(); ++f) CHECK(stored[f] == Approx(medians[f]));

  // New rows, each with a hole (empty or NA), and the same rows filled by hand.
  std::ostringstream holed;
  std::ostringstream filled;
  holed << "id,f1,f2,f3,f4,f5,f6\n";
  filled << "id,f1,f2,f3,f4,f5,f6\n";
  for (int row = 0; row < 12; ++row) {
    holed << "n" << row;
    filled << "n" << row;
    for (int f = 0; f < kFeatures; ++f) {
      const std::string value = format(feature_value(row * 5 + 1, f) * 1.1);
      if (f == row % kFeatures || (row % 4 == 0 && f == (row + 3) % kFeatures)) {
        holed << "," << (row % 2 == 0 ? "NA" : "");
        filled << "," << format(static_cast<double>(stored[static_cast<size_t>(f)]));
      } else {
        holed << "," << value;
        filled << "," << value;
      }
    }
    holed << "\n";
    filled << "\n";
  }
  write_text(dir / "new.csv", holed.str());
  write_text(dir / "filled.csv", filled.str());
  const std::string predicted = run_in(dir, "predict model.ckpt new.csv -o holed-p.csv");
  CHECK(contains(predicted, "model: filled 15 missing value(s) with the training split's median"));
  run_in(dir, "predict model.ckpt filled.csv -o filled-p.csv");
  const std::string from_holes = read_text(dir / "holed-p.csv");
  CHECK(from_holes.find("n11,") != std::string::npos);
  CHECK(from_holes == read_text(dir / "filled-p.csv"));

  // A predict section that says otherwise contradicts the checkpoint.
  write_text(dir / "other.yaml",
             "backends: [reference]\ntask: predict\ndata: {missing: mean}\n"
             "predict: {checkpoint: model.ckpt, input: new.csv}\n");
  const std::string contradicted = run_in(dir, "run other.yaml", 2);
  CHECK(contains(contradicted, "other.yaml:3:17: key 'data.missing': mean contradicts checkpoint"));
  CHECK(contains(contradicted, "which has missing median"));

  // Without data.missing the same table is refused, every hole listed up to 20, then counted.
  write_text(dir / "strict.yaml",
             "backends: [reference]\ndata: {dataset: wine.csv, target: kind, id: id}\n"
             "train: {epochs: 1, progress: none, checkpoint: none}\n");
  const std::string refused = run_in(dir, "run strict.yaml", 2);
  CHECK(contains(
      refused, "wine.csv: " + std::to_string(holes) + " missing values (data.missing: error):\n"));
  CHECK(contains(refused, "  ... and " + std::to_string(holes - 20) + " more\n"));
}

TEST_CASE("a target of many numbers trains a regression, and says so", "[cli][regression]") {
  TempDir dir;
  // Only dataset, target and id: the numbers are detected, the run says what it did, and the
  // model beats nothing less than least squares' half (R^2 >= 0.40).
  std::string table = read_text(SWITCHYARD_SOURCE_DIR "/data/diabetes.csv");
  std::ostringstream with_ids;
  std::istringstream lines(table);
  std::string line;
  for (int row = 0; std::getline(lines, line); ++row) {
    with_ids << (row == 0 ? std::string("id") : "p" + std::to_string(row)) << "," << line << "\n";
  }
  write_text(dir / "diabetes.csv", with_ids.str());
  write_text(dir / "three.yaml", "data: {dataset: diabetes.csv, target: progression, id: id}\n");
  const std::string detected = run_in(dir, "run three.yaml --metrics m.json");
  CHECK(contains(detected,
                 "data: the target 'progression' holds numbers (214 distinct values in 442 "
                 "rows), not classes: trained as a regression (data.targets: [progression], loss: "
                 "mse); give loss: cross_entropy to insist on classes\n"));
  CHECK(contains(detected, "loss: cross_entropy (mse for a target of numbers)"));
  const Json metrics = parse_json(read_text(dir / "m.json"));
  CHECK(metrics.at("test_r2").get<double>() >= 0.40);
  // The checkpoint predicts the same table's rows as a regression: ids kept, the true value and a
  // number predicted for each of the 442 rows.
  const std::string predicted = run_in(dir, "predict runs/three/model.ckpt diabetes.csv -o p.csv");
  CHECK(contains(predicted, "diabetes.csv: 442 samples, rmse "));
  const auto rows = csv_rows(read_text(dir / "p.csv"));
  REQUIRE(rows.size() == 443);
  CHECK(rows[0] == std::vector<std::string>{"id", "progression", "predicted_progression"});
  CHECK(rows[1][0] == "p1");
  CHECK(rows[1][1] == "151");
  CHECK(std::isfinite(std::stod(rows[1][2])));

  // Classes asked for by name: the refusal says what a regression needs.
  write_text(dir / "run.yaml",
             "backends: [reference]\n"
             "data: {dataset: " SWITCHYARD_SOURCE_DIR
             "/data/diabetes.csv, target: progression}\n"
             "loss: cross_entropy\n"
             "train: {epochs: 1, progress: none, checkpoint: none}\n");
  const std::string refused = run_in(dir, "run run.yaml", 2);
  CHECK(contains(refused, "the target, 'progression', holds 214 distinct values in 442 rows"));
  CHECK(contains(refused, "replace data.target by data.targets: [progression] and set loss: mse"));
  // What it says to set trains a regression.
  write_text(dir / "fixed.yaml",
             "backends: [reference]\n"
             "data: {dataset: " SWITCHYARD_SOURCE_DIR
             "/data/diabetes.csv, targets: [progression]}\n"
             "loss: mse\n"
             "train: {epochs: 1, progress: none, checkpoint: none}\n");
  const std::string regression = run_in(dir, "run fixed.yaml");
  CHECK(contains(regression, "r2"));
}

TEST_CASE("switchyard config says what data.missing and data.na_values are for a file",
          "[cli][missing][config]") {
  TempDir dir;
  write_text(dir / "drop.yaml", "data: {dataset: t.csv, non_finite: drop_rows}\n");
  const std::string dropping = run_in(dir, "config drop.yaml");
  CHECK(contains(dropping, "  missing: drop_rows "));
  CHECK(contains(dropping, "  na_values: ['', NA, N/A, NaN, null, '?'] "));
  write_text(dir / "own.yaml", "data: {dataset: t.csv, na_values: ['', '-'], missing: mean}\n");
  const std::string own = run_in(dir, "config own.yaml");
  CHECK(contains(own, "  missing: mean "));
  CHECK(contains(own, "  na_values: ['', -] "));
  write_text(dir / "bad.yaml", "data:\n  dataset: t.csv\n  missing: fill\n");
  CHECK(contains(run_in(dir, "config bad.yaml", 2),
                 "bad.yaml:3:12: key 'data.missing': unknown value 'fill', expected one of: error, "
                 "drop_rows, mean, median, most_frequent"));
}
