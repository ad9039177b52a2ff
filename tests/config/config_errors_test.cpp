// Every kind of configuration error names file:line:column, the dotted key and what was expected.
#include <algorithm>
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "config/config_test_support.h"
#include "runtime/config_text.h"

using switchyard::Config;
using switchyard::StatusCode;
using switchyard::testing::config_status;

namespace {

const std::string kBackendList = "reference, onednn, vulkan, cuda, template";

void require_error(const std::string& text, const std::string& expected_message) {
  const switchyard::Status status = config_status(text);
  REQUIRE(status.code() == StatusCode::kInvalidArgument);
  REQUIRE(status.message() == expected_message);
}

}  // namespace

TEST_CASE("a YAML syntax error is reported as file:line:column with yaml-cpp's reason") {
  require_error("train:\n  epochs: 3\n bad: 1\n",
                "cfg.yaml:3:2: invalid YAML: end of map not found");
  require_error("backends: [cuda, reference\ndevice: auto\n",
                "cfg.yaml:2:7: invalid YAML: end of sequence flow not found");
}

TEST_CASE("a comma outside a flow collection is an error, not a parser that never ends") {
  // yaml-cpp 0.7's LoadAll loops on these, allocating until memory runs out.
  require_error("# a comment\n, so\ntrain: {epochs: 3}\n",
                "cfg.yaml:2:1: invalid YAML: a ',' outside [ ] or { }; commas separate items only "
                "inside a flow sequence or map");
  require_error("\"x\"\n,\n",
                "cfg.yaml:2:1: invalid YAML: a ',' outside [ ] or { }; commas separate items only "
                "inside a flow sequence or map");
  REQUIRE(config_status("train: {epochs: 3}\n---\n").ok());
}

TEST_CASE("a value of the wrong type names the key and the expected type") {
  require_error("train:\n  epochs: abc\n",
                "cfg.yaml:2:11: key 'train.epochs': expected an integer >= 1 and <= 1000000 or "
                "'auto', got 'abc'");
  require_error("deterministic: maybe\n",
                "cfg.yaml:1:16: key 'deterministic': expected true or false, got 'maybe'");
  require_error("train: 5\n", "cfg.yaml:1:8: key 'train': expected a map, got '5'");
  require_error(
      "train:\n  epochs:\n  batch_size: 8\n",
      "cfg.yaml:2:3: key 'train.epochs': expected an integer >= 1 and <= 1000000 or 'auto', got an "
      "empty value");
  require_error("train:\n  checkpoint: [a, b]\n",
                "cfg.yaml:2:15: key 'train.checkpoint': expected a path, got a sequence");
  require_error("train:\n  batch_size: big\n",
                "cfg.yaml:2:15: key 'train.batch_size': expected an integer >= 1 and <= 1048576 or "
                "'auto', got 'big'");
}

TEST_CASE("a long value is shortened in messages") {
  require_error(
      "seed: " + std::string(100, '7') + "x\n",
      "cfg.yaml:1:7: key 'seed': expected an integer >= 0 and <= 9007199254740991, got '" +
          std::string(60, '7') + "...'");
}

TEST_CASE("a value outside its range names the bounds") {
  require_error("train:\n  epochs: 0\n",
                "cfg.yaml:2:11: key 'train.epochs': expected an integer >= 1 and <= 1000000 or "
                "'auto', got '0'");
  require_error("data: {test_fraction: 1.5}\n",
                "cfg.yaml:1:23: key 'data.test_fraction': expected a number > 0 and < 1, got "
                "'1.5'");
  require_error(
      "seed: -1\n",
      "cfg.yaml:1:7: key 'seed': expected an integer >= 0 and <= 9007199254740991, got '-1'");
  require_error("optimizer:\n  betas: [0.9]\n",
                "cfg.yaml:2:10: key 'optimizer.betas': expected a sequence of two numbers >= 0 "
                "and < 1, such as [0.9, 0.999], got 1 item");
}

