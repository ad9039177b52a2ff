// `deterministic: true` through the CLI: two runs end with bit-identical weights (the checksum
// `switchyard run` prints and writes to the metrics file), on every CPU backend usable here; and
// `devices` shows each device's settings line.
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "acceptance_support.h"
#include "json_test_support.h"
#include "test_support.h"

using switchyard::testing::cli;
using switchyard::testing::cli_backend_usable;
using switchyard::testing::contains;
using switchyard::testing::entry_with;
using switchyard::testing::Json;
using switchyard::testing::parse_json;
using switchyard::testing::read_text;
using switchyard::testing::run_command;
using switchyard::testing::write_temp_file;

namespace {

// The device `id` of a `devices --json` output when it is usable here; nullptr otherwise.
const Json* usable_device(const Json& devices, const std::string& id) {
  const Json* device = entry_with(devices, "id", id);
  return device != nullptr && device->at("usable").get<bool>() ? device : nullptr;
}

// A settings line without its counters (cuda's `matmuls_*=N`, vulkan's `gemms_*=N`):
// the line printed when a run starts and the one its metrics keep at the end differ only there.
std::string without_counters(const std::string& settings) {
  std::istringstream items(settings);
  std::string kept;
  for (std::string item; items >> item;) {
    if (item.rfind("matmuls_", 0) == 0 || item.rfind("gemms_", 0) == 0) continue;
    kept += (kept.empty() ? "" : " ") + item;
  }
  return kept;
}

// The settings line a run prints ("settings: ..."), without its label; "" where there is none.
std::string printed_settings(const std::string& output) {
  const std::string key = "settings: ";
  const size_t begin = output.find(key);
  if (begin == std::string::npos) return "";
  const size_t end = output.find('\n', begin);
  return output.substr(begin + key.size(), end - begin - key.size());
}

// A digits MLP with dropout (so the random stream matters too): well under a second per run on
// the CPU backends and on lavapipe.
std::string digits_yaml() {
  return "deterministic: true\n"
         "data: {dataset: digits, test_fraction: 0.2, scale: divide, divisor: 16}\n"
         "model:\n"
         "  layers:\n"
         "    - {type: linear, out_features: 64}\n"
         "    - {type: relu}\n"
         "    - {type: dropout, p: 0.1}\n"
         "    - {type: linear, out_features: 10}\n"
         "optimizer: {type: sgd, lr: 0.05, momentum: 0.9}\n"
         "train: {epochs: 2, batch_size: 32, progress: none, checkpoint: none}\n"
         "backend_options:\n"
         "  onednn: {threads: 2}\n";
}

struct Trained {
  std::string checksum;  // weights_fnv1a64 from the metrics file
  std::string settings;  // device_settings from the metrics file
  std::string output;
};

Trained train(const std::string& backend, const std::string& config, int seed) {
  const std::string metrics = "/tmp/switchyard-determinism-test-" + backend + ".json";
  std::remove(metrics.c_str());
  const std::string command =
      "SWITCHYARD_DATA_DIR=" SWITCHYARD_SOURCE_DIR "/data SWITCHYARD_BACKENDS=" + backend +
      " SWITCHYARD_FALLBACK=error " + cli() + " run " + config +
      " --set seed=" + std::to_string(seed) + " --metrics " + metrics;
  auto result = run_command(command);
  INFO(command << "\n" << result.output);
  REQUIRE(result.exit_code == 0);
  const Json json = parse_json(read_text(metrics));
  CHECK(json.at("backend") == backend);
  Trained trained{json.at("weights_fnv1a64").get<std::string>(),
                  json.at("device_settings").get<std::string>(), result.output};
  // The printed summary carries the same checksum as the metrics file.
  CHECK(contains(result.output, "weights fnv1a64: " + trained.checksum + "\n"));
  return trained;
}

}  // namespace

TEST_CASE("devices --json reports every device's settings line", "[cli][determinism]") {
  auto plain = run_command("SWITCHYARD_BACKENDS=reference " + cli() + " devices --json");
  INFO(plain.output);
  REQUIRE(plain.exit_code == 0);
  const Json plain_devices = parse_json(plain.output);
  const Json* reference = usable_device(plain_devices, "reference:0");
  REQUIRE(reference != nullptr);
  CHECK(reference->at("settings") == "threads=1 deterministic=off");

  const std::string config =
      write_temp_file("switchyard-determinism-test-devices.yaml", "deterministic: true\n");
  auto deterministic =
      run_command("SWITCHYARD_BACKENDS=reference " + cli() + " devices --json --config " + config);
  INFO(deterministic.output);
  REQUIRE(deterministic.exit_code == 0);
  const Json devices = parse_json(deterministic.output);
  for (const std::string backend : {"reference", "onednn", "vulkan"}) {
    const Json* device = usable_device(devices, backend + ":0");
    if (device == nullptr) {  // not on this machine: fails where the backend is required
      const std::string why = switchyard::testing::backend_unusable_reason(backend);
      switchyard::testing::skip_backend(
          backend, why.empty() ? backend + ":0 is not usable with deterministic: true" : why);
      continue;
    }
    INFO(backend << ": " << device->at("settings").get<std::string>());
    CHECK(contains(device->at("settings").get<std::string>(), "deterministic=on"));
  }
  // onednn's line says what deterministic changed: adaptive threading is off.
  if (const Json* onednn = usable_device(devices, "onednn:0")) {
    CHECK(contains(onednn->at("settings").get<std::string>(),
                   "adaptive_threads=off deterministic=on"));
  }
  auto text = run_command("SWITCHYARD_BACKENDS=reference " + cli() + " devices --config " + config);
  CHECK(contains(text.output, "settings: threads=1 deterministic=on"));
}

TEST_CASE("two deterministic runs end with bit-identical weights on each CPU backend",
          "[cli][determinism]") {
  const std::string config =
      write_temp_file("switchyard-determinism-test-digits.yaml", digits_yaml());
  for (const std::string backend : {"reference", "onednn", "vulkan"}) {
    SECTION(backend) {
      if (!cli_backend_usable(backend)) continue;
      const Trained first = train(backend, config, 7);
      const Trained second = train(backend, config, 7);
      INFO(backend << "\n" << first.output << "\n" << second.output);
      REQUIRE(first.checksum.size() == 16);
      CHECK(contains(first.settings, "deterministic=on"));
      CHECK(without_counters(printed_settings(first.output)) == without_counters(first.settings));
      CHECK(first.checksum == second.checksum);
      // Another seed gives other weights: the checksum really covers them.
      const Trained other_seed = train(backend, config, 8);
      CHECK(other_seed.checksum.size() == 16);
      CHECK(other_seed.checksum != first.checksum);
    }
  }
}
