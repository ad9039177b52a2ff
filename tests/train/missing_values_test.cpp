// Missing values in tables (issue 29): data.na_values, data.missing (error listing every bad cell,
// drop_rows, mean, median, most_frequent fitted on the training split only), the imputer's
// checkpoint records, and the hint for a target of numbers that are not classes.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>

#include "model/train_state.h"
#include "switchyard/checkpoint.h"
#include "switchyard/config.h"
#include "switchyard/data.h"
#include "test_support.h"
#include "train/train_test_support.h"

using namespace switchyard;
using switchyard::testing::contains;
using switchyard::testing::TempDir;
using switchyard::testing::write_text;

namespace {

Result<DataSettings> settings_from(const TempDir& dir, const std::string& yaml) {
  write_text(dir / "run.yaml", yaml);
  SY_ASSIGN_OR_RETURN(const Config config, Config::load_file(dir / "run.yaml"));
  return DataSettings::from_config(config.root()["data"]);
}

// a,b,c,label with 40 rows; every cell of `holes` ({row, column}, 0-based data rows) is `mark`.
std::string table_with_holes(const std::vector<std::pair<int, int>>& holes,
                             const std::string& mark = "NA") {
  std::ostringstream text;
  text << "a,b,c,label\n";
  for (int row = 0; row < 40; ++row) {
    for (int column = 0; column < 3; ++column) {
      const bool hole =
          std::find(holes.begin(), holes.end(), std::make_pair(row, column)) != holes.end();
      if (hole) {
        text << mark;
      } else {
        text << (row * 7 + column * 13) % 31 + 0.5 * column;
      }
      text << ",";
    }
    text << (row % 2 == 0 ? "x" : "y") << "\n";
  }
  return text.str();
}

float naive_median(std::vector<float> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0f;
}

}  // namespace

TEST_CASE("missing: error lists the first 20 bad cells with file:line:column, then a count",
          "[data][missing]") {
  TempDir dir;
  std::vector<std::pair<int, int>> holes;
  for (int row = 0; row < 25; ++row) holes.emplace_back(row, row % 3);
  const auto path = dir / "holes.csv";
  write_text(path, table_with_holes(holes));
  const auto loaded = load_table_csv(path, TableOptions{});
  REQUIRE_FALSE(loaded.ok());
  const std::string message = loaded.status().message();
  INFO(message);
  const char* const names[] = {"'a'", "'b'", "'c'"};
  std::string expected = path.string() + ": 25 missing values (data.missing: error):";
  for (int row = 0; row < 20; ++row) {
    // Data row `row` is line row + 2; the hole is in column row % 3 + 1.
    expected += "\n  " + path.string() + ":" + std::to_string(row + 2) + ":" +
                std::to_string(row % 3 + 1) + ": 'NA' is a missing value (feature " +
                names[row % 3] + ")";
  }
  expected +=
      "\n  ... and 5 more\n  data.missing: mean, median or most_frequent fills missing features "
      "from the training split, drop_rows drops their rows; data.na_values lists what marks a "
      "missing value";
  CHECK(message == expected);
  // The 21st cell (line 22) is counted, not listed.
  CHECK_FALSE(contains(message, path.string() + ":22:"));
}

