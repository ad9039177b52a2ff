// data.validation_fraction: a stratified, seeded validation split carved from the training part,
// disjoint from the test split (which stays as it was), and a scaler fitted without it.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>

#include "switchyard/data.h"
#include "train/train_test_support.h"

using namespace switchyard;

namespace {

std::map<int32_t, int64_t> class_counts(const Dataset& data) {
  std::map<int32_t, int64_t> counts;
  for (const int32_t label : data.labels) ++counts[label];
  return counts;
}

std::set<int64_t> lines_of(const Dataset& data) {
  return {data.source_lines.begin(), data.source_lines.end()};
}

Dataset load(const std::string& name) {
  switchyard::testing::use_repository_data();
  return value_or_throw(load_dataset(name, {}));
}

}  // namespace

TEST_CASE("the validation split is stratified, seeded and disjoint from train and test",
          "[data][validation]") {
  const Dataset digits = load("digits");
  REQUIRE(digits.source_lines.size() == 1797);
  const DataSplit plain = value_or_throw(stratified_split(digits, 0.2, 7));
  DataSplit split = plain;
  REQUIRE(carve_validation(split, 0.25, 7).ok());
  CHECK(split.has_validation());
  CHECK(split.validation.sample_count == 360);  // ceil(0.25 * 1437)
  CHECK(split.train.sample_count == 1437 - 360);
  // The test split is exactly the one a run without validation uses.
  CHECK(split.test.features == plain.test.features);
  CHECK(split.test.labels == plain.test.labels);
  // Every sample lands in exactly one part (by its line in the file).
  const std::set<int64_t> train = lines_of(split.train);
  const std::set<int64_t> validation = lines_of(split.validation);
  const std::set<int64_t> test = lines_of(split.test);
  CHECK(train.size() + validation.size() + test.size() == 1797);
  std::set<int64_t> all = train;
  all.insert(validation.begin(), validation.end());
  all.insert(test.begin(), test.end());
  CHECK(all.size() == 1797);
  // Each class gives a quarter of its training samples, to within one.
  const auto before = class_counts(plain.train);
  const auto held = class_counts(split.validation);
  for (const auto& [label, count] : before) {
    CHECK(std::abs(static_cast<double>(held.at(label)) - 0.25 * static_cast<double>(count)) <= 1.0);
  }
  // The seed decides, and the draw is not the test draw's stream again.
  DataSplit again = plain;
  REQUIRE(carve_validation(again, 0.25, 7).ok());
  CHECK(again.validation.features == split.validation.features);
  DataSplit other = plain;
  REQUIRE(carve_validation(other, 0.25, 8).ok());
  CHECK(other.validation.features != split.validation.features);
}

TEST_CASE("a validation fraction that leaves a part empty is an error", "[data][validation]") {
  const Dataset iris = load("iris");
  DataSplit split = value_or_throw(stratified_split(iris, 0.2, 0));
  DataSplit tiny;
  tiny.train = split.train.subset({0, 1});
  const Status empty = carve_validation(tiny, 0.9, 0);
  CHECK(empty.code() == StatusCode::kInvalidArgument);
  CHECK(empty.message() == iris.name +
                               ": a validation fraction of 0.900000 of 2 samples leaves one split "
                               "empty");
  CHECK_FALSE(carve_validation(split, 1.0, 0).ok());
}

TEST_CASE("a split that leaves a part empty names the data file", "[data][validation]") {
  // One long line where many rows were meant: the file is named, so that it can be looked at.
  switchyard::testing::TempDir dir;
  const auto path = dir / "one-row.csv";
  std::string row;
  for (int k = 0; k < 1000; ++k) row += std::to_string(k) + ",";
  switchyard::testing::write_text(path, row + "0\n");
  DataSettings settings;
  settings.dataset = path.string();
  const auto prepared = prepare_data(settings, {});
  REQUIRE_FALSE(prepared.ok());
  CHECK(prepared.status().code() == StatusCode::kInvalidArgument);
  CHECK(prepared.status().message() ==
        path.string() + ": a test fraction of 0.200000 of 1 samples leaves one split empty");
}

TEST_CASE("prepare_data fits the scaler on the training part, without validation or test samples",
          "[data][validation]") {
  switchyard::testing::use_repository_data();
  DataSettings settings;
  settings.dataset = "iris";
  settings.scale = ScaleMode::kStandard;
  settings.validation_fraction = 0.3;
  const PreparedData prepared = value_or_throw(prepare_data(settings, {}));
  CHECK(prepared.split.train.sample_count == 84);  // 120 - ceil(0.3 * 120)
  CHECK(prepared.split.validation.sample_count == 36);
  CHECK(prepared.split.test.sample_count == 30);
  // The same split by hand from the raw data: the fitted means are those of its training part.
  DataSplit raw = value_or_throw(stratified_split(load("iris"), 0.2, 0));
  const Dataset train_and_validation = raw.train;
  REQUIRE(carve_validation(raw, 0.3, 0).ok());
  const FeatureScaler expected =
      value_or_throw(FeatureScaler::fit(ScaleMode::kStandard, 1.0, raw.train));
  CHECK(prepared.scaler.offset == expected.offset);
  CHECK(prepared.scaler.factor == expected.factor);
  const FeatureScaler leaky =
      value_or_throw(FeatureScaler::fit(ScaleMode::kStandard, 1.0, train_and_validation));
  CHECK(prepared.scaler.offset != leaky.offset);
  // The validation samples are scaled with the training fit.
  REQUIRE(expected.apply(raw.validation).ok());
  CHECK(prepared.split.validation.features == raw.validation.features);
}