TEST_CASE("integers are range-checked before they are narrowed: nothing wraps") {
  // 4294967299 = 2^32 + 3 used to train as kernel size 3; 2147483648 became -2147483648.
  const std::string conv = "model:\n  layers:\n    - {type: conv2d, out_channels: 4, kernel_size: ";
  require_error(conv + "4294967299}\n",
                "cfg.yaml:3:52: key 'model.layers[0].kernel_size': expected an integer >= 1 and "
                "<= 1024, got '4294967299'");
  require_error(conv + "2147483648}\n",
                "cfg.yaml:3:52: key 'model.layers[0].kernel_size': expected an integer >= 1 and "
                "<= 1024, got '2147483648'");
  require_error("model:\n  layers: [{type: linear, out_features: 99999999999999999999}]\n",
                "cfg.yaml:2:41: key 'model.layers[0].out_features': expected an integer >= 1 "
                "and <= 1048576, got '99999999999999999999'");
  require_error("model:\n  layers: [{type: maxpool2d, kernel_size: 2, padding: 1025}]\n",
                "cfg.yaml:2:55: key 'model.layers[0].padding': expected an integer >= 0 and <= "
                "1024, got '1025'");
  require_error("train: {batch_size: 4294967296}\n",
                "cfg.yaml:1:21: key 'train.batch_size': expected an integer >= 1 and <= 1048576 "
                "or 'auto', got '4294967296'");
  require_error("data: {image_shape: [1, 65537, 1]}\n",
                "cfg.yaml:1:25: key 'data.image_shape[1]': expected an integer >= 1 and <= "
                "65536, got '65537'");
  require_error("seed: 9007199254740992\n",
                "cfg.yaml:1:7: key 'seed': expected an integer >= 0 and <= 9007199254740991, got "
                "'9007199254740992'");
  REQUIRE(config_status("seed: 9007199254740991\ntrain: {epochs: 1000000}\n").ok());
}

TEST_CASE("numbers are finite and within their documented range") {
  require_error("optimizer: {lr: 2147483648}\n",
                "cfg.yaml:1:17: key 'optimizer.lr': expected a number > 0 and <= 10000, got "
                "'2147483648'");
  require_error("optimizer: {lr: 0}\n",
                "cfg.yaml:1:17: key 'optimizer.lr': expected a number > 0 and <= 10000, got '0'");
  require_error(
      "optimizer: {lr: .nan}\n",
      "cfg.yaml:1:17: key 'optimizer.lr': expected a number > 0 and <= 10000, got '.nan'");
  require_error("optimizer: {eps: 1e400}\n",
                "cfg.yaml:1:18: key 'optimizer.eps': expected a number > 0 and <= 1, got '1e400'");
  require_error("optimizer: {weight_decay: 2}\n",
                "cfg.yaml:1:27: key 'optimizer.weight_decay': expected a number >= 0 and <= 1, "
                "got '2'");
  require_error("schedule: {gamma: inf}\n",
                "cfg.yaml:1:19: key 'schedule.gamma': expected a number > 0 and <= 10, got "
                "'inf'");
  require_error("data: {divisor: 1e10}\n",
                "cfg.yaml:1:17: key 'data.divisor': expected a number > 0 and <= 1000000000, got "
                "'1e10'");
  require_error("model:\n  layers: [{type: layernorm, eps: 5}]\n",
                "cfg.yaml:2:35: key 'model.layers[0].eps': expected a number > 0 and <= 1, got "
                "'5'");
  REQUIRE(config_status("optimizer: {lr: 10000, eps: 1e-12}\n").ok());
}

