// The CLI as an operator uses it: real processes, real plugins, exit codes and output.
#include <catch2/catch.hpp>

#include <climits>

#include "acceptance_support.h"
#include "json_test_support.h"
#include "test_support.h"
#include "train/train_test_support.h"

using switchyard::testing::cli;
using switchyard::testing::cli_backend_usable;
using switchyard::testing::contains;
using switchyard::testing::entry_with;
using switchyard::testing::fixture_dir;
using switchyard::testing::Json;
using switchyard::testing::parse_json;
using switchyard::testing::run_command;
using switchyard::testing::skip_backend;
using switchyard::testing::write_temp_file;

namespace {

// The id of the device `devices --json` marks as selected; "" when none is.
std::string selected_id(const std::string& devices_json) {
  std::string selected;
  for (const Json& device : parse_json(devices_json)) {
    if (device.at("selected").get<bool>()) selected = device.at("id").get<std::string>();
  }
  return selected;
}

}  // namespace

TEST_CASE("devices --json lists the reference device as usable and selected", "[cli]") {
  auto result = run_command("SWITCHYARD_BACKENDS=reference " + cli() + " devices --json");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  const Json devices = parse_json(result.output);
  const Json* entry = entry_with(devices, "id", "reference:0");
  REQUIRE(entry != nullptr);
  CHECK(entry->at("usable").get<bool>());
  CHECK(entry->at("selected").get<bool>());
  CHECK(entry->at("memory_total_bytes").get<uint64_t>() > 0);
}

TEST_CASE("broken plugins never crash plugins, devices or doctor", "[cli]") {
  const std::string env = "SWITCHYARD_PLUGIN_PATH=" + fixture_dir("broken") + ":" +
                          fixture_dir("wrong") + " SWITCHYARD_BACKENDS=reference ";
  // Each command names a broken plugin in one JSON object: by "name" (plugins, doctor) or by
  // "id" (devices, whose plugins without devices are listed under their own name).
  const std::vector<std::pair<std::string, std::string>> commands = {
      {"plugins --json", "name"}, {"devices --json", "id"}, {"doctor --json", "name"}};
  for (const auto& [command, field] : commands) {
    auto result = run_command(env + cli() + " " + command);
    INFO(command << "\n" << result.output);
    REQUIRE(result.exit_code >= 0);  // exited normally, no signal
    const Json document = parse_json(result.output);
    const Json& list = document.is_array() ? document : document.at("plugins");
    for (const std::string name :
         {"wrongabi", "missingdep", "undefinedsym", "noentry", "throws", "crashes", "garbage"}) {
      INFO(name);
      const Json* entry = entry_with(list, field, name);
      REQUIRE(entry != nullptr);
      CHECK_FALSE(entry->at("reason").get<std::string>().empty());
    }
  }
  auto plugins = run_command(env + cli() + " plugins");
  CHECK(contains(plugins.output, "crashed with signal 11"));
  CHECK(contains(plugins.output, "libsy_fixture_dependency.so: cannot open shared object file"));
  auto doctor = run_command(env + cli() + " doctor");
  INFO(doctor.output);
  CHECK(doctor.exit_code == 0);  // the first backend of the list (reference) is usable
  CHECK(contains(doctor.output, "hint: "));
  CHECK(contains(doctor.output, "smoke test gave a wrong answer"));
  CHECK(contains(doctor.output, "libfixture-driver.so.1"));
}

TEST_CASE("doctor exits 2 when nothing is usable and 1 when only a lower backend is", "[cli]") {
  const std::string only_broken = "SWITCHYARD_PLUGIN_PATH=" + fixture_dir("wrong") + " ";
  auto nothing = run_command(only_broken + "SWITCHYARD_BACKENDS=wrongmath " + cli() + " doctor");
  INFO(nothing.output);
  CHECK(nothing.exit_code == 2);
  auto lower =
      run_command(only_broken + "SWITCHYARD_BACKENDS=nodriver,reference " + cli() + " doctor");
  INFO(lower.output);
  CHECK(lower.exit_code == 1);
  CHECK(lower.output.find("nodriver: nodriver:") == std::string::npos);  // the name once
}

