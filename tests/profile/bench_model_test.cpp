// `switchyard bench model`: latency of a configuration's model on synthetic batches, as JSON, and
// the trace its --profile option writes.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "json_test_support.h"
#include "test_support.h"

using switchyard::testing::cli;
using switchyard::testing::Json;
using switchyard::testing::parse_json;
using switchyard::testing::read_json_file;
using switchyard::testing::run_command;

namespace {

std::filesystem::path temp_folder() {
  const auto folder = std::filesystem::temp_directory_path() /
                      ("switchyard-bench-model-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  return folder;
}

// A digits MLP; the predict section names a checkpoint that does not exist, so the weights are
// freshly initialised.
std::filesystem::path write_config(const std::filesystem::path& folder) {
  const auto path = folder / "mlp.yaml";
  std::ofstream(path) << "seed: 3\n"
                         "data: {dataset: digits, scale: divide, divisor: 16}\n"
                         "model:\n"
                         "  layers:\n"
                         "    - {type: linear, out_features: 32}\n"
                         "    - {type: relu}\n"
                         "    - {type: linear, out_features: 10}\n"
                         "predict: {checkpoint: missing.ckpt}\n";
  return path;
}

// The environment the CLI needs to find the repository's data and this build's plugins only.
std::string environment() {
  return std::string("SWITCHYARD_DATA_DIR=") + SWITCHYARD_SOURCE_DIR +
         "/data SWITCHYARD_BACKENDS=reference SWITCHYARD_PLUGIN_PATH=" +
         SWITCHYARD_TEST_PLUGIN_DIR + " ";
}

}  // namespace

TEST_CASE("bench model reports latency per batch and writes a trace", "[profile][cli]") {
  const auto folder = temp_folder();
  const auto config = write_config(folder);
  const auto trace = folder / "trace.json";
  // stderr (the profile summary, with --json) is dropped so stdout is the JSON object alone.
  const auto result = run_command("(" + environment() + cli() + " bench model " + config.string() +
                                  " --batch-size 16 --repetitions 3 --warmup 1 --json --profile " +
                                  trace.string() + " 2>/dev/null)");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  const Json report = parse_json(result.output);
  CHECK(report.at("bench") == "model");
  CHECK(report.at("device") == "reference:0");
  CHECK(report.at("weights") == "random");
  CHECK(report.at("batch_size") == 16);
  CHECK(report.at("repetitions") == 3);
  const double median_ms = report.at("median_ms").get<double>();
  REQUIRE(median_ms > 0);
  CHECK(report.at("min_ms").get<double>() <= median_ms);
  CHECK(report.at("samples_per_second").get<double>() ==
        Approx(16 / (median_ms / 1e3)).epsilon(1e-3));

  const Json events = read_json_file(trace).at("traceEvents");
  int forward_spans = 0;
  std::vector<std::string> matmul_inputs;
  for (const Json& e : events) {
    if (e.at("ph") != "X") continue;
    if (e.at("cat") == "span" && e.at("name") == "forward") ++forward_spans;
    if (e.at("cat") == "op" && e.at("name") == "matmul") {
      matmul_inputs.push_back(e.at("args").at("input_shapes").at(0).get<std::string>());
    }
  }
  CHECK(forward_spans == 3);  // the timed repetitions only, not the warm-up
  // Two linear layers per pass: 64 digit features in, then 32 hidden units.
  CHECK(matmul_inputs == std::vector<std::string>{"[16, 64]", "[16, 32]", "[16, 64]", "[16, 32]",
                                                  "[16, 64]", "[16, 32]"});
  std::filesystem::remove_all(folder);
}

TEST_CASE("bench model without --batch-size is a usage error", "[profile][cli]") {
  const auto folder = temp_folder();
  const auto result =
      run_command(environment() + cli() + " bench model " + write_config(folder).string());
  INFO(result.output);
  CHECK(result.exit_code == 2);
  CHECK(result.output.find("batch-size") != std::string::npos);
  std::filesystem::remove_all(folder);
}

TEST_CASE("bench model runs a trained checkpoint in mixed precision", "[profile][cli]") {
  // The checkpoint holds f32 master weights; train.precision bf16 runs the products in bf16
  // (autocast), as the predictor does, and must not trip over the dtypes.
  const auto folder = temp_folder();
  const auto config = write_config(folder);
  const auto checkpoint = folder / "trained.ckpt";
  const auto trained = run_command(environment() + cli() + " run " + config.string() +
                                   " --set train.epochs=1 --set train.progress=none" +
                                   " --set train.checkpoint=" + checkpoint.string());
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  const auto trace = folder / "bf16.json";
  const auto result =
      run_command("(" + environment() + cli() + " bench model " + config.string() +
                  " --batch-size 8 --repetitions 2 --warmup 1 --json --set train.precision=bf16" +
                  " --set predict.checkpoint=" + checkpoint.string() + " --profile " +
                  trace.string() + " 2>/dev/null)");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  const Json report = parse_json(result.output);
  CHECK(report.at("weights") == checkpoint.string());
  CHECK(report.at("precision") == "bf16");
  const Json document = read_json_file(trace);
  int bf16_matmuls = 0;
  for (const Json& e : document.at("traceEvents")) {
    if (!e.contains("cat") || e.at("cat") != "op" || e.at("name") != "matmul") continue;
    for (const Json& d : e.at("args").at("input_dtypes")) CHECK(d == "bf16");
    ++bf16_matmuls;
  }
  CHECK(bf16_matmuls == 4);  // two linear layers, two timed repetitions
  std::filesystem::remove_all(folder);
}