TEST_CASE("missing cells are gathered; text and infinities stop at once", "[data][missing]") {
  TempDir dir;
  const auto path = dir / "mixed.csv";
  write_text(path, "a,b,label\n1,n/a,x\n,2,y\n3,NULL,x\n4,5,y\n");
  const auto loaded = load_table_csv(path, TableOptions{});
  REQUIRE_FALSE(loaded.ok());
  const std::string message = loaded.status().message();
  INFO(message);
  CHECK(contains(message, path.string() + ": 3 missing values (data.missing: error):\n  " +
                              path.string() + ":2:2: 'n/a' is a missing value (feature 'b')\n  " +
                              path.string() + ":3:1: '' is a missing value (feature 'a')\n  " +
                              path.string() + ":4:2: 'NULL' is a missing value (feature 'b')\n"));
  CHECK_FALSE(contains(message, "more"));
  // One missing cell keeps a one-line message.
  write_text(path, "a,b,label\n1,,x\n2,2,y\n");
  const auto one = load_table_csv(path, TableOptions{});
  REQUIRE_FALSE(one.ok());
  CHECK(one.status().message() ==
        path.string() +
            ":2:2: '' is a missing value (feature 'b') (data.missing: mean, median or "
            "most_frequent fills missing features from the training split, drop_rows drops their "
            "rows; data.na_values lists what marks a missing value)");
  // A word is not a missing value: text in a feature column stops at its cell, as ever.
  write_text(path, "a,b,label\n1,,x\nred,2,y\n");
  TableOptions median;
  median.missing = MissingPolicy::kMedian;
  const auto text = load_table_csv(path, median);
  REQUIRE_FALSE(text.ok());
  CHECK(text.status().message() == path.string() + ":3:1: 'red' is not a number (feature 'a')");
  // A missing regression target is never filled.
  write_text(path, "a,y\n1,2\n3,NA\n");
  median.targets = {"y"};
  const auto target = load_table_csv(path, median);
  REQUIRE_FALSE(target.ok());
  CHECK(contains(target.status().message(),
                 ":3:2: 'NA' is a missing value (target 'y'); targets are never filled"));
}

TEST_CASE("data.na_values decides what is missing, ignoring case", "[data][missing]") {
  TempDir dir;
  const auto path = dir / "marks.csv";
  write_text(path, "a,b,label\n1,-,x\n2,NULL,y\n3,4,x\n5,6,y\n");
  TableOptions options;
  options.missing = MissingPolicy::kDropRows;
  // '-' is not a default mark: it is text.
  const auto strict = load_table_csv(path, options);
  REQUIRE_FALSE(strict.ok());
  CHECK(contains(strict.status().message(), ":2:2: '-' is not a number (feature 'b')"));
  options.na_values = {"-", "null"};
  const Dataset data = value_or_throw(load_table_csv(path, options));
  CHECK(data.sample_count == 2);
  CHECK(data.dropped_rows == 2);
  CHECK(data.features == std::vector<float>{3, 4, 5, 6});
  CHECK(data.source_lines == std::vector<int64_t>{4, 5});
}

TEST_CASE("missing: drop_rows drops rows with a missing feature, target or class",
          "[data][missing]") {
  TempDir dir;
  const auto path = dir / "drop.csv";
  write_text(path, "a,b,label\n1,2,x\n,3,y\n4,5,NA\n6,7,y\n8,9,x\n");
  TableOptions options;
  options.missing = MissingPolicy::kDropRows;
  const Dataset data = value_or_throw(load_table_csv(path, options));
  CHECK(data.sample_count == 3);
  CHECK(data.dropped_rows == 2);
  CHECK(data.class_names == std::vector<std::string>{"x", "y"});  // no class 'NA'
  CHECK(data.labels == std::vector<int32_t>{0, 1, 0});
  // Without drop_rows a missing class is an error: classes are never filled.
  options.missing = MissingPolicy::kMedian;
  const auto filled = load_table_csv(path, options);
  REQUIRE_FALSE(filled.ok());
  CHECK(contains(filled.status().message(),
                 ":4:3: 'NA' is a missing class (target 'label'); classes are never filled"));
}

