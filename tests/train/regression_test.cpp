// Regression data: named target columns, time-series windows with a chronological split, target
// scaling fitted on the training part, the metrics and the baselines.
#include <catch2/catch.hpp>
#include <cmath>

#include "model/train_state.h"
#include "switchyard/data.h"
#include "switchyard/train.h"
#include "test_support.h"
#include "train/train_test_support.h"
#include "train/trainer_test_support.h"

using namespace switchyard;
using switchyard::testing::contains;
using switchyard::testing::reference_device;
using switchyard::testing::TempDir;
using switchyard::testing::train_config_from;
using switchyard::testing::write_text;

namespace {

// The data section of `yaml` (a whole configuration file written to dir/run.yaml), read as a
// run reads it, relative paths against `dir`.
Result<DataSettings> data_settings(const TempDir& dir, const std::string& yaml) {
  write_text(dir / "run.yaml", yaml);
  SY_ASSIGN_OR_RETURN(const Config config, Config::load_file(dir / "run.yaml"));
  return DataSettings::from_config(config.root()["data"]);
}

Result<PreparedData> prepare(const TempDir& dir, const std::string& yaml) {
  SY_ASSIGN_OR_RETURN(const DataSettings settings, data_settings(dir, yaml));
  return prepare_data(settings, dir.path());
}

// date,value with values 0, 1, 2, ... (value i on data line i + 2); `gaps` lists empty ones.
std::string ramp_csv(int count, const std::vector<int>& gaps = {}) {
  std::string text = "date,value\n";
  for (int i = 0; i < count; ++i) {
    const bool gap = std::find(gaps.begin(), gaps.end(), i) != gaps.end();
    text += std::to_string(20000 + i) + "," + (gap ? "" : std::to_string(i)) + "\n";
  }
  return text;
}

std::string series_yaml(const std::string& series, const std::string& more = "") {
  return "data:\n  dataset: ramp.csv\n  test_fraction: 0.25\n  scale: none\n  target_scale: none\n"
         "  series: " +
         series + "\n" + more;
}

}  // namespace