TEST_CASE("an empty layer is an error at its place, not a layer of type ''") {
  require_error("model:\n  layers:\n    - {type: relu}\n    -\n",
                "cfg.yaml:4:5: key 'model.layers[1]': expected a map with a 'type' key, got an "
                "empty value");
  require_error("model:\n  layers:\n    -\n    - {type: relu}\n",
                "cfg.yaml:3:5: key 'model.layers[0]': expected a map with a 'type' key, got an "
                "empty value");
  require_error("model:\n  layers: [~]\n",
                "cfg.yaml:2:12: key 'model.layers[0]': expected a map with a 'type' key, got an "
                "empty value");
}

TEST_CASE("a value that is not in an enum lists the allowed values") {
  require_error("device_policy: most_free\n",
                "cfg.yaml:1:16: key 'device_policy': unknown value 'most_free' (did you mean "
                "'most_free_memory'?), expected one of: first, most_free_memory, local_rank");
  require_error("fallback: loud\n",
                "cfg.yaml:1:11: key 'fallback': unknown value 'loud', expected one of: warn, "
                "error, silent");
}

TEST_CASE("an unknown key suggests the closest known key") {
  require_error("train:\n  epoch: 3\n",
                "cfg.yaml:2:3: key 'train.epoch': unknown key 'epoch'; did you mean 'epochs'?");
  require_error("optimiser: {lr: 0.1}\n",
                "cfg.yaml:1:1: key 'optimiser': unknown key 'optimiser'; did you mean "
                "'optimizer'?");
  require_error("predict:\n  colour: red\n",
                "cfg.yaml:2:3: key 'predict.colour': unknown key 'colour', expected one of: "
                "checkpoint, model, input, output, batch_size, capture");
}

TEST_CASE("an unknown backend name lists the known backends") {
  require_error("backends: [cuda, vulcan]\n",
                "cfg.yaml:1:18: key 'backends[1]': unknown backend 'vulcan' (did you mean "
                "'vulkan'?), expected one of: " +
                    kBackendList);
  require_error("backends:\n  - opencl\n",
                "cfg.yaml:2:5: key 'backends[0]': unknown backend 'opencl', expected one of: " +
                    kBackendList);
  require_error("backend_options:\n  onedn: {threads: 2}\n",
                "cfg.yaml:2:3: key 'backend_options.onedn': unknown backend 'onedn' (did you "
                "mean 'onednn'?), expected one of: " +
                    kBackendList);
  require_error("backends: []\n",
                "cfg.yaml:1:11: key 'backends': expected a sequence of backend names, such as "
                "[cuda, vulkan, onednn, reference], got 0 items");
}

TEST_CASE("a device spec must be auto, cpu, a backend or backend:index") {
  const std::string expected =
      "expected auto, cpu, <backend> or <backend>:<index>, where "
      "<backend> is one of: " +
      kBackendList;
  require_error("device: cdua:0\n",
                "cfg.yaml:1:9: key 'device': unknown backend 'cdua' in "
                "device 'cdua:0' (did you mean 'cuda'?), " +
                    expected);
  require_error("device: cuda:x\n",
                "cfg.yaml:1:9: key 'device': bad device index 'x' in device 'cuda:x', expected "
                "a non-negative integer after ':', such as cuda:0");
  require_error("device: vulkan:-1\n",
                "cfg.yaml:1:9: key 'device': bad device index '-1' in device 'vulkan:-1', "
                "expected a non-negative integer after ':', such as vulkan:0");
  REQUIRE(config_status("device: cpu\n").ok());
  REQUIRE(config_status("device: cuda\n").ok());
  // Only backends that have a plugin are known: no plugin "metal" exists.
  require_error(
      "device: metal:3\n",
      "cfg.yaml:1:9: key 'device': unknown backend 'metal' in device 'metal:3', " + expected);
}

TEST_CASE("a duplicate key is an error that names both places") {
  require_error("seed: 1\nseed: 2\n",
                "cfg.yaml:2:1: key 'seed': duplicate key 'seed' (first defined at line 1, "
                "column 1), expected each key at most once in a map");
  require_error("train:\n  epochs: 3\n  batch_size: 8\n  epochs: 4\n",
                "cfg.yaml:4:3: key 'train.epochs': duplicate key 'epochs' (first defined at "
                "line 2, column 3), expected each key at most once in a map");
  require_error("backend_options:\n  onednn: {threads: 1, threads: 2}\n",
                "cfg.yaml:2:24: key 'backend_options.onednn.threads': duplicate key 'threads' "
                "(first defined at line 2, column 12), expected each key at most once in a map");
}