TEST_CASE("an imputing policy keeps NaN, filled by statistics of the training split only",
          "[data][missing]") {
  TempDir dir;
  std::vector<std::pair<int, int>> holes;
  for (int row = 0; row < 40; row += 4) holes.emplace_back(row, row % 3);
  write_text(dir / "t.csv", table_with_holes(holes, ""));
  for (const std::string strategy : {"mean", "median", "most_frequent"}) {
    INFO(strategy);
    const DataSettings settings =
        value_or_throw(settings_from(dir, "data: {dataset: t.csv, missing: " + strategy +
                                              ", test_fraction: 0.25, scale: none}\n"));
    CHECK(missing_policy_name(settings.missing) == strategy);
    const PreparedData prepared = value_or_throw(prepare_data(settings, dir.path()));
    CHECK(prepared.imputed_cells == 10);
    REQUIRE(prepared.imputer.values.size() == 3);
    // The same rows loaded raw (NaN kept); the training rows are those whose lines the prepared
    // training part holds (whatever carved them out), their statistics computed the plain way.
    TableOptions raw_options = settings.table_options();
    const Dataset raw = value_or_throw(load_table_csv(dir / "t.csv", raw_options));
    std::vector<int64_t> train_rows;
    for (int64_t i = 0; i < raw.sample_count; ++i) {
      const auto& lines = prepared.split.train.source_lines;
      if (std::find(lines.begin(), lines.end(), raw.source_lines[static_cast<size_t>(i)]) !=
          lines.end()) {
        train_rows.push_back(i);
      }
    }
    REQUIRE(static_cast<int64_t>(train_rows.size()) == prepared.split.train.sample_count);
    REQUIRE(train_rows.size() < static_cast<size_t>(raw.sample_count));
    bool differs_from_all_rows = false;
    for (int f = 0; f < 3; ++f) {
      std::vector<float> train_known;
      std::vector<float> all_known;
      for (const int64_t i : train_rows) {
        const float v = raw.features[static_cast<size_t>(i * 3 + f)];
        if (!std::isnan(v)) train_known.push_back(v);
      }
      for (int64_t i = 0; i < raw.sample_count; ++i) {
        const float v = raw.features[static_cast<size_t>(i * 3 + f)];
        if (!std::isnan(v)) all_known.push_back(v);
      }
      float expected = 0;
      float over_all = 0;
      if (strategy == "mean") {
        double sum = 0;
        for (const float v : train_known) sum += static_cast<double>(v);
        expected = static_cast<float>(sum / static_cast<double>(train_known.size()));
        double all_sum = 0;
        for (const float v : all_known) all_sum += static_cast<double>(v);
        over_all = static_cast<float>(all_sum / static_cast<double>(all_known.size()));
      } else if (strategy == "median") {
        expected = naive_median(train_known);
        over_all = naive_median(all_known);
      } else {
        // The most frequent value, the smallest among ties.
        std::sort(train_known.begin(), train_known.end());
        size_t best = 0;
        for (const float v : train_known) {
          const auto n = static_cast<size_t>(std::count(train_known.begin(), train_known.end(), v));
          if (n > best) {
            best = n;
            expected = v;
          }
        }
        over_all = expected;
      }
      CHECK(prepared.imputer.values[static_cast<size_t>(f)] == Approx(expected).epsilon(1e-6));
      differs_from_all_rows =
          differs_from_all_rows ||
          std::fabs(prepared.imputer.values[static_cast<size_t>(f)] - over_all) > 1e-4f;
    }
    if (strategy != "most_frequent") CHECK(differs_from_all_rows);
    // No NaN is left in any part; the test part's holes hold the training statistic.
    for (const Dataset* part : {&prepared.split.train, &prepared.split.test}) {
      CHECK(std::none_of(part->features.begin(), part->features.end(),
                         [](float v) { return std::isnan(v); }));
    }
    const Dataset& test = prepared.split.test;
    for (int64_t i = 0; i < test.sample_count; ++i) {
      const auto line = std::find(raw.source_lines.begin(), raw.source_lines.end(),
                                  test.source_lines[static_cast<size_t>(i)]);
      const auto row = static_cast<size_t>(line - raw.source_lines.begin());
      for (size_t f = 0; f < 3; ++f) {
        if (!std::isnan(raw.features[row * 3 + f])) continue;
        CHECK(test.features[static_cast<size_t>(i) * 3 + f] == prepared.imputer.values[f]);
      }
    }
  }
}

