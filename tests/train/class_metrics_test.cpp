// Per-class precision, recall and F1 and the confusion matrix (switchyard/metrics.h), with values
// checked by hand; tests/cli checks the same numbers against scikit-learn on real predictions.
#include <catch2/catch.hpp>

#include "switchyard/metrics.h"

using namespace switchyard;

TEST_CASE("per-class scores and averages follow scikit-learn's definitions", "[metrics]") {
  // truth:     0 0 0 1 1 2 ; predicted: 0 1 0 1 1 0  ->  rows [2 1 0] [0 2 0] [1 0 0]
  ConfusionMatrix matrix(3);
  matrix.add_all({0, 0, 0, 1, 1, 2}, {0, 1, 0, 1, 1, 0});
  matrix.add(3, 0);  // outside the classes: ignored, and counted as such
  matrix.add(0, -1);
  CHECK(matrix.samples() == 6);
  CHECK(matrix.ignored() == 2);
  CHECK(matrix.counts() == std::vector<int64_t>{2, 1, 0, 0, 2, 0, 1, 0, 0});
  const ClassificationReport r = classification_report(matrix);
  REQUIRE(r.per_class.size() == 3);
  CHECK(r.per_class[0].precision == Approx(2.0 / 3));
  CHECK(r.per_class[0].recall == Approx(2.0 / 3));
  CHECK(r.per_class[0].f1 == Approx(2.0 / 3));
  CHECK(r.per_class[0].support == 3);
  CHECK(r.per_class[1].precision == Approx(2.0 / 3));
  CHECK(r.per_class[1].recall == 1.0);
  CHECK(r.per_class[1].f1 == Approx(0.8));
  // Never predicted: precision 0 (zero_division=0), and so F1 0.
  CHECK(r.per_class[2].precision == 0.0);
  CHECK(r.per_class[2].recall == 0.0);
  CHECK(r.per_class[2].f1 == 0.0);
  CHECK(r.per_class[2].support == 1);
  CHECK(r.macro.precision == Approx(4.0 / 9));
  CHECK(r.macro.recall == Approx(5.0 / 9));
  CHECK(r.macro.f1 == Approx((2.0 / 3 + 0.8) / 3));
  CHECK(r.weighted.precision == Approx(10.0 / 18));
  CHECK(r.weighted.recall == Approx(4.0 / 6));
  CHECK(r.weighted.f1 == Approx(0.6));
  CHECK(r.accuracy == Approx(4.0 / 6));
  CHECK(r.samples == 6);
}

TEST_CASE("a class with no samples counts as 0 in the macro average", "[metrics]") {
  ConfusionMatrix matrix(3);
  matrix.add_all({0, 1, 1}, {0, 1, 1});
  const ClassificationReport r = classification_report(matrix);
  CHECK(r.per_class[2].support == 0);
  CHECK(r.per_class[2].f1 == 0.0);
  CHECK(r.macro.f1 == Approx(2.0 / 3));
  CHECK(r.weighted.f1 == 1.0);
  CHECK(r.accuracy == 1.0);
}

TEST_CASE("the printed report names the classes and caps the matrix", "[metrics]") {
  ConfusionMatrix matrix(2);
  matrix.add_all({0, 0, 1, 1}, {0, 1, 1, 1});
  const std::string text =
      format_classification_report(classification_report(matrix), {"cat", "dog"});
  CHECK(text ==
        "  class        precision    recall        f1   support\n"
        "  cat             1.0000    0.5000    0.6667         2\n"
        "  dog             0.6667    1.0000    0.8000         2\n"
        "  macro avg       0.8333    0.7500    0.7333         4\n"
        "  weighted avg    0.8333    0.7500    0.7333         4\n"
        "  accuracy                            0.7500         4\n"
        "  confusion matrix (rows: true class, columns: predicted class, in the same order)\n"
        "                 0   1\n"
        "  cat            1   1\n"
        "  dog            0   2\n");
  // Names of another count fall back to indices.
  CHECK(format_classification_report(classification_report(matrix), {"only"}).find("  0    ") !=
        std::string::npos);

  ConfusionMatrix many(21);
  for (int c = 0; c < 21; ++c) many.add(c, c);
  const std::string capped = format_classification_report(classification_report(many));
  CHECK(capped.find("  20              1.0000") != std::string::npos);  // every class's row
  CHECK(capped.find("confusion matrix: 21 classes, more than the 20 printed here") !=
        std::string::npos);
  CHECK(capped.find("rows: true class") == std::string::npos);
}