TEST_CASE("an unterminated quote at the end of the file points at the opening quote") {
  // yaml-cpp accepts this one silently (the file ends with a newline).
  require_error("train:\n  checkpoint: \"runs/a.ckpt\n",
                "cfg.yaml:2:15: key 'train.checkpoint': unterminated quoted string starting "
                "here, expected a closing \" before the end of the file");
  require_error("seed: 1\ndevice: 'cuda\n\n",
                "cfg.yaml:2:9: key 'device': unterminated quoted string starting here, expected "
                "a closing ' before the end of the file");
  // In a key, the open quote swallows the rest of the file: the message names the parent map.
  require_error("train:\n  'epochs: 3\n  batch_size: 8\n",
                "cfg.yaml:2:3: key 'train': unterminated quoted string starting here, expected a "
                "closing ' before the end of the file");
  // yaml-cpp rejects these, but at the end of the file; the message points at the quote.
  require_error("seed: 1\ndevice: \"cuda",
                "cfg.yaml:2:9: unterminated quoted string starting here, expected a closing \" "
                "before the end of the file");
  require_error("backends: [\"cuda, reference]\n",
                "cfg.yaml:1:12: unterminated quoted string starting here, expected a closing \" "
                "before the end of the file");
  // A quote inside a block scalar opens nothing: the real syntax error is reported.
  require_error("data:\n  dataset: |\n    it's \"quoted\n  scale: [none\n",
                "cfg.yaml:5:1: invalid YAML: end of sequence flow not found");
  // Quotes inside plain scalars, comments and block scalars open nothing.
  REQUIRE(config_status("task: train # it's \"fine\n").ok());
  REQUIRE(config_status("data:\n  dataset: don't\n").ok());
  REQUIRE(config_status("seed: 1\ndata: {dataset: 'it''s'}\n").ok());
}

TEST_CASE("layer maps allow only the keys of their type") {
  require_error("model:\n  layers:\n    - {type: linear, out_feature: 3}\n",
                "cfg.yaml:3:22: key 'model.layers[0].out_feature': unknown key 'out_feature' "
                "for type 'linear'; did you mean 'out_features'?");
  require_error("model:\n  layers:\n    - {type: relu, p: 0.5}\n",
                "cfg.yaml:3:20: key 'model.layers[0].p': unknown key 'p' for type 'relu', "
                "expected only 'type'");
  require_error("model:\n  layers:\n    - {type: relu}\n    - {type: linear}\n",
                "cfg.yaml:4:7: key 'model.layers[1].out_features': missing required key "
                "'out_features' for type 'linear', expected an integer >= 1 and <= 1048576");
  require_error("model:\n  layers:\n    - {type: conv3d, out_channels: 4}\n",
                "cfg.yaml:3:14: key 'model.layers[0].type': unknown value 'conv3d' (did you "
                "mean 'conv2d'?), expected one of: linear, conv2d, maxpool2d, avgpool2d, "
                "dropout, layernorm, relu, gelu, tanh, sigmoid, flatten, vae_latent, embedding, "
                "lstm, gru, positional_encoding, cls_token, transformer_encoder, sequence_pool, "
                "batchnorm1d, batchnorm2d");
  require_error("model:\n  layers:\n    - {out_features: 4}\n",
                "cfg.yaml:3:7: key 'model.layers[0].type': missing required key 'type', expected "
                "one of: linear, conv2d, maxpool2d, avgpool2d, dropout, layernorm, relu, gelu, "
                "tanh, sigmoid, flatten, vae_latent, embedding, lstm, gru, positional_encoding, "
                "cls_token, transformer_encoder, sequence_pool, batchnorm1d, batchnorm2d");
  require_error("model:\n  layers:\n    - {type: dropout, p: 1.0}\n",
                "cfg.yaml:3:26: key 'model.layers[0].p': expected a number >= 0 and < 1, got "
                "'1.0'");
}

