// `switchyard run configs/digits-cnn.yaml --profile trace.json`, one epoch on the fastest CPU
// backend of this build (onednn where built, else reference): the trace is what Perfetto's JSON
// importer takes (strict JSON, the fields every event needs, complete events properly nested on
// each track), every op event says what ran where, and the per-op totals account for the run's
// compute time to within 10%.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "profile/json_reader.h"
#include "profile/trace_check.h"
#include "test_support.h"

using switchyard::testing::checked_timed_events;
using switchyard::testing::cli;
using switchyard::testing::CommandResult;
using switchyard::testing::is_kind;
using switchyard::testing::JsonReader;
using switchyard::testing::JsonValue;
using switchyard::testing::plugin_file;
using switchyard::testing::read_json_file;
using switchyard::testing::run_command;
using Kind = JsonValue::Kind;

namespace {

// A shape as the trace writes it: "[64, 1, 8, 8]", or "[]" for a scalar.
bool is_shape_text(const std::string& text) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return false;
  return text.find_first_not_of("0123456789, ", 1) == text.size() - 1;
}

// Complete events on one track must nest (Perfetto drops or flags slices that overlap without
// one containing the other). Times are written with 3 decimals, so ends may be off by 0.001 us.
void check_nesting(std::vector<const JsonValue*> events) {
  std::sort(events.begin(), events.end(), [](const JsonValue* a, const JsonValue* b) {
    const double ta = a->at("ts").number, tb = b->at("ts").number;
    return ta != tb ? ta < tb : a->at("dur").number > b->at("dur").number;
  });
  constexpr double kRounding = 0.002;
  std::vector<double> open_ends;
  for (const JsonValue* e : events) {
    const double begin = e->at("ts").number;
    const double end = begin + e->at("dur").number;
    while (!open_ends.empty() && open_ends.back() <= begin + kRounding) open_ends.pop_back();
    if (!open_ends.empty()) {
      INFO(e->at("name").text << " at " << begin << " ends " << end - open_ends.back()
                              << " us after its enclosing event");
      CHECK(end <= open_ends.back() + kRounding);
    }
    open_ends.push_back(end);
  }
}

}  // namespace

