// `switchyard bench sequence`: the Transformer and LSTM classifiers of issue 12's speed targets,
// a training step or a batch-1 inference pass, as JSON, with a trace of the ops they ran.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <set>
#include <string>

#include "json_test_support.h"
#include "test_support.h"

using switchyard::testing::cli;
using switchyard::testing::Json;
using switchyard::testing::parse_json;
using switchyard::testing::read_json_file;
using switchyard::testing::run_command;

namespace {

std::string sequence_command(const std::string& arguments,
                             const std::string& repetitions = "--repetitions 1 --warmup 0") {
  return std::string("(SWITCHYARD_BACKENDS=reference SWITCHYARD_PLUGIN_PATH=") +
         SWITCHYARD_TEST_PLUGIN_DIR + " " + cli() + " bench sequence " + repetitions + " --json " +
         arguments + " 2>/dev/null)";
}

std::set<std::string> op_names(const std::filesystem::path& trace) {
  std::set<std::string> names;
  const Json document = read_json_file(trace);
  for (const Json& e : document.at("traceEvents")) {
    if (e.contains("cat") && e.at("cat") == "op") names.insert(e.at("name").get<std::string>());
  }
  return names;
}

}  // namespace

TEST_CASE("bench sequence times the issue's Transformer and LSTM shapes", "[profile][cli]") {
  const auto folder = std::filesystem::temp_directory_path() /
                      ("switchyard-bench-sequence-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  // Parameter counts equal to PyTorch's for the same modules (torch_peer.py reports them too).
  struct Case {
    std::string model;
    int64_t parameters, sequence_length;
  };
  for (const Case& c : {Case{"transformer", 1725540, 64}, Case{"lstm", 947300, 50}}) {
    INFO(c.model);
    const auto trace = folder / (c.model + ".json");
    const auto step = run_command(
        sequence_command("--model " + c.model + " --batch 2 --profile " + trace.string()));
    INFO(step.output);
    REQUIRE(step.exit_code == 0);
    const Json report = parse_json(step.output);
    CHECK(report.at("bench") == "sequence");
    CHECK(report.at("mode") == "step");
    CHECK(report.at("batch") == 2);
    CHECK(report.at("sequence_length") == c.sequence_length);
    CHECK(report.at("parameters") == c.parameters);
    CHECK(report.at("median_ms").get<double>() > 0);
    const std::set<std::string> ops = op_names(trace);
    CHECK(ops.count("cross_entropy_backward") == 1);
    CHECK(ops.count("sgd_update") == 1);

    const auto inference = run_command(sequence_command("--model " + c.model + " --inference"));
    INFO(inference.output);
    REQUIRE(inference.exit_code == 0);
    const Json latency = parse_json(inference.output);
    CHECK(latency.at("mode") == "inference");
    CHECK(latency.at("batch") == 1);  // the default with --inference
  }
  const auto bad = run_command(sequence_command("--model gru"));
  CHECK(bad.exit_code == 2);
  std::filesystem::remove_all(folder);
}

TEST_CASE("bench sequence --capture times replayed steps and passes", "[profile][cli][capture]") {
  for (const std::string model : {"transformer", "lstm"}) {
    INFO(model);
    const auto step = run_command(sequence_command("--model " + model + " --batch 2 --capture on",
                                                   "--repetitions 3 --warmup 1"));
    INFO(step.output);
    REQUIRE(step.exit_code == 0);
    const Json report = parse_json(step.output);
    // Four steps: eager, recorded, then replayed.
    CHECK(report.at("capture").get<std::string>().rfind("2 steps replayed, 2 eager; ", 0) == 0);
    CHECK(report.at("median_ms").get<double>() > 0);

    const auto pass =
        run_command(sequence_command("--model " + model + " --inference --capture on"));
    INFO(pass.output);
    REQUIRE(pass.exit_code == 0);
    CHECK(parse_json(pass.output)
              .at("capture")
              .get<std::string>()
              .rfind("replayed, recorded as ", 0) == 0);
  }
  // auto follows train.capture for a step (native capture only) and predict.capture for a pass
  // (on everywhere: op by op here).
  const auto automatic = run_command(sequence_command("--model lstm --batch 2 --capture auto"));
  REQUIRE(automatic.exit_code == 0);
  CHECK(parse_json(automatic.output).at("capture") ==
        "off (auto: the reference plugin has no native capture)");
  const auto automatic_pass =
      run_command(sequence_command("--model lstm --inference --capture auto"));
  REQUIRE(automatic_pass.exit_code == 0);
  CHECK_THAT(parse_json(automatic_pass.output).at("capture").get<std::string>(),
             Catch::StartsWith("replayed, recorded as ") &&
                 Catch::Contains("replayed op by op: the reference plugin has no native capture"));
  const auto eager = run_command(sequence_command("--model lstm --batch 2"));
  REQUIRE(eager.exit_code == 0);
  CHECK(parse_json(eager.output).at("capture") == "off");
  CHECK(run_command(sequence_command("--model lstm --capture always")).exit_code == 2);
}