TEST_CASE("backend options accept any scalar but nothing nested") {
  REQUIRE(config_status("backend_options:\n  cuda: {anything: 1, other: text}\n").ok());
  require_error("backend_options:\n  onednn:\n    threads: [1, 2]\n",
                "cfg.yaml:3:14: key 'backend_options.onednn.threads': expected a scalar option "
                "value (a string, number or true/false), got a sequence");
}

TEST_CASE("several problems are all reported, in file order") {
  const switchyard::Status status = config_status("seed: x\ntrain:\n  epoch: 3\nfallback: no\n");
  REQUIRE(status.message() ==
          "cfg.yaml:1:7: key 'seed': expected an integer >= 0 and <= 9007199254740991, got 'x'\n"
          "cfg.yaml:3:3: key 'train.epoch': unknown key 'epoch'; did you mean 'epochs'?\n"
          "cfg.yaml:4:11: key 'fallback': unknown value 'no', expected one of: warn, error, "
          "silent");
}

TEST_CASE("the top level must be a map and hold one document") {
  require_error("- a\n- b\n", "cfg.yaml:1:1: expected a map, got a sequence");
  require_error("seed: 1\n---\nseed: 2\n",
                "cfg.yaml:3:1: a second YAML document starts here, expected one document per "
                "configuration file");
}

TEST_CASE("an empty file or one of only comments is a valid empty config") {
  for (const std::string text : {"", "\n\n", "# just a comment\n   # another\n"}) {
    auto config = Config::load_string(text, "empty.yaml");
    REQUIRE(config.ok());
    REQUIRE(config->runtime().backends == switchyard::RuntimeSettings().backends);
    REQUIRE_FALSE(config->runtime().backends_from_config);
    REQUIRE_FALSE(config->root()["train"].valid());
  }
  auto from_file = Config::load_file(switchyard::testing::config_data_file("comments_only.yaml"));
  REQUIRE(from_file.ok());
  REQUIRE(from_file->root().keys().empty());
}

TEST_CASE("a missing file is NOT_FOUND and names the path") {
  const std::string path = switchyard::testing::config_data_file("no_such_file.yaml");
  auto config = Config::load_file(path);
  REQUIRE(config.status().code() == StatusCode::kNotFound);
  REQUIRE(config.status().message() == "config file '" + path + "' does not exist");
}

TEST_CASE("errors in a file carry the file's path as given") {
  const std::string path = switchyard::testing::config_data_file("unknown_key.yaml");
  auto config = Config::load_file(path);
  REQUIRE(config.status().code() == StatusCode::kInvalidArgument);
  REQUIRE(config.status().message() ==
          path +
              ":4:3: key 'optimizer.learning_rate': unknown key 'learning_rate', expected one "
              "of: type, lr, momentum, nesterov, weight_decay, betas, eps");
}

// Hostile files (issue 26): each is refused quickly, naming the file and the place, never a crash
// (stack overflow), a hang or memory exhaustion.
TEST_CASE("an alias inside the node it names is refused as a cycle, not a stack overflow") {
  require_error("x: &x [*x]\n",
                "cfg.yaml:1:8: this alias refers to a node that contains it, which makes the "
                "configuration endless (a cycle); a configuration must be a tree");
  require_error("model: &m {layers: [{type: relu, extra: *m}]}\n",
                "cfg.yaml:1:41: this alias refers to a node that contains it, which makes the "
                "configuration endless (a cycle); a configuration must be a tree");
  // The same through --set.
  const switchyard::Status status = config_status("seed: 1\n", {"train.epochs=&y [*y]"});
  REQUIRE(status.code() == StatusCode::kInvalidArgument);
  REQUIRE_THAT(status.message(),
               Catch::Contains("--set 'train.epochs=&y [*y]'") && Catch::Contains("a cycle"));
  // An alias of a finished node is an ordinary value.
  REQUIRE(config_status("seed: &s 3\ntrain: {epochs: *s}\n").ok());
}

