// A backend whose plugin is found through the file's own `plugin_paths:` may be named in
// `backends`, `device` and `backend_options` (by its file name, libswitchyard-<name>.so), and the
// list of known names holds only backends that have a plugin.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "config/config_test_support.h"

using switchyard::Config;
using switchyard::RuntimeSettings;
using switchyard::StatusCode;
using switchyard::testing::config_status;
using switchyard::testing::ScopedEnvironment;

namespace {

// A folder holding libswitchyard-mine.so (only its name matters to validation), and a YAML file
// next to it.
struct PluginFolder {
  std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("sy-plugin-paths-" + std::to_string(getpid()));
  std::filesystem::path plugins = root / "plugins";
  PluginFolder() {
    std::filesystem::create_directories(plugins);
    std::ofstream(plugins / "libswitchyard-mine.so") << "not loaded by validation\n";
  }
  ~PluginFolder() { std::filesystem::remove_all(root); }
};

}  // namespace

TEST_CASE("a backend found in plugin_paths is accepted in backends, device and backend_options") {
  ScopedEnvironment no_path("SWITCHYARD_PLUGIN_PATH", std::nullopt);
  PluginFolder folder;
  const std::string text = "plugin_paths: [" + folder.plugins.string() +
                           "]\nbackends: [mine, reference]\ndevice: mine:0\n"
                           "backend_options:\n  mine: {threads: 1}\n";
  auto config = Config::load_string(text, "cfg.yaml");
  INFO(config.status().message());
  REQUIRE(config.ok());
  CHECK(config->runtime().backends == std::vector<std::string>{"mine", "reference"});
  CHECK(config->runtime().device == "mine:0");
}

TEST_CASE("relative plugin_paths are searched from the file's folder before names are checked") {
  ScopedEnvironment no_path("SWITCHYARD_PLUGIN_PATH", std::nullopt);
  PluginFolder folder;
  const std::filesystem::path file = folder.root / "run.yaml";
  std::ofstream(file) << "plugin_paths: [plugins]\nbackends: [mine]\n";
  auto config = Config::load_file(file);
  INFO(config.status().message());
  REQUIRE(config.ok());
  CHECK(config->runtime().backends == std::vector<std::string>{"mine"});
}

TEST_CASE("without the plugin the name is unknown, and the list names only real plugins") {
  ScopedEnvironment no_path("SWITCHYARD_PLUGIN_PATH", std::nullopt);
  const switchyard::Status status = config_status("backends: [mine]\n");
  REQUIRE(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.message() ==
        "cfg.yaml:1:12: key 'backends[0]': unknown backend 'mine', expected one of: reference, "
        "onednn, vulkan, cuda, template");
}

TEST_CASE("SWITCHYARD_BACKENDS may name a backend of the settings' plugin_paths") {
  PluginFolder folder;
  ScopedEnvironment no_path("SWITCHYARD_PLUGIN_PATH", std::nullopt);
  ScopedEnvironment backends("SWITCHYARD_BACKENDS", "mine,reference");
  RuntimeSettings settings;
  settings.plugin_paths = {folder.plugins};
  const switchyard::Status status = settings.apply_environment();
  INFO(status.message());
  REQUIRE(status.ok());
  CHECK(settings.backends == std::vector<std::string>{"mine", "reference"});
}
