// `switchyard bench step --precision`: the training step the trainer runs, in f32 or mixed
// precision, as JSON, with a trace that shows which dtype each op ran in.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "json_test_support.h"
#include "test_support.h"

using switchyard::testing::cli;
using switchyard::testing::Json;
using switchyard::testing::parse_json;
using switchyard::testing::read_json_file;
using switchyard::testing::run_command;

namespace {

std::string environment() {
  return std::string("SWITCHYARD_BACKENDS=reference SWITCHYARD_PLUGIN_PATH=") +
         SWITCHYARD_TEST_PLUGIN_DIR + " ";
}

std::string step_command(const std::string& precision, const std::string& trace) {
  return "(" + environment() + cli() +
         " bench step --layers 12,16,4 --batch 8 --repetitions 2 --warmup 1 --json --precision " +
         precision + " --profile " + trace + " 2>/dev/null)";
}

// The dtypes each op name ran with in a trace: "matmul" -> {"bf16"}.
std::map<std::string, std::set<std::string>> op_dtypes(const std::filesystem::path& trace) {
  std::map<std::string, std::set<std::string>> dtypes;
  const Json document = read_json_file(trace);  // outlives the loop below
  for (const Json& e : document.at("traceEvents")) {
    if (!e.contains("cat") || e.at("cat") != "op") continue;
    for (const Json& d : e.at("args").at("input_dtypes")) {
      dtypes[e.at("name").get<std::string>()].insert(d.get<std::string>());
    }
  }
  return dtypes;
}

}  // namespace

TEST_CASE("bench step runs the trainer's mixed-precision recipe", "[profile][cli]") {
  const auto folder = std::filesystem::temp_directory_path() /
                      ("switchyard-bench-step-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  for (const std::string precision : {"f32", "bf16", "f16"}) {
    INFO(precision);
    const auto trace = folder / (precision + ".json");
    const auto result = run_command(step_command(precision, trace.string()));
    INFO(result.output);
    REQUIRE(result.exit_code == 0);
    const Json report = parse_json(result.output);
    CHECK(report.at("bench") == "step");
    CHECK(report.at("precision") == precision);
    CHECK(report.at("median_ms").get<double>() > 0);
    CHECK(report.at("parameters") == 12 * 16 + 16 + 16 * 4 + 4);
    const auto dtypes = op_dtypes(trace);
    // Products in the run's precision, the loss and the optimizer (master weights) in f32.
    CHECK(dtypes.at("matmul") == std::set<std::string>{precision});
    CHECK(dtypes.at("cross_entropy").count("f32") == 1);
    CHECK(dtypes.at("sgd_update") == std::set<std::string>{"f32"});
    // Bias gradients are summed in the products' dtype; f16 adds an f32 sum over every gradient
    // per step (the loss scaler's overflow check), bf16 has no f32 reduction at all.
    if (precision != "f32") {
      CHECK(dtypes.at("reduce_sum").count(precision) == 1);
      CHECK(dtypes.at("reduce_sum").count("f32") == (precision == "f16" ? 1u : 0u));
    }
  }
  const auto bad = run_command(environment() + cli() + " bench step --precision f8");
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("f8") != std::string::npos);
  std::filesystem::remove_all(folder);
}
