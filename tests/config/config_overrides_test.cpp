// --set overrides: applied before validation, validated like the file, reported as the --set that
// caused the problem ("--set 'train.epochs=abc': ...").
#include <catch2/catch.hpp>

#include "config/config_test_support.h"

using switchyard::Config;
using switchyard::StatusCode;

namespace {

const std::string kFile =
    "train:\n  epochs: 20\n  batch_size: 64\nmodel:\n  layers:\n"
    "    - {type: linear, out_features: 8}\n    - {type: dropout, p: 0.5}\n";

Config load(const std::string& text, const std::vector<std::string>& overrides) {
  auto config = Config::load_string(text, "cfg.yaml", overrides);
  INFO(config.status().message());
  REQUIRE(config.ok());
  return std::move(config).value();
}

void require_override_error(const std::string& text, const std::vector<std::string>& overrides,
                            const std::string& expected_message) {
  const switchyard::Status status = Config::load_string(text, "cfg.yaml", overrides).status();
  REQUIRE(status.code() == StatusCode::kInvalidArgument);
  REQUIRE(status.message() == expected_message);
}

}  // namespace

TEST_CASE("an override replaces a value that the file sets") {
  const Config config = load(kFile, {"train.epochs=3"});
  REQUIRE(config.root()["train"].int_or("epochs", 0).value() == 3);
  REQUIRE(config.root()["train"].int_or("batch_size", 0).value() == 64);
}

TEST_CASE("an override creates the maps on its path") {
  const Config config = load("", {"train.epochs=3", "backend_options.onednn.threads=4"});
  REQUIRE(config.root()["train"]["epochs"].as_int().value() == 3);
  REQUIRE(config.runtime().backend_options.at("onednn") ==
          switchyard::OptionList{{"threads", "4"}});
  REQUIRE(config.root().keys() == std::vector<std::string>{"train", "backend_options"});
}

TEST_CASE("override values are parsed as YAML and fill the runtime settings") {
  const Config config = load(kFile, {"backends=[reference]", "device=vulkan:0", "fallback = silent",
                                     "plugin_paths=[/opt/p]"});
  REQUIRE(config.runtime().backends == std::vector<std::string>{"reference"});
  REQUIRE(config.runtime().backends_from_config);
  REQUIRE(config.runtime().device == "vulkan:0");
  REQUIRE(config.runtime().fallback == switchyard::FallbackPolicy::kSilent);
  REQUIRE(config.runtime().plugin_paths == std::vector<std::filesystem::path>{"/opt/p"});
}

TEST_CASE("the value is everything after the first '='") {
  const Config config = load("", {"data.dataset=a=b.csv"});
  REQUIRE(config.root()["data"]["dataset"].as_string().value() == "a=b.csv");
}

TEST_CASE("an override can index into a sequence of the file") {
  const Config config = load(kFile, {"model.layers[1].p=0.25"});
  const std::vector<switchyard::ConfigNode> layers = config.root()["model"]["layers"].items();
  REQUIRE(layers.size() == 2);
  REQUIRE(layers[1]["p"].as_double().value() == 0.25);
  require_override_error(
      kFile, {"model.layers[5].p=0.1"},
      "--set 'model.layers[5].p=0.1': key 'model.layers[5]': index 5 is out of range, expected an "
      "index below 2");
}

TEST_CASE("later overrides win") {
  const Config config = load(kFile, {"train.epochs=3", "train.epochs=4"});
  REQUIRE(config.root()["train"]["epochs"].as_int().value() == 4);
}

TEST_CASE("an override with an unknown key is reported against its --set") {
  require_override_error(
      kFile, {"train.epoch=3"},
      "--set 'train.epoch=3': key 'train.epoch': unknown key 'epoch'; did you mean 'epochs'?");
  require_override_error(
      "", {"trian.epochs=3"},
      "--set 'trian.epochs=3': key 'trian': unknown key 'trian'; did you mean 'train'?");
  require_override_error(kFile, {"model.layers[0].bias_=true"},
                         "--set 'model.layers[0].bias_=true': key 'model.layers[0].bias_': unknown "
                         "key 'bias_' for type "
                         "'linear'; did you mean 'bias'?");
}

TEST_CASE("an override with a bad value is reported against its --set") {
  require_override_error(
      kFile, {"train.epochs=abc"},
      "--set 'train.epochs=abc': key 'train.epochs': expected an integer >= 1 and "
      "<= 1000000 or 'auto', got 'abc'");
  require_override_error(kFile, {"backends=[reference, cdua]"},
                         "--set 'backends=[reference, cdua]': key 'backends[1]': unknown backend "
                         "'cdua' (did you mean 'cuda'?), expected one of: reference, onednn, "
                         "vulkan, cuda, template");
  require_override_error(kFile, {"train={epochs: 2, epochs: 3}"},
                         "--set 'train={epochs: 2, epochs: 3}': key 'train.epochs': duplicate key "
                         "'epochs' (first defined at --set 'train={epochs: 2, epochs: 3}'), "
                         "expected each key at most once in a map");
}

