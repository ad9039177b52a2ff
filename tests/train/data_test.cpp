// Loading, splitting, scaling and ordering the data sets.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>

#include "switchyard/data.h"
#include "train/train_test_support.h"

using namespace switchyard;
using switchyard::testing::TempDir;

namespace {

Dataset load(const std::string& name) {
  switchyard::testing::use_repository_data();
  return value_or_throw(load_dataset(name, {}));
}

std::map<int32_t, int64_t> class_counts(const Dataset& data) {
  std::map<int32_t, int64_t> counts;
  for (const int32_t label : data.labels) ++counts[label];
  return counts;
}

}  // namespace

TEST_CASE("the shipped data sets load with their documented sizes and classes", "[data]") {
  const Dataset digits = load("digits");  // gzip, no header
  CHECK(digits.sample_count == 1797);
  CHECK(digits.feature_count() == 64);
  CHECK(digits.class_count() == 10);
  CHECK(digits.class_names[3] == "3");
  CHECK(digits.features[2] == 5.0f);  // first row: 0,0,5,13,9,...
  CHECK(digits.labels[0] == 0);

  const Dataset iris = load("iris");
  CHECK(iris.sample_count == 150);
  CHECK(iris.feature_count() == 4);
  CHECK(iris.class_names == std::vector<std::string>{"setosa", "versicolor", "virginica"});
  CHECK(iris.features[0] == 5.1f);

  const Dataset cancer = load("breast_cancer");
  CHECK(cancer.sample_count == 569);
  CHECK(cancer.feature_count() == 30);
  CHECK(cancer.class_names == std::vector<std::string>{"malignant", "benign"});
}

TEST_CASE("a malformed CSV is rejected naming file, line and column", "[data]") {
  TempDir dir;
  const auto path = dir / "bad.csv";
  switchyard::testing::write_text(path, "3,2,a,b\n1.0,2.0,0\n1.5,x,1\n2.0,2.5,1\n");
  const auto result = load_labeled_csv(path);
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == StatusCode::kInvalidArgument);
  CHECK(result.status().message().find(path.string() + ":3:2") != std::string::npos);
  CHECK(result.status().message().find("'x' is not a number") != std::string::npos);
}

TEST_CASE("a header whose sample count disagrees with the rows is an error", "[data]") {
  TempDir dir;
  const auto path = dir / "short.csv";
  switchyard::testing::write_text(path, "4,2,a,b\n1,2,0\n3,4,1\n");
  const auto result = load_labeled_csv(path);
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().message().find("header says 4 samples, the file has 2") !=
        std::string::npos);
}

TEST_CASE("an unknown data set name lists the built-in names", "[data]") {
  const auto result = load_dataset("digitz", std::filesystem::temp_directory_path());
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == StatusCode::kNotFound);
  CHECK(result.status().message().find("digits, iris, breast_cancer") != std::string::npos);
}

TEST_CASE("the split is stratified, complete, disjoint and decided by the seed", "[data]") {
  const Dataset digits = load("digits");
  const DataSplit split = value_or_throw(stratified_split(digits, 0.2, 7));
  CHECK(split.test.sample_count == 360);  // ceil(0.2 * 1797), as scikit-learn
  CHECK(split.train.sample_count == 1437);
  const auto all = class_counts(digits);
  const auto test = class_counts(split.test);
  for (const auto& [label, count] : all) {
    // Every class gives its share to within one sample.
    CHECK(std::abs(static_cast<double>(test.at(label)) - 0.2 * static_cast<double>(count)) <= 1.0);
  }
  // Rows are whole samples, none lost and none duplicated: compare multisets of rows.
  std::multiset<std::vector<float>> rows_all, rows_split;
  for (int64_t i = 0; i < digits.sample_count; ++i) {
    rows_all.insert({digits.features.begin() + i * 64, digits.features.begin() + (i + 1) * 64});
  }
  for (const Dataset* part : {&split.train, &split.test}) {
    for (int64_t i = 0; i < part->sample_count; ++i) {
      rows_split.insert({part->features.begin() + i * 64, part->features.begin() + (i + 1) * 64});
    }
  }
  CHECK(rows_all == rows_split);

  const DataSplit again = value_or_throw(stratified_split(digits, 0.2, 7));
  CHECK(again.test.features == split.test.features);
  const DataSplit other = value_or_throw(stratified_split(digits, 0.2, 8));
  CHECK(other.test.features != split.test.features);
}

TEST_CASE("scalers are fitted on the training split only", "[data]") {
  const Dataset iris = load("iris");
  DataSplit split = value_or_throw(stratified_split(iris, 0.3, 1));
  const FeatureScaler scaler =
      value_or_throw(FeatureScaler::fit(ScaleMode::kStandard, 1.0, split.train));
  REQUIRE(scaler.apply(split.train).ok());
  for (int64_t f = 0; f < 4; ++f) {
    double sum = 0, squares = 0;
    for (int64_t i = 0; i < split.train.sample_count; ++i) {
      const double v = split.train.features[i * 4 + f];
      sum += v;
      squares += v * v;
    }
    const double n = static_cast<double>(split.train.sample_count);
    CHECK(sum / n == Approx(0.0).margin(1e-5));
    CHECK(squares / n == Approx(1.0).epsilon(1e-4));
  }
  // The offsets are the training means, which differ from the means of all samples.
  double all_mean = 0;
  for (int64_t i = 0; i < iris.sample_count; ++i)
    all_mean += static_cast<double>(iris.features[i * 4]);
  all_mean /= static_cast<double>(iris.sample_count);
  CHECK(std::abs(static_cast<double>(scaler.offset[0]) - all_mean) > 1e-4);

  const FeatureScaler divide =
      value_or_throw(FeatureScaler::fit(ScaleMode::kDivide, 16.0, split.train));
  CHECK(divide.factor[2] == 1.0f / 16.0f);
  CHECK(divide.offset[2] == 0.0f);
  const FeatureScaler minmax =
      value_or_throw(FeatureScaler::fit(ScaleMode::kMinMax, 1.0, split.train));
  Dataset train = split.train;
  REQUIRE(minmax.apply(train).ok());
  CHECK(*std::min_element(train.features.begin(), train.features.end()) ==
        Approx(0.0f).margin(1e-6));
  CHECK(*std::max_element(train.features.begin(), train.features.end()) == Approx(1.0f));
}

TEST_CASE("epoch order is a permutation that depends only on seed and epoch", "[data]") {
  const auto a = epoch_permutation(100, 42, 3);
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 100; ++i) CHECK(sorted[i] == i);
  CHECK(epoch_permutation(100, 42, 3) == a);
  CHECK(epoch_permutation(100, 42, 4) != a);
  CHECK(epoch_permutation(100, 43, 3) != a);
}

TEST_CASE("image_shape reshapes samples when the element count matches", "[data]") {
  Dataset digits = load("digits");
  REQUIRE(digits.reshape_samples({1, 8, 8}).ok());
  CHECK(digits.sample_shape == std::vector<int64_t>{1, 8, 8});
  const Status bad = digits.reshape_samples({1, 7, 7});
  CHECK(bad.code() == StatusCode::kInvalidArgument);
  CHECK(bad.message().find("64 features") != std::string::npos);
}
