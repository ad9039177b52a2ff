// The full example from the schema loads, and the accessors return what the file says.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>

#include "config/config_test_support.h"

using switchyard::Config;
using switchyard::ConfigNode;
using switchyard::DevicePolicy;
using switchyard::FallbackPolicy;
using switchyard::OptionList;
using switchyard::StatusCode;
using switchyard::testing::config_data_file;

namespace {

Config load_example() {
  auto config = Config::load_file(config_data_file("full_example.yaml"));
  INFO(config.status().message());
  REQUIRE(config.ok());
  return std::move(config).value();
}

}  // namespace

TEST_CASE("the full example fills the runtime settings") {
  const Config config = load_example();
  const switchyard::RuntimeSettings& runtime = config.runtime();
  REQUIRE(runtime.backends == std::vector<std::string>{"cuda", "vulkan", "onednn", "reference"});
  REQUIRE(runtime.backends_from_config);
  REQUIRE(runtime.device == "vulkan:0");
  REQUIRE(runtime.device_policy == DevicePolicy::kMostFreeMemory);
  REQUIRE(runtime.fallback == FallbackPolicy::kError);
  REQUIRE(runtime.deterministic);
  REQUIRE(runtime.seed == 42);
  const std::filesystem::path folder =
      std::filesystem::path(SWITCHYARD_SOURCE_DIR) / "tests" / "config" / "data";
  REQUIRE(config.directory() == folder.lexically_normal());
  REQUIRE(runtime.plugin_paths ==
          std::vector<std::filesystem::path>{(folder / "extra_plugins").lexically_normal(),
                                             "/opt/switchyard/plugins"});
  REQUIRE(runtime.backend_options.size() == 2);
  REQUIRE(runtime.backend_options.at("onednn") == OptionList{{"threads", "2"},
                                                             {"memory_limit_bytes", "1000000"},
                                                             {"memory_fraction", "0.5"}});
  REQUIRE(runtime.backend_options.at("vulkan") ==
          OptionList{{"validation", "true"}, {"device_local_only", "yes"}});
}

TEST_CASE("the accessors read the example's sections") {
  const Config config = load_example();
  const ConfigNode root = config.root();
  REQUIRE(root.is_map());
  REQUIRE(root.keys().front() == "backends");
  REQUIRE(root.keys().back() == "predict");
  REQUIRE(root["task"].as_string().value() == "train");

  const ConfigNode data = root["data"];
  REQUIRE(data.string_or("dataset", "").value() == "digits");
  REQUIRE(data.double_or("test_fraction", 0.0).value() == 0.2);
  REQUIRE(data.double_or("divisor", 1.0).value() == 16.0);
  std::vector<int64_t> shape;
  for (const ConfigNode& item : data["image_shape"].items()) shape.push_back(item.as_int().value());
  REQUIRE(shape == std::vector<int64_t>{1, 8, 8});

  const std::vector<ConfigNode> layers = root["model"]["layers"].items();
  REQUIRE(layers.size() == 9);
  REQUIRE(layers[0]["type"].as_string().value() == "conv2d");
  REQUIRE(layers[0]["bias"].as_bool().value());
  REQUIRE(layers[4]["out_features"].as_int().value() == 256);
  REQUIRE(layers[5]["eps"].as_double().value() == 1.0e-5);
  REQUIRE(layers[7]["p"].as_double().value() == 0.1);
  REQUIRE(layers[8].keys() == std::vector<std::string>{"type", "out_features"});
  REQUIRE(layers[8].key_path() == "model.layers[8]");

  const ConfigNode optimizer = root["optimizer"];
  REQUIRE(optimizer.bool_or("nesterov", true).value() == false);
  REQUIRE(optimizer["betas"].items()[1].as_double().value() == 0.999);
  REQUIRE(optimizer["eps"].as_double().value() == 1.0e-8);
  REQUIRE(root["train"]["batch_size"].as_int().value() == 64);
  REQUIRE(root["predict"]["batch_size"].as_string().value() == "auto");
}

