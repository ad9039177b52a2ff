// Small helpers shared by the test areas.
#pragma once

#include <sys/wait.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "switchyard/device.h"
#include "switchyard/plugin.h"

namespace switchyard::testing {

// True in the sanitizer build (tools/test --sanitize), where code runs several times slower:
// long training runs there train briefly to exercise their code and leave the accuracy
// thresholds to the plain build, which runs them whole.
inline constexpr bool kSanitized = SWITCHYARD_TEST_SANITIZED != 0;

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The fields of each line of simple CSV text (no quoting), split at commas.
inline std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> fields;
    std::stringstream items(line);
    for (std::string item; std::getline(items, item, ',');) fields.push_back(item);
    rows.push_back(fields);
  }
  return rows;
}

// A whole file's contents ("" if it cannot be read).
inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Writes `text` to a file named `name` in the system's temporary folder; returns its path.
inline std::string write_temp_file(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path) << text;
  return path;
}

// The build's plugin folder, or $SWITCHYARD_TEST_PLUGIN_DIR where set: tools/gpu-check runs test
// binaries on a GPU machine from an unpacked build whose folder differs from the build machine's.
inline std::string plugin_file(const std::string& name) {
  const char* dir = std::getenv("SWITCHYARD_TEST_PLUGIN_DIR");
  const std::string folder = dir != nullptr && *dir != '\0' ? dir : SWITCHYARD_TEST_PLUGIN_DIR;
  return folder + "/libswitchyard-" + name + ".so";
}

inline std::string fixture_dir(const std::string& folder) {
  return std::string(SWITCHYARD_TEST_FIXTURE_DIR) + "/" + folder;
}

// The reference device, loaded straight from the build's plugin folder.
inline std::shared_ptr<Device> reference_device() {
  auto plugin = value_or_throw(Plugin::load(plugin_file("reference")));
  return value_or_throw(Device::create(plugin, 0));
}

struct CommandResult {
  int exit_code = -1;  // -1: did not exit normally (signal)
  std::string output;  // stdout and stderr together
};

// Runs a shell command line and captures its output; `env` is prefixed as "K=V ..." text.
inline CommandResult run_command(const std::string& command_line) {
  CommandResult result;
  FILE* pipe = popen((command_line + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

inline std::string cli() {
  return SWITCHYARD_CLI;
}

}  // namespace switchyard::testing