TEST_CASE("a feature with no known training value cannot be filled", "[data][missing]") {
  TempDir dir;
  write_text(dir / "t.csv", "a,b,label\n1,,x\n2,,y\n3,,x\n4,,y\n5,,x\n6,,y\n");
  const DataSettings settings =
      value_or_throw(settings_from(dir, "data: {dataset: t.csv, missing: mean}\n"));
  const auto prepared = prepare_data(settings, dir.path());
  REQUIRE_FALSE(prepared.ok());
  CHECK(contains(prepared.status().message(), "data.missing: mean: feature 'b' of " +
                                                  (dir / "t.csv").string() +
                                                  " has no value in the training split"));
}

TEST_CASE("data.missing and data.na_values are read and validated in the YAML",
          "[data][missing][config]") {
  TempDir dir;
  const DataSettings plain = value_or_throw(settings_from(dir, "data: {}\n"));
  CHECK(plain.missing == MissingPolicy::kError);
  CHECK(plain.na_values == std::vector<std::string>{"", "NA", "N/A", "NaN", "null", "?"});
  // non_finite: drop_rows alone drops rows with holes too; data.missing says otherwise.
  CHECK(value_or_throw(settings_from(dir, "data: {non_finite: drop_rows}\n")).missing ==
        MissingPolicy::kDropRows);
  CHECK(value_or_throw(settings_from(dir, "data: {non_finite: drop_rows, missing: median}\n"))
            .missing == MissingPolicy::kMedian);
  CHECK(value_or_throw(settings_from(dir, "data: {na_values: ['', '-', missing]}\n")).na_values ==
        std::vector<std::string>{"", "-", "missing"});

  const auto wrong = Config::load_string("data:\n  missing: average\n", "c.yaml");
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.status().message() ==
        "c.yaml:2:12: key 'data.missing': unknown value 'average', expected one of: error, "
        "drop_rows, mean, median, most_frequent");
  const auto not_list = Config::load_string("data:\n  na_values: NA\n", "c.yaml");
  REQUIRE_FALSE(not_list.ok());
  CHECK(contains(not_list.status().message(), "c.yaml:2:14: key 'data.na_values'"));
  const auto typo = Config::load_string("data:\n  na_value: [NA]\n", "c.yaml");
  REQUIRE_FALSE(typo.ok());
  CHECK(contains(typo.status().message(), "c.yaml:2:3:"));
  CHECK(contains(typo.status().message(), "na_values"));
  const auto series = settings_from(
      dir, "data:\n  dataset: s.csv\n  series: {column: v, window: 3}\n  missing: mean\n");
  REQUIRE_FALSE(series.ok());
  CHECK(contains(series.status().message(), "run.yaml:4:12:"));
  CHECK(contains(series.status().message(), "data.series.gaps"));
}

TEST_CASE("the imputer's values travel in the checkpoint; older checkpoints have none",
          "[data][missing][checkpoint]") {
  detail::DataLayout layout;
  layout.sample_shape = {3};
  layout.class_names = {"x", "y"};
  layout.description = "dataset=t.csv";
  layout.imputer.strategy = MissingPolicy::kMedian;
  layout.imputer.values = {1.5f, -2.0f, 7.25f};
  Checkpoint checkpoint;
  detail::put_data_layout(checkpoint, layout);
  const detail::DataLayout loaded = value_or_throw(detail::get_data_layout(checkpoint));
  CHECK(loaded.imputer.strategy == MissingPolicy::kMedian);
  CHECK(loaded.imputer.values == layout.imputer.values);

  detail::DataLayout older = layout;
  older.imputer = FeatureImputer{};
  Checkpoint without;
  detail::put_data_layout(without, older);
  CHECK_FALSE(without.contains("data/imputer/strategy"));
  CHECK_FALSE(value_or_throw(detail::get_data_layout(without)).imputer.active());

  checkpoint.put_floats("data/imputer/values", {1.0f, 2.0f});
  const auto damaged = detail::get_data_layout(checkpoint);
  REQUIRE_FALSE(damaged.ok());
  CHECK(damaged.status().code() == StatusCode::kDataLoss);
  CHECK(contains(damaged.status().message(), "record 'data/imputer/values' holds 2 values"));
}

