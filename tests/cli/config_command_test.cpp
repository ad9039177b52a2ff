// `switchyard config CONFIG`: the effective value of every key, after --set and the SWITCHYARD_*
// variables, with where each came from; `--reference` prints docs/config.md.
#include <catch2/catch.hpp>
#include <sstream>

#include "json_test_support.h"
#include "test_support.h"

using switchyard::testing::cli;
using switchyard::testing::contains;
using switchyard::testing::entry_with;
using switchyard::testing::Json;
using switchyard::testing::parse_json;
using switchyard::testing::read_text;
using switchyard::testing::run_command;
using switchyard::testing::write_temp_file;

namespace {

// A file whose keys sit at known lines and columns.
const char* const kConfig =
    "data:\n"
    "  dataset: iris\n"
    "train:\n"
    "  epochs: 7\n"
    "  batch_size: 16\n";

// The line of `output` that starts (after indentation) with `key_and_value`; "" when none does.
std::string line_of(const std::string& output, const std::string& key_and_value) {
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t start = line.find_first_not_of(" -");
    if (start != std::string::npos &&
        line.compare(start, key_and_value.size(), key_and_value) == 0) {
      return line;
    }
  }
  return "";
}

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// Runs the CLI with the SWITCHYARD_* variables cleared, then `env` (e.g. "SWITCHYARD_DEVICE=cpu").
switchyard::testing::CommandResult config_command(const std::string& arguments,
                                                  const std::string& env = "") {
  return run_command("env -u SWITCHYARD_BACKENDS -u SWITCHYARD_DEVICE -u SWITCHYARD_FALLBACK " +
                     env + " " + cli() + " config " + arguments);
}

}  // namespace

TEST_CASE("config shows each key's value with its file location, --set, variable or default",
          "[cli][config]") {
  const std::string path = write_temp_file("sy-config-sources.yaml", kConfig);
  const auto result = config_command(path + " --set train.epochs=3", "SWITCHYARD_DEVICE=cpu");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  // From the file, at its line and column.
  CHECK(ends_with(line_of(result.output, "dataset: iris"), "# from " + path + ":2:12"));
  CHECK(ends_with(line_of(result.output, "batch_size: 16"), "# from " + path + ":5:15"));
  // From --set, which replaces the file's 7.
  CHECK(ends_with(line_of(result.output, "epochs: 3"), "# from --set 'train.epochs=3'"));
  CHECK(line_of(result.output, "epochs: 7").empty());
  // From the environment.
  CHECK(ends_with(line_of(result.output, "device: cpu"), "# from env SWITCHYARD_DEVICE"));
  // Defaults the file leaves out, including whole sections it does not have.
  CHECK(ends_with(line_of(result.output, "test_fraction: 0.2"), "# default"));
  CHECK(ends_with(line_of(result.output, "fallback: warn"), "# default"));
  CHECK(ends_with(line_of(result.output, "step_size: 10"), "# default"));
  CHECK(ends_with(line_of(result.output, "batch_size: 256"), "# default"));  // predict.batch_size
  // Defaults that depend on the file are resolved for it.
  CHECK(ends_with(line_of(result.output, "checkpoint: runs/sy-config-sources/model.ckpt"),
                  "# default"));
  CHECK(ends_with(line_of(result.output, "lr: 0.001"), "# default"));  // adam's
  // Defaults that depend on the data (iris is a table) and on train.epochs (given: no
  // validation split of its own).
  CHECK(ends_with(line_of(result.output, "scale: standard"), "# default"));
  CHECK(ends_with(line_of(result.output, "validation_fraction: none"), "# default"));
}

TEST_CASE("config lists each layer's keys, defaults included, and resolves the optimizer's",
          "[cli][config]") {
  const std::string path =
      write_temp_file("sy-config-layers.yaml",
                      "model:\n  layers:\n    - {type: conv2d, out_channels: 4, kernel_size: 3}\n"
                      "    - {type: relu}\noptimizer: {type: adamw}\n");
  const auto result = config_command(path);
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  CHECK(contains(result.output, "  layers:"));
  CHECK(contains(result.output, "\n    - type: conv2d"));
  CHECK(ends_with(line_of(result.output, "out_channels: 4"), "# from " + path + ":3:36"));
  CHECK(ends_with(line_of(result.output, "dilation: 1"), "# default"));
  CHECK(contains(result.output, "\n    - type: relu"));
  CHECK(ends_with(line_of(result.output, "lr: 0.001"), "# default"));
  CHECK(ends_with(line_of(result.output, "weight_decay: 0.01"), "# default"));
}

TEST_CASE("config --json gives every key's typed value and source", "[cli][config]") {
  const std::string path = write_temp_file("sy-config-json.yaml", kConfig);
  const auto result = config_command(path + " --json --set 'backends=[onednn, reference]'",
                                     "SWITCHYARD_FALLBACK=error");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  const Json json = parse_json(result.output);
  CHECK(json.at("file") == path);
  const Json& values = json.at("values");
  const Json* epochs = entry_with(values, "key", "train.epochs");
  REQUIRE(epochs != nullptr);
  CHECK(epochs->at("value") == 7);
  CHECK(epochs->at("source") == path + ":4:11");
  const Json* backends = entry_with(values, "key", "backends");
  REQUIRE(backends != nullptr);
  CHECK(backends->at("value") == Json::array({"onednn", "reference"}));
  CHECK(backends->at("source") == "--set 'backends=[onednn, reference]'");
  const Json* fallback = entry_with(values, "key", "fallback");
  REQUIRE(fallback != nullptr);
  CHECK(fallback->at("value") == "error");
  CHECK(fallback->at("source") == "env SWITCHYARD_FALLBACK");
  const Json* fraction = entry_with(values, "key", "data.test_fraction");
  REQUIRE(fraction != nullptr);
  CHECK(fraction->at("value") == 0.2);
  CHECK(fraction->at("source") == "default");
  const Json* deterministic = entry_with(values, "key", "deterministic");
  REQUIRE(deterministic != nullptr);
  CHECK(deterministic->at("value") == false);
  // Sections are not entries of their own: their keys are.
  CHECK(entry_with(values, "key", "train") == nullptr);
}

TEST_CASE("config with an invalid file or variable exits 2 with the located error",
          "[cli][config]") {
  const std::string path = write_temp_file("sy-config-bad.yaml", "train:\n  epochs: 0\n");
  const auto bad_file = config_command(path);
  CHECK(bad_file.exit_code == 2);
  CHECK(contains(bad_file.output,
                 path + ":2:11: key 'train.epochs': expected an integer >= 1 and <= 1000000"));
  const auto bad_set = config_command(path + " --set train.epochs=abc");
  CHECK(bad_set.exit_code == 2);
  CHECK(contains(bad_set.output, "--set 'train.epochs=abc': key 'train.epochs'"));
  const std::string good = write_temp_file("sy-config-good.yaml", kConfig);
  const auto bad_variable = config_command(good, "SWITCHYARD_FALLBACK=loud");
  CHECK(bad_variable.exit_code == 2);
  CHECK(contains(bad_variable.output, "SWITCHYARD_FALLBACK='loud'"));
}

TEST_CASE("config --reference prints docs/config.md", "[cli][config]") {
  const auto result = config_command("--reference");
  REQUIRE(result.exit_code == 0);
  CHECK(result.output == read_text(std::string(SWITCHYARD_SOURCE_DIR) + "/docs/config.md"));
}