TEST_CASE("nodes know their location and key, and errors carry both") {
  const Config config = load_example();
  const std::string file = config_data_file("full_example.yaml");
  const ConfigNode epochs = config.root()["train"]["epochs"];
  REQUIRE(epochs.key_path() == "train.epochs");
  REQUIRE(epochs.location().to_string() == file + ":51:11");
  REQUIRE(epochs.error("too many for this data set").message() ==
          file + ":51:11: key 'train.epochs': too many for this data set");
  // An accessor of the wrong type says what it found.
  const auto wrong = config.root()["task"].as_int();
  REQUIRE(wrong.status().code() == StatusCode::kInvalidArgument);
  REQUIRE(wrong.status().message() == file + ":14:7: key 'task': expected an integer, got 'train'");
}

TEST_CASE("absent keys are invalid nodes and the *_or accessors fall back") {
  const Config config = load_example();
  const ConfigNode train = config.root()["train"];
  const ConfigNode absent = train["warmup"];
  REQUIRE_FALSE(absent.valid());
  REQUIRE(absent.key_path() == "train.warmup");
  REQUIRE(absent.location().line == 51);  // the map it would be in starts at its first key
  REQUIRE(train.int_or("warmup", 5).value() == 5);
  REQUIRE(train.string_or("missing", "x").value() == "x");
  REQUIRE(config.root()["nothing"]["deeper"].double_or("x", 2.5).value() == 2.5);
  REQUIRE(absent.as_string().status().message().find("key 'train.warmup': missing") !=
          std::string::npos);
  // Present values are still checked by the *_or accessors.
  REQUIRE_FALSE(train.int_or("checkpoint", 0).ok());
}

TEST_CASE("defaults are an empty document with default runtime settings") {
  const Config config = Config::defaults();
  const switchyard::RuntimeSettings expected;
  REQUIRE(config.runtime().backends == expected.backends);
  REQUIRE_FALSE(config.runtime().backends_from_config);
  REQUIRE(config.runtime().device == "auto");
  REQUIRE(config.runtime().device_policy == DevicePolicy::kFirst);
  REQUIRE(config.runtime().fallback == FallbackPolicy::kWarn);
  REQUIRE(config.runtime().plugin_paths.empty());
  REQUIRE(config.runtime().seed == 0);
  REQUIRE(config.root().keys().empty());
  REQUIRE_FALSE(config.root()["train"].valid());
  REQUIRE(config.root()["train"].int_or("epochs", 7).value() == 7);
  REQUIRE(config.directory() == std::filesystem::current_path());
}

TEST_CASE("a string config resolves plugin paths against the current folder") {
  auto config = Config::load_string("plugin_paths: [plugins]\n", "inline");
  REQUIRE(config.ok());
  REQUIRE(config->directory() == std::filesystem::current_path());
  REQUIRE(config->runtime().plugin_paths ==
          std::vector<std::filesystem::path>{std::filesystem::current_path() / "plugins"});
}

TEST_CASE("source locations print as file:line:column") {
  REQUIRE(switchyard::SourceLocation{"configs/a.yaml", 3, 7}.to_string() == "configs/a.yaml:3:7");
  REQUIRE(switchyard::SourceLocation{"<--set>", 0, 0}.to_string() == "<--set>");
}

TEST_CASE("known backend names: the built-in ones, then plugin files on the search path") {
  const std::vector<std::string> builtin = {"reference", "onednn", "vulkan", "cuda", "template"};
  unsetenv("SWITCHYARD_PLUGIN_PATH");
  auto names = switchyard::known_backend_names();
  REQUIRE(std::vector<std::string>(names.begin(), names.begin() + 5) == builtin);
  setenv("SWITCHYARD_PLUGIN_PATH", SWITCHYARD_TEST_FIXTURE_DIR "/twin-a", 1);
  names = switchyard::known_backend_names();
  unsetenv("SWITCHYARD_PLUGIN_PATH");
  REQUIRE(std::find(names.begin(), names.end(), "twin") != names.end());
}