TEST_CASE("nested aliases that expand past the node bound are refused without expanding them") {
  // "Billion laughs": nine levels of nine aliases would be 9^9 = 387 million nodes.
  std::string text = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int level = 1; level < 9; ++level) {
    text += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int k = 0; k < 9; ++k) text += (k > 0 ? ", *a" : "*a") + std::to_string(level - 1);
    text += "]\n";
  }
  const auto start = std::chrono::steady_clock::now();
  const switchyard::Status status = config_status(text);
  REQUIRE(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  REQUIRE(status.code() == StatusCode::kInvalidArgument);
  REQUIRE_THAT(status.message(),
               Catch::StartsWith("cfg.yaml:7:") && Catch::Contains("more than 1000000 nodes"));
}

TEST_CASE("nesting deeper than the bound is refused naming the place") {
  const std::string text = "a: " + std::string(300, '[') + std::string(300, ']') + "\n";
  require_error(text,
                "cfg.yaml:1:203: sequences and maps nest more than 200 deep here; a configuration "
                "nests a few levels");
}

TEST_CASE("a configuration over the size bound is refused by its size, before it is read") {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "switchyard-huge-config.yaml";
  {
    std::ofstream out(path);
    const std::string line = "unknown_key_with_a_long_name: 1234567890\n";
    for (std::size_t written = 0; written <= switchyard::kMaxConfigBytes; written += line.size()) {
      out << line;
    }
  }
  const auto config = Config::load_file(path);
  REQUIRE(config.status().code() == StatusCode::kInvalidArgument);
  REQUIRE_THAT(config.status().message(),
               Catch::StartsWith("config file '" + path.string() + "' is ") &&
                   Catch::Contains("at most 4194304 are read"));
  std::filesystem::remove(path);
  // Text given directly is bounded the same way.
  const switchyard::Status text_status =
      config_status(std::string(switchyard::kMaxConfigBytes + 1, '#'));
  REQUIRE_THAT(text_status.message(), Catch::StartsWith("cfg.yaml: the configuration is 4194305"));
}

TEST_CASE("many unknown keys are reported in linear time") {
  // The duplicate check used to compare each key with every earlier one: quadratic in the keys.
  // A wall-clock bound failed under the sanitizers on a busy machine, so this compares the time
  // for 8x the keys with the time for 1x, each the best of three runs: about 8x when linear,
  // about 64x when quadratic. The bound, 24x, leaves room for a noisy machine.
  const auto text_with = [](int keys) {
    std::string text;
    for (int i = 0; i < keys; ++i) text += "key" + std::to_string(i) + ": 1\n";
    return text;
  };
  const auto best_seconds = [](const std::string& text) {
    double best = 1e30;
    for (int run = 0; run < 3; ++run) {
      const auto start = std::chrono::steady_clock::now();
      (void)config_status(text);
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      best = std::min(best, took.count());
    }
    return best;
  };
  const std::string large = text_with(40000);
  const double small_seconds = best_seconds(text_with(5000));
  const double large_seconds = best_seconds(large);
  INFO("5000 keys: " << small_seconds << " s; 40000 keys: " << large_seconds << " s");
  CHECK(large_seconds < 24 * small_seconds + 0.05);

  const switchyard::Status status = config_status(large);
  REQUIRE(status.code() == StatusCode::kInvalidArgument);
  REQUIRE_THAT(status.message(), Catch::StartsWith("cfg.yaml:1:1: key 'key0': unknown key") &&
                                     Catch::EndsWith("... and 39980 more errors"));
}
