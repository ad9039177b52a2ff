// history.csv and curves.svg from a history, and the progress bar's whole-run ETA.
#include <catch2/catch.hpp>

#include <cmath>

#include "train/progress.h"
#include "train/run_files.h"

using namespace switchyard;
using namespace switchyard::detail;

namespace {

std::vector<EpochMetrics> history_of(int epochs, bool validation) {
  std::vector<EpochMetrics> history;
  for (int e = 1; e <= epochs; ++e) {
    EpochMetrics m;
    m.epoch = e;
    m.train_loss = 1.0 / e;
    m.train_accuracy = 0.5 + 0.05 * e;
    m.test_loss = 1.1 / e;
    m.test_accuracy = 0.5 + 0.04 * e;
    m.has_validation = validation;
    m.validation_loss = 1.2 / e;
    m.validation_accuracy = 0.5 + 0.03 * e;
    m.validation_f1_macro = 0.4 + 0.03 * e;
    m.learning_rate = 0.001;
    m.epoch_seconds = 0.25;
    history.push_back(m);
  }
  return history;
}

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("history.csv has one row per epoch with the split's columns", "[train][curves]") {
  const std::string text = history_csv_text(history_of(3, true));
  CHECK(text ==
        "epoch,train_loss,train_accuracy,val_loss,val_accuracy,val_f1_macro,test_loss,"
        "test_accuracy,learning_rate,epoch_seconds\n"
        "1,1,0.55,1.2,0.53,0.43,1.1,0.54,0.001,0.25\n"
        "2,0.5,0.6,0.6,0.56,0.46,0.55,0.58,0.001,0.25\n"
        "3,0.333333333,0.65,0.4,0.59,0.49,0.366666667,0.62,0.001,0.25\n");
  std::vector<EpochMetrics> broken = history_of(1, false);
  broken[0].test_loss = NAN;
  CHECK(history_csv_text(broken) ==
        "epoch,train_loss,train_accuracy,test_loss,test_accuracy,learning_rate,epoch_seconds\n"
        "1,1,0.55,nan,0.54,0.001,0.25\n");
}

TEST_CASE("curves.svg draws one polyline per series, with axes, a legend and an escaped title",
          "[train][curves]") {
  const std::string svg = curves_svg_text(history_of(12, true), "a&b <run>");
  CHECK(svg.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=", 0) == 0);
  CHECK(count(svg, "<polyline class=\"series\"") == 4);
  for (const char* id : {"loss-train", "loss-val", "accuracy-train", "accuracy-val"}) {
    CHECK(count(svg, std::string("id=\"") + id + "\"") == 1);
  }
  CHECK(count(svg, "a&amp;b &lt;run&gt;") == 2);  // the <title> and the caption
  CHECK(count(svg, ">epoch</text>") == 2);        // one x axis label per panel
  CHECK(count(svg, ">validation</text>") == 2);   // in each panel's legend
  CHECK(count(svg, "href") == 0);
  CHECK(count(svg, "<script") == 0);
  // A NaN value leaves its point out instead of writing "nan" into the coordinates.
  std::vector<EpochMetrics> broken = history_of(3, false);
  broken[1].test_loss = NAN;
  const std::string with_gap = curves_svg_text(broken, "t");
  CHECK(count(with_gap, "nan") == 0);
  CHECK(count(with_gap, "id=\"loss-test\"") == 1);
}

TEST_CASE("the ETA covers the rest of the run, not only the epoch", "[train][progress]") {
  // Before any epoch ended: this epoch's pace. 10 of 40 steps in 2 s: 8 s per epoch, 6 s left in
  // this one, and 3 more epochs.
  CHECK(estimate_remaining_seconds(2.0, 10, 40, 0, 3) == Approx(6.0 + 24.0));
  // After some ended: their mean wall time (evaluation included).
  CHECK(estimate_remaining_seconds(1.0, 5, 40, 10.0, 2) == Approx(9.0 + 20.0));
  CHECK(estimate_remaining_seconds(12.0, 40, 40, 10.0, 0) == Approx(0.0));
  CHECK(estimate_remaining_seconds(0.0, 0, 40, 0, 5) < 0);  // nothing measured yet
  CHECK(duration_text(-1) == "?");
  CHECK(duration_text(42.4) == "42s");
  CHECK(duration_text(187) == "3:07");
  CHECK(duration_text(3723) == "1:02:03");
}

TEST_CASE("the progress bar shows the run's ETA on a terminal and a log stays plain",
          "[train][progress]") {
  for (const ProgressMode mode : {ProgressMode::kBar, ProgressMode::kLog}) {
    std::FILE* out = std::tmpfile();
    REQUIRE(out != nullptr);
    {
      ProgressReporter progress(mode, 3, out);
      progress.start_epoch(1, 2);
      progress.step_done(1);
      progress.step_done(2);
      progress.end_epoch(history_of(1, false)[0]);
    }
    std::rewind(out);
    std::string text;
    for (int c = std::fgetc(out); c != EOF; c = std::fgetc(out)) text += static_cast<char>(c);
    std::fclose(out);
    INFO(text);
    CHECK((text.find("run ETA") != std::string::npos) == (mode == ProgressMode::kBar));
    CHECK(text.find("epoch 1/3  train loss 1.0000") != std::string::npos);
  }
}