TEST_CASE("FeatureImputer::fill replaces NaN only", "[data][missing]") {
  FeatureImputer imputer;
  imputer.strategy = MissingPolicy::kMean;
  imputer.values = {10.0f, 20.0f};
  const float nan = std::nanf("");
  std::vector<float> rows = {1.0f, nan, nan, 4.0f, nan, nan};
  CHECK(imputer.fill(rows.data(), 3) == 4);
  CHECK(rows == std::vector<float>{1.0f, 20.0f, 10.0f, 4.0f, 10.0f, 20.0f});
}

TEST_CASE("a target of numbers that are not classes says how to train a regression",
          "[data][missing][regression]") {
  TempDir dir;
  // The diabetes table as scikit-learn's users write it: progression as 151.0, 75.0, ...
  std::ostringstream floats;
  floats << "bmi,bp,disease_progression\n";
  for (int i = 0; i < 60; ++i) floats << i % 7 << "," << i % 5 << "," << 25 + i * 5 << ".0\n";
  write_text(dir / "d.csv", floats.str());
  TableOptions options;
  options.target = "disease_progression";
  const auto float_target = load_table_csv(dir / "d.csv", options);
  REQUIRE_FALSE(float_target.ok());
  CHECK(float_target.status().message() ==
        (dir / "d.csv").string() +
            ":2:3: class '25.0' is not an integer >= 0: the target, 'disease_progression', holds "
            "numbers (60 distinct values in 60 rows), not class numbers; to predict its numbers "
            "(a regression), replace data.target by data.targets: [disease_progression] and "
            "set loss: mse");

  // The shipped diabetes.csv: integers, 214 distinct values in 442 rows.
  const std::filesystem::path diabetes = SWITCHYARD_SOURCE_DIR "/data/diabetes.csv";
  options.target = "progression";
  const auto integers = load_table_csv(diabetes, options);
  REQUIRE_FALSE(integers.ok());
  CHECK(contains(integers.status().message(), "the target, 'progression', holds "));
  CHECK(contains(integers.status().message(), "distinct values in 442 rows"));
  CHECK(contains(integers.status().message(),
                 "replace data.target by data.targets: [progression] and set loss: mse"));
  // Few integer classes with many rows each stay classes.
  std::ostringstream classes;
  classes << "a,label\n";
  for (int i = 0; i < 60; ++i) classes << i << "," << i % 3 << "\n";
  write_text(dir / "c.csv", classes.str());
  const Dataset three = value_or_throw(load_labeled_csv(dir / "c.csv"));
  CHECK(three.class_count() == 3);
}

TEST_CASE("a hole in the first row of a file without a header does not make it a header",
          "[data][missing]") {
  TempDir dir;
  const auto path = dir / "plain.csv";
  write_text(path, "1.5,,0.5,0\n2.5,3.5,NA,1\n0.5,1.5,2.5,0\n3.5,2.5,1.5,1\n");
  TableOptions options;
  options.missing = MissingPolicy::kMedian;
  const Dataset data = value_or_throw(load_table_csv(path, options));
  CHECK(data.table.header == "none");
  CHECK(data.sample_count == 4);
  CHECK(std::isnan(data.features[1]));
  CHECK(std::isnan(data.features[5]));
  // A header with an unnamed first column (pandas' index) still names the columns.
  write_text(path, ",a,b,label\n0,1.5,2.5,x\n1,0.5,NA,y\n");
  options.drop = {"1"};
  const Dataset named = value_or_throw(load_table_csv(path, options));
  CHECK(named.table.header == "names");
  CHECK(named.sample_count == 2);
  CHECK(named.table.feature_names() == std::vector<std::string>{"a", "b"});
}