TEST_CASE("data.targets reads named columns of numbers as regression targets",
          "[data][regression]") {
  switchyard::testing::use_repository_data();
  TableOptions options;
  options.targets = {"progression"};
  const Dataset diabetes =
      value_or_throw(load_table_csv(SWITCHYARD_SOURCE_DIR "/data/diabetes.csv", options));
  CHECK(diabetes.sample_count == 442);
  CHECK(diabetes.feature_count() == 10);
  CHECK(diabetes.is_regression());
  CHECK(diabetes.target_names == std::vector<std::string>{"progression"});
  CHECK(diabetes.targets.size() == 442);
  CHECK(diabetes.targets[0] == 151.0f);  // 59,2,32.1,101.0,157,93.2,38.0,4.0,4.8598,87,151
  CHECK(diabetes.features[0] == 59.0f);
  CHECK(diabetes.features[9] == 87.0f);
  CHECK(diabetes.class_count() == 0);

  TempDir dir;
  write_text(dir / "two.csv", "a,y1,b,y2\n1,10,2,-1.5\n3,20,4,-2.5\n5,30,6,-3.5\n");
  options.targets = {"y2", "y1"};  // in the order given: the model's outputs
  const Dataset two = value_or_throw(load_table_csv(dir / "two.csv", options));
  CHECK(two.target_names == std::vector<std::string>{"y2", "y1"});
  CHECK(two.targets == std::vector<float>{-1.5f, 10, -2.5f, 20, -3.5f, 30});
  CHECK(two.features == std::vector<float>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("bad regression targets are errors naming the key, file, line and column",
          "[data][regression]") {
  TempDir dir;
  write_text(dir / "t.csv", "a,y\n1,2\n3,n/a\n");
  TableOptions options;
  options.targets = {"z"};
  const auto missing = load_table_csv(dir / "t.csv", options);
  REQUIRE_FALSE(missing.ok());
  CHECK(contains(missing.status().message(), "data.targets: no column 'z'"));
  CHECK(contains(missing.status().message(), "columns: a, y"));
  options.targets = {"y"};
  const auto text = load_table_csv(dir / "t.csv", options);
  REQUIRE_FALSE(text.ok());
  CHECK(contains(text.status().message(),
                 "t.csv:3:2: 'n/a' is a missing value (target 'y'); targets are never filled"));

  const auto both = data_settings(dir, "data: {dataset: t.csv, target: y, targets: [y]}\n");
  REQUIRE_FALSE(both.ok());
  CHECK(contains(both.status().message(), "run.yaml:1:"));
  CHECK(contains(both.status().message(), "data.target names the class column"));
}

TEST_CASE("series windows: exact inputs and targets, and no window crosses the split",
          "[data][regression][series]") {
  TempDir dir;
  write_text(dir / "ramp.csv", ramp_csv(20));
  const PreparedData data =
      value_or_throw(prepare(dir, series_yaml("{column: value, window: 3, horizon: 1}")));
  // 20 values: the last round(0.25 * 20) = 5 are the test part, values 15..19.
  const Dataset& train = data.split.train;
  const Dataset& test = data.split.test;
  REQUIRE(train.sample_count == 12);  // windows starting at 0..11 within values 0..14
  REQUIRE(test.sample_count == 2);    // [15 16 17] -> 18 and [16 17 18] -> 19
  CHECK(std::vector<float>(train.features.begin(), train.features.begin() + 6) ==
        std::vector<float>{0, 1, 2, 1, 2, 3});
  CHECK(train.targets.front() == 3.0f);
  CHECK(train.targets.back() == 14.0f);  // the last training target is the part's last value
  CHECK(test.features == std::vector<float>{15, 16, 17, 16, 17, 18});
  CHECK(test.targets == std::vector<float>{18, 19});
  CHECK(test.source_lines == std::vector<int64_t>{20, 21});  // the lines of the values predicted
  CHECK(train.target_names == std::vector<std::string>{"value[t+1]"});
  // data.image_shape shapes the windows for sequence layers: [window, 1].
  const PreparedData shaped = value_or_throw(prepare(
      dir, series_yaml("{column: value, window: 3, horizon: 1}", "  image_shape: [3, 1]\n")));
  CHECK(shaped.split.train.sample_shape == std::vector<int64_t>{3, 1});
  CHECK(shaped.split.test.sample_shape == std::vector<int64_t>{3, 1});

  const PreparedData with_validation = value_or_throw(prepare(
      dir, series_yaml("{column: value, window: 3, horizon: 2}", "  validation_fraction: 0.4\n")));
  // The 15 values before the test part: ceil(0.4 * 15) = 6 for validation (9..14), 9 to train.
  const DataSplit& split = with_validation.split;
  CHECK(split.train.sample_count == 5);  // 0..8: windows of 3 + 2 starting at 0..4
  CHECK(split.train.targets.back() == 8.0f);
  CHECK(split.validation.features.front() == 9.0f);
  CHECK(split.validation.sample_count == 2);
  CHECK(split.test.features.front() == 15.0f);
  CHECK(split.test.target_count() == 2);
}

TEST_CASE("series gaps are interpolated or their windows dropped", "[data][regression][series]") {
  TempDir dir;
  write_text(dir / "ramp.csv", ramp_csv(20, {4, 5, 17}));
  const PreparedData filled =
      value_or_throw(prepare(dir, series_yaml("{column: value, window: 3, gaps: interpolate}")));
  // Values 4 and 5 lie between 3 and 6: filled as 4 and 5; 17 between 16 and 18.
  CHECK(filled.split.train.sample_count == 12);
  CHECK(std::vector<float>(filled.split.train.features.begin() + 9,
                           filled.split.train.features.begin() + 12) ==
        std::vector<float>{3, 4, 5});
  CHECK(filled.split.test.features == std::vector<float>{15, 16, 17, 16, 17, 18});

  write_text(dir / "ramp.csv", ramp_csv(20, {4, 5}));
  const PreparedData dropped =
      value_or_throw(prepare(dir, series_yaml("{column: value, window: 3, gaps: drop}")));
  // Train windows [t, t + 3] touching 4 or 5: t = 1..5, so 7 of 12 remain.
  CHECK(dropped.split.train.sample_count == 7);
  for (const float value : dropped.split.train.features) {
    CHECK_FALSE((value == 4.0f || value == 5.0f));
  }
  CHECK(dropped.split.test.sample_count == 2);
  write_text(dir / "ramp.csv", ramp_csv(20, {17}));
  const auto no_test = prepare(dir, series_yaml("{column: value, window: 3, gaps: drop}"));
  // Both test windows (15..18 and 16..19) touch 17: the test part has none left.
  REQUIRE_FALSE(no_test.ok());
  CHECK(contains(no_test.status().message(), "without a gap"));
  CHECK(contains(no_test.status().message(), "test part of"));
}

TEST_CASE("series offset: last predicts changes, and scalers are fitted on the training part",
          "[data][regression][series]") {
  TempDir dir;
  write_text(dir / "ramp.csv", ramp_csv(20));
  const PreparedData data = value_or_throw(
      prepare(dir,
              "data:\n  dataset: ramp.csv\n  test_fraction: 0.25\n  scale: standard\n"
              "  series: {column: value, window: 3, offset: last}\n"));
  // Relative windows are always [-2, -1, 0] -> 1 in a ramp; the level goes to target_offsets.
  CHECK(data.split.test.target_offsets == std::vector<float>{17, 18});
  // The training targets are all 1 (spread 0): standardising keeps factor 1 and offset 1.
  CHECK(data.target_scaler.offset == std::vector<float>{1.0f});
  CHECK(data.target_scaler.factor == std::vector<float>{1.0f});

  write_text(dir / "ramp.csv", ramp_csv(20));
  const PreparedData level = value_or_throw(
      prepare(dir,
              "data:\n  dataset: ramp.csv\n  test_fraction: 0.25\n  scale: standard\n"
              "  series: {column: value, window: 3}\n"));
  // Training targets 3..14: mean 8.5, population standard deviation sqrt(143 / 12).
  CHECK(level.target_scaler.offset[0] == Approx(8.5));
  CHECK(level.target_scaler.factor[0] == Approx(1.0 / std::sqrt(143.0 / 12.0)));
  // The first input position sees 0..11 in training: its mean is 5.5, not the series' 9.5.
  CHECK(level.scaler.offset[0] == Approx(5.5));
  // Test targets are scaled with the training statistics: (18 - 8.5) * factor.
  CHECK(level.split.test.targets[0] == Approx((18 - 8.5) / std::sqrt(143.0 / 12.0)));
}

TEST_CASE("a missing series column or a window longer than the series names file, line and key",
          "[data][regression][series]") {
  TempDir dir;
  write_text(dir / "ramp.csv", ramp_csv(20));
  const auto missing = prepare(dir, series_yaml("{column: co2, window: 3}"));
  REQUIRE_FALSE(missing.ok());
  CHECK(contains(missing.status().message(), "run.yaml:6:"));
  CHECK(contains(missing.status().message(), "key 'data.series.column'"));
  CHECK(contains(missing.status().message(), "no column 'co2' in "));
  CHECK(contains(missing.status().message(), "ramp.csv (columns: date, value)"));

  const auto too_long = prepare(dir, series_yaml("{column: value, window: 30}"));
  REQUIRE_FALSE(too_long.ok());
  CHECK(contains(too_long.status().message(), "run.yaml:6:"));
  CHECK(contains(too_long.status().message(), "key 'data.series.window'"));
  CHECK(contains(too_long.status().message(),
                 "a window of 30 plus a horizon of 1 needs 31 consecutive values, but the train "
                 "part of"));
  CHECK(contains(too_long.status().message(), "has 15 values (of 20 in the series)"));

  write_text(dir / "ramp.csv", "date,value\n1,2\n2,x\n");
  const auto text = prepare(dir, series_yaml("{column: value, window: 1}"));
  REQUIRE_FALSE(text.ok());
  CHECK(contains(text.status().message(), "ramp.csv:3:2: 'x' is not a finite number"));
}

TEST_CASE("RMSE, MAE and R^2 agree with scikit-learn", "[metrics][regression]") {
  // tests/train/regression_metrics_expected.py computes these with scikit-learn.
  const std::vector<float> truth = {3.0f, -1.0f, 0.5f, 2.0f, 2.0f, 2.5f, 7.0f, 4.0f, -1.5f, 0.0f};
  const std::vector<float> predicted = {2.5f, -0.5f, 0.0f, 2.0f,  2.0f,
                                        3.0f, 8.0f,  3.0f, -1.0f, 0.5f};
  const RegressionMetrics both = regression_metrics(truth, predicted, 2);
  CHECK(both.samples == 5);
  CHECK(both.rmse == Approx(0.5916079783099616));
  CHECK(both.mae == Approx(0.5));
  CHECK(both.r2 == Approx(0.9236003411910669));
  std::vector<float> first_truth;
  std::vector<float> first_predicted;
  for (size_t i = 0; i < truth.size(); i += 2) {
    first_truth.push_back(truth[i]);
    first_predicted.push_back(predicted[i]);
  }
  const RegressionMetrics one = regression_metrics(first_truth, first_predicted, 1);
  CHECK(one.rmse == Approx(0.5916079783099616));
  CHECK(one.r2 == Approx(0.956575682382134));
  // A constant truth: R^2 is 1 when predicted exactly, else 0 (scikit-learn's force_finite).
  CHECK(regression_metrics({2, 2}, {2, 2}, 1).r2 == 1.0);
  CHECK(regression_metrics({2, 2}, {2, 3}, 1).r2 == 0.0);
}

TEST_CASE("the baselines: least squares recovers a linear law, last value repeats the window's end",
          "[data][regression][baseline]") {
  TempDir dir;
  std::string text = "x1,x2,y\n";
  for (int i = 0; i < 40; ++i) {
    const double x1 = i * 0.5;
    const double x2 = (i * 7) % 11;
    text += std::to_string(x1) + "," + std::to_string(x2) + "," +
            std::to_string(3 * x1 - 2 * x2 + 5) + "\n";
  }
  write_text(dir / "law.csv", text);
  const PreparedData law =
      value_or_throw(prepare(dir, "data: {dataset: law.csv, targets: [y], scale: standard}\n"));
  REQUIRE(law.baselines.size() == 1);
  CHECK(law.baselines[0].name == "linear_least_squares");
  CHECK(law.baselines[0].test.samples == 8);
  CHECK(law.baselines[0].test.rmse == Approx(0).margin(1e-3));

  write_text(dir / "ramp.csv", ramp_csv(20));
  const PreparedData ramp = value_or_throw(prepare(dir, series_yaml("{column: value, window: 3}")));
  REQUIRE(ramp.baselines.size() == 2);
  CHECK(ramp.baselines[1].name == "last_value");
  CHECK(ramp.baselines[1].test.rmse == Approx(1.0));  // a ramp's next value is one more
  CHECK(ramp.baselines[1].test.mae == Approx(1.0));
}

TEST_CASE("a regression run monitors val_rmse, and its checkpoint keeps the regression history",
          "[train][regression]") {
  const std::string yaml = "data:\n  dataset: " SWITCHYARD_SOURCE_DIR
                           "/data/diabetes.csv\n  targets: [progression]\n  scale: standard\n"
                           "  validation_fraction: 0.2\nloss: huber\nloss_options: {delta: 0.5}\n"
                           "model: {layers: [{type: linear, out_features: 1}]}\n"
                           "optimizer: {type: adam, lr: 0.01}\n"
                           "train: {epochs: 6, progress: none,\n"
                           "        early_stopping: {metric: val_rmse, patience: 50}}\n";
  Trainer trainer(train_config_from(yaml), reference_device());
  const TrainSummary summary = trainer.run();
  REQUIRE(summary.history.size() == 6);
  CHECK(summary.monitor.metric == "val_rmse");
  double best = 1e300;
  for (const EpochMetrics& m : summary.history) {
    CHECK(m.regression);
    CHECK(m.validation_values.rmse > 0);
    best = std::min(best, m.validation_values.rmse);
  }
  CHECK(summary.monitor.best_value == best);  // lower is better for an error
  const Checkpoint checkpoint = trainer.make_checkpoint();
  const auto history = value_or_throw(detail::get_history(checkpoint));
  REQUIRE(history.size() == 6);
  CHECK(history.back().regression);
  CHECK(history.back().test_values.r2 == summary.history.back().test_values.r2);
  CHECK(history.back().validation_values.mae == summary.history.back().validation_values.mae);
  const LossSettings loss = value_or_throw(detail::get_loss(checkpoint));
  CHECK(loss.kind == LossKind::kHuber);
  CHECK(loss.delta == 0.5);
}

TEST_CASE("a metric of the other task is a configuration error", "[train][regression]") {
  const auto status = [](const std::string& yaml) {
    const Config config = value_or_throw(Config::load_string(yaml, "test.yaml"));
    return TrainConfig::from_config(config).status();
  };
  const Status regression = status(
      "data: {dataset: d.csv, targets: [y], validation_fraction: 0.2}\nloss: mse\n"
      "model: {layers: [{type: linear, out_features: 1}]}\n"
      "train: {early_stopping: {metric: val_accuracy, patience: 2}}\n");
  CHECK(contains(regression.message(),
                 "key 'train.early_stopping.metric': val_accuracy is "
                 "measured on classes"));
  const Status classes = status(
      "data: {dataset: iris, validation_fraction: 0.2}\n"
      "model: {layers: [{type: linear, out_features: 3}]}\n"
      "train: {early_stopping: {metric: val_r2, patience: 2}}\n");
  CHECK(contains(classes.message(), "val_r2 is measured on numbers to predict"));
}