TEST_CASE("every command rejects a broken YAML file with exit 2 and file:line:column", "[cli]") {
  struct Broken {
    std::string name, text, expect;
  };
  const std::vector<Broken> cases = {
      {"syntax", "backends: [reference\ndevice: auto\n", ":2:"},
      {"type", "backends: [reference]\nseed: many\n", ":2:7"},
      {"unknown-key", "backends: [reference]\ndevcie: auto\n", "did you mean 'device'"},
      {"unknown-backend", "backends: [refrence]\n", "refrence"},
  };
  for (const auto& c : cases) {
    const std::string path = write_temp_file("switchyard-cli-test-" + c.name + ".yaml", c.text);
    for (const std::string command :
         {"devices --config", "doctor --config", "plugins --config", "run",
          "conformance --backend reference --config", "bench matmul --config"}) {
      auto result = run_command(cli() + " " + command + " " + path);
      INFO(c.name << " / " << command << "\n" << result.output);
      CHECK(result.exit_code == 2);
      CHECK(contains(result.output, path));
      CHECK(contains(result.output, c.expect));
    }
  }
}

TEST_CASE("an unknown command or option is a usage error", "[cli]") {
  CHECK(run_command(cli() + " frobnicate").exit_code == 2);
  CHECK(run_command(cli() + " devices --no-such-option").exit_code == 2);
  auto version = run_command(cli() + " --version");
  CHECK(version.exit_code == 0);
  CHECK(contains(version.output, "switchyard "));
}

TEST_CASE("auto prefers onednn over lavapipe; naming vulkan:0 picks lavapipe", "[cli]") {
  // Each backend that is missing says why (and fails where it is required).
  if (!cli_backend_usable("onednn") || !cli_backend_usable("vulkan")) return;
  auto all = run_command(cli() + " devices --json");
  const Json devices = parse_json(all.output);
  const Json* vulkan = entry_with(devices, "id", "vulkan:0");
  REQUIRE(vulkan != nullptr);
  if (vulkan->at("type") != "emulated") {
    // On a machine with a real Vulkan GPU the case does not apply, required or not.
    skip_backend("vulkan (lavapipe)", "vulkan:0 is a " + vulkan->at("type").get<std::string>() +
                                          " device here, and this case is about lavapipe\n" +
                                          all.output);
    return;
  }
  CHECK(selected_id(all.output) == "onednn:0");
  const std::string path =
      write_temp_file("switchyard-cli-test-vulkan-named.yaml", "device: vulkan:0\n");
  auto named = run_command(cli() + " devices --json --config " + path);
  CHECK(selected_id(named.output) == "vulkan:0");
}

TEST_CASE("device_policy local_rank: devices, doctor and run say which rank took which device",
          "[cli]") {
  const std::string path =
      write_temp_file("switchyard-cli-test-local-rank.yaml", "device_policy: local_rank\n");
  const std::string env = "SWITCHYARD_BACKENDS=reference SWITCHYARD_LOCAL_RANK=1 ";
  const std::string note =
      "device_policy local_rank: local rank 1 (from SWITCHYARD_LOCAL_RANK) -> reference:0, the "
      "only usable reference device; ranks share devices";
  auto devices = run_command(env + cli() + " devices --config " + path);
  INFO(devices.output);
  CHECK(devices.exit_code == 0);
  CHECK(contains(devices.output, "selection: " + note));
  auto doctor = run_command(env + cli() + " doctor --config " + path);
  INFO(doctor.output);
  CHECK(contains(doctor.output, note));
  // A launcher variable that is not a rank is an error naming it, not a silent device 0.
  auto bad = run_command("SWITCHYARD_BACKENDS=reference LOCAL_RANK=first " + cli() +
                         " devices --config " + path);
  INFO(bad.output);
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.output, "LOCAL_RANK='first': expected the process's local rank"));
}