TEST_CASE("a digits-cnn run's trace is valid and its op totals cover its compute time",
          "[profile][trace][cli]") {
  const std::string backend =
      std::filesystem::exists(plugin_file("onednn")) ? "onednn" : "reference";
  INFO("backend " << backend);
  const auto folder = std::filesystem::temp_directory_path() /
                      ("switchyard-cnn-trace-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  const auto trace_path = folder / "trace.json";
  const CommandResult run = run_command(
      "SWITCHYARD_DATA_DIR=" SWITCHYARD_SOURCE_DIR "/data SWITCHYARD_PLUGIN_PATH=" +
      std::string(SWITCHYARD_TEST_PLUGIN_DIR) + " SWITCHYARD_BACKENDS=" + backend + " " + cli() +
      " run " SWITCHYARD_SOURCE_DIR
      "/configs/digits-cnn.yaml --set train.epochs=1"
      " --set train.checkpoint=none --set train.progress=none --profile " +
      trace_path.string());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.output.find("backend: " + backend) != std::string::npos);

  const JsonValue trace = read_json_file(trace_path);  // throws on anything but strict JSON
  std::filesystem::remove_all(folder);
  REQUIRE(trace.kind == Kind::kObject);
  REQUIRE(is_kind(trace, "traceEvents", Kind::kArray));
  CHECK(is_kind(trace, "displayTimeUnit", Kind::kString));

  std::map<std::pair<double, double>, std::vector<const JsonValue*>> tracks;  // (pid, tid)
  std::map<std::string, double> op_totals_us;                                 // per op name
  std::map<std::string, std::vector<const JsonValue*>> spans;
  std::vector<const JsonValue*> ops;
  for (const JsonValue* event : checked_timed_events(trace.at("traceEvents"))) {
    const JsonValue& e = *event;
    tracks[{e.at("pid").number, e.at("tid").number}].push_back(&e);
    const std::string& category = e.at("cat").text;
    if (category == "span") spans[e.at("name").text].push_back(&e);
    if (category != "op") continue;
    ops.push_back(&e);
    op_totals_us[e.at("name").text] += e.at("dur").number;
    REQUIRE(is_kind(e, "args", Kind::kObject));
    const JsonValue& args = e.at("args");
    CHECK_FALSE(e.at("name").text.empty());
    REQUIRE(is_kind(args, "backend", Kind::kString));
    REQUIRE(is_kind(args, "fallback", Kind::kBool));
    if (!args.at("fallback").boolean) CHECK(args.at("backend").text == backend);
    REQUIRE(is_kind(args, "input_shapes", Kind::kArray));
    REQUIRE(is_kind(args, "output_shapes", Kind::kArray));
    // An op has inputs, outputs or both (sgd_update updates its inputs in place, fill has none).
    CHECK(args.at("input_shapes").items.size() + args.at("output_shapes").items.size() > 0);
    for (const char* list : {"input_shapes", "output_shapes"}) {
      for (const JsonValue& shape : args.at(list).items) {
        CHECK(shape.kind == Kind::kString);
        CHECK(is_shape_text(shape.text));
      }
    }
  }
  for (const auto& [track, events] : tracks) check_nesting(events);

  // One epoch of the 1437 training samples in batches of 64, then one evaluation.
  REQUIRE(spans["train_step"].size() == 23);
  REQUIRE(spans["evaluate"].size() == 1);
  REQUIRE(ops.size() > 23 * 20);

  // Compute time: the trainer's train_step spans (batch upload, forward, loss, backward, optimizer
  // step) plus its evaluate spans (the test split's forward passes). Everything else the run does
  // (reading and splitting the data, building the model, progress output) is set-up or I/O, not
  // compute. The per-op total below counts every op of the run, inside those spans or not (weight
  // initialisation, the epoch's loss read-back), so leaving ops out of the trace shows up as a
  // shortfall and recording one twice as an excess.
  double compute_us = 0;
  std::vector<std::pair<double, double>> compute_intervals;
  for (const char* name : {"train_step", "evaluate"}) {
    for (const JsonValue* span : spans[name]) {
      compute_us += span->at("dur").number;
      compute_intervals.emplace_back(span->at("ts").number,
                                     span->at("ts").number + span->at("dur").number);
    }
  }
  double op_total_us = 0;
  for (const auto& [name, total] : op_totals_us) op_total_us += total;
  double inside_us = 0;  // op time within the compute spans, which can never exceed them
  for (const JsonValue* op : ops) {
    const double begin = op->at("ts").number;
    const double end = begin + op->at("dur").number;
    for (const auto& [span_begin, span_end] : compute_intervals) {
      if (begin >= span_begin - 0.002 && end <= span_end + 0.002) {
        inside_us += op->at("dur").number;
        break;
      }
    }
  }
  const double ratio = op_total_us / compute_us;
  INFO("per-op total " << op_total_us / 1e3 << " ms, compute " << compute_us / 1e3 << " ms, ratio "
                       << ratio << ", within the spans " << inside_us / 1e3 << " ms");
  CHECK(inside_us <= compute_us);
  CHECK(std::abs(ratio - 1.0) <= 0.10);

  // The summary the run printed is the same set of ops: "total  <calls>  <host ms> ...".
  const size_t total_at = run.output.find("\ntotal ");
  REQUIRE(total_at != std::string::npos);
  std::istringstream total_line(run.output.substr(total_at + 7));
  double calls = 0;
  double host_ms = 0;
  total_line >> calls >> host_ms;
  CHECK(calls == static_cast<double>(ops.size()));
  CHECK(host_ms == Approx(op_total_us / 1e3).epsilon(0.001));
}