TEST_CASE("file errors keep their file location next to override errors") {
  require_override_error(
      "seed: -1\n", {"train.epochs=0"},
      "--set 'train.epochs=0': key 'train.epochs': expected an integer >= 1 and <= "
      "1000000 or 'auto', got '0'\n"
      "cfg.yaml:1:7: key 'seed': expected an integer >= 0 and <= "
      "9007199254740991, got '-1'");
}

TEST_CASE("a malformed override says what an override looks like") {
  const std::string expected_tail =
      "': not a valid override, expected <dotted.key>=<value>, such as train.epochs=3 or "
      "model.layers[0].out_features=32";
  require_override_error(kFile, {"train.epochs"}, "--set 'train.epochs" + expected_tail);
  require_override_error(kFile, {"train..epochs=3"}, "--set 'train..epochs=3" + expected_tail);
  require_override_error(kFile, {"=3"}, "--set '=3" + expected_tail);
  require_override_error(
      kFile, {"backends=[a"},
      "--set 'backends=[a': key 'backends': value '[a' is not valid YAML (end of sequence "
      "flow not found), expected a YAML value such as 3, abc or [a, b]");
}

TEST_CASE("an override that runs into a scalar of the file blames the file, naming the override") {
  require_override_error("train: 5\n", {"train.epochs=3"},
                         "cfg.yaml:1:8: key 'train': expected a map, got '5', so --set "
                         "'train.epochs=3' cannot set 'train.epochs' in it");
  // A file cut short after its first word is a lone scalar at the top level: the file's fault.
  require_override_error("backen", {"train.epochs=3"},
                         "cfg.yaml:1:1: expected a map, got 'backen', so --set 'train.epochs=3' "
                         "cannot set 'train' in it");
  require_override_error("model: {layers: 3}\n", {"model.layers[0].p=0.5"},
                         "cfg.yaml:1:17: key 'model.layers': expected a sequence, got '3', so "
                         "--set 'model.layers[0].p=0.5' cannot set 'model.layers[0]' in it");
}

TEST_CASE("an override that runs into a scalar of another override blames that override") {
  require_override_error("", {"train=5", "train.epochs=3"},
                         "--set 'train.epochs=3': key 'train.epochs': 'train' is '5', expected a "
                         "map to set 'epochs' in");
}

TEST_CASE("a truncated file with --set is reported against the file with its line and column") {
  // Cut inside a flow sequence: a syntax error, before any override is applied.
  require_override_error("backends: [cuda, vul", {"train.epochs=3"},
                         "cfg.yaml:1:1: invalid YAML: end of sequence flow not found");
  // Cut after a key: the empty value is the file's, the override's value is the override's.
  require_override_error("train:\n  epochs: 3\nmodel:\n  layers:", {"train.epochs=0"},
                         "--set 'train.epochs=0': key 'train.epochs': expected an integer >= 1 "
                         "and <= 1000000 or 'auto', got '0'\n"
                         "cfg.yaml:4:3: key 'model.layers': expected a sequence of layers, such "
                         "as [{type: linear, out_features: 10}], got an empty value");
}

TEST_CASE("each error names the --set that caused it, also inside maps another --set created") {
  require_override_error("", {"train.epochs=3", "train.batch_size=big", "seed=-1"},
                         "--set 'train.batch_size=big': key 'train.batch_size': expected an "
                         "integer >= 1 and <= 1048576 or 'auto', got 'big'\n"
                         "--set 'seed=-1': key 'seed': expected an integer >= 0 and <= "
                         "9007199254740991, got '-1'");
  require_override_error("", {"model.layers=[{type: linear}]"},
                         "--set 'model.layers=[{type: linear}]': key "
                         "'model.layers[0].out_features': missing required key 'out_features' for "
                         "type 'linear', expected an integer >= 1 and <= 1048576");
  require_override_error(kFile, {"optimizer.momentum=2"},
                         "--set 'optimizer.momentum=2': key 'optimizer.momentum': expected a "
                         "number >= 0 and < 1, got '2'");
}

TEST_CASE("docs/config.md's --set examples work, and an index into a missing list says why not") {
  // On a file without a model section (the run uses the default model), as docs/config.md says.
  const std::string no_model = "data: {dataset: iris}\n";
  const Config whole = load(no_model, {"train.epochs=30",
                                       "model.layers=[{type: linear, "
                                       "out_features: 32}]"});
  CHECK(whole.root()["model"]["layers"].items().size() == 1);
  const Config indexed = load(kFile, {"model.layers[0].out_features=32"});
  CHECK(indexed.root()["model"]["layers"].items()[0]["out_features"].as_int().value() == 32);
  require_override_error(no_model, {"model.layers[0].out_features=32"},
                         "--set 'model.layers[0].out_features=32': key 'model.layers[0]': "
                         "'model.layers' is an empty value, expected a sequence to index (the "
                         "file has no 'model.layers' to change one item of; give the whole list, "
                         "e.g. --set 'model.layers=[...]')");
}