TEST_CASE("plugins, devices --json and doctor name each search folder not searched", "[cli]") {
  switchyard::testing::TempDir temp;
  const std::string missing = (temp / "missing").string();
  const std::string loop = (temp / "loop").string();
  std::filesystem::create_symlink(loop, loop);
  const std::string plugins_dir = (temp / "plugins").string();
  std::filesystem::create_directory(plugins_dir);
  const std::string self = plugins_dir + "/libswitchyard-self.so";
  std::filesystem::create_symlink("libswitchyard-self.so", self);
  const std::string env = "SWITCHYARD_PLUGIN_PATH=" + missing + ":" + loop + ":" + plugins_dir +
                          " SWITCHYARD_BACKENDS=reference ";
  const std::string missing_reason = "plugin folder '" + missing + "' not searched: does not exist";
  const std::string loop_reason = "plugin folder '" + loop +
                                  "' not searched: a loop of symbolic links (Too many levels of "
                                  "symbolic links)";

  const auto plugins = run_command(env + cli() + " plugins");
  INFO(plugins.output);
  CHECK(contains(plugins.output, "  " + missing + "  (not searched: does not exist)\n"));
  CHECK(contains(plugins.output, "  " + plugins_dir + "\n"));
  CHECK(contains(plugins.output, "reason: '" + self + "': a loop of symbolic links"));

  const Json plugin_list = parse_json(run_command(env + cli() + " plugins --json").output);
  const Json* missing_plugin_entry = entry_with(plugin_list, "path", missing);
  REQUIRE(missing_plugin_entry != nullptr);
  CHECK(missing_plugin_entry->at("status").get<std::string>() == "not searched");
  CHECK(missing_plugin_entry->at("reason").get<std::string>() == missing_reason);

  const Json devices = parse_json(run_command(env + cli() + " devices --json").output);
  const Json* loop_entry = entry_with(devices, "id", loop);
  REQUIRE(loop_entry != nullptr);
  CHECK(loop_entry->at("type").get<std::string>() == "plugin folder");
  CHECK(loop_entry->at("reason").get<std::string>() == loop_reason);
  CHECK_FALSE(loop_entry->at("usable").get<bool>());

  const auto doctor = run_command(env + cli() + " doctor");
  INFO(doctor.output);
  CHECK(contains(doctor.output, "  " + missing +
                                    "  (not searched: does not exist)\n    hint: create the folder "
                                    "or remove it from SWITCHYARD_PLUGIN_PATH"));
  // The self-link's hint is about the link, not the "missing dependency" of dlopen's wording.
  CHECK(contains(doctor.output, "hint: a symbolic link on this path points back at itself"));
  CHECK_FALSE(contains(doctor.output, "a library the plugin needs is missing"));
  const Json report = parse_json(run_command(env + cli() + " doctor --json").output);
  const Json* missing_folder = entry_with(report.at("search_path"), "path", missing);
  REQUIRE(missing_folder != nullptr);
  CHECK_FALSE(missing_folder->at("searched").get<bool>());
  CHECK(missing_folder->at("reason").get<std::string>() == "does not exist");
  const Json* searched = entry_with(report.at("search_path"), "path", plugins_dir);
  REQUIRE(searched != nullptr);
  CHECK(searched->at("searched").get<bool>());
  CHECK(searched->at("plugin_files").get<int>() == 1);
}

TEST_CASE("devices and doctor say why a 5000-character plugin path is not searched", "[cli]") {
  const std::string path = "/tmp/" + std::string(5000, 'a');
  const std::string reason = "not searched: the path is 5005 bytes long, over PATH_MAX (" +
                             std::to_string(PATH_MAX) + " including its end)";
  const std::string yaml = write_temp_file("sy-long-plugin-path.yaml",
                                           "backends: [reference]\nplugin_paths: [" + path + "]\n");
  for (const std::string& where : {"SWITCHYARD_PLUGIN_PATH=" + path + " " + cli() + " %s",
                                   "SWITCHYARD_PLUGIN_PATH= " + cli() + " %s --config " + yaml}) {
    for (const std::string command : {"devices", "doctor"}) {
      std::string line = where;
      line.replace(line.find("%s"), 2, command);
      const auto result = run_command("SWITCHYARD_BACKENDS=reference " + line);
      INFO(line.substr(0, 200) << "\n" << result.output);
      REQUIRE(result.exit_code >= 0);
      CHECK(contains(result.output, reason));
      CHECK_FALSE(contains(result.output, std::string(1000, 'a')));  // cut, not 5000 characters
      if (command == "doctor") {
        CHECK(contains(result.output,
                       "hint: use a shorter path (a symbolic link to the folder will do)"));
      }
    }
  }
  std::filesystem::remove(yaml);
}
