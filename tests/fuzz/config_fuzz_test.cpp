// The YAML configuration loader under mutated input (fuzz_support.h): the shipped configs, cut,
// spliced and sprinkled with YAML syntax, through the same steps a run takes (parse, schema
// validation, the runtime, train and predict settings).
#include <string>

#include "fuzz/fuzz_checks.h"
#include "fuzz/fuzz_support.h"
#include "switchyard/config.h"
#include "test_support.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

Bytes config_seed(const std::string& name) {
  const std::string text = read_text(std::string(SWITCHYARD_SOURCE_DIR) + "/configs/" + name);
  REQUIRE_FALSE(text.empty());
  return to_bytes(text);
}

Status load_like_a_run(const std::filesystem::path& path) {
  auto config = Config::load_file(path);
  return config.ok() ? settings_like_a_run(*config) : config.status();
}

}  // namespace

TEST_CASE("fuzz: the YAML config loader loads or refuses mutants, naming the file", "[fuzz]") {
  FuzzTarget target;
  target.name = "mutant.yaml";
  target.corpus = "config";
  target.seeds = {config_seed("digits-mlp.yaml"), config_seed("digits-cnn.yaml"),
                  config_seed("digits-predict.yaml"), config_seed("iris-mlp.yaml")};
  target.dictionary = {":",          "\n",     "- ",
                       "  ",         "[",      "]",
                       "{",          "}",      ",",
                       "#",          "&a ",    "*a",
                       "!!str ",     "<<: *a", "---",
                       "...",        "'",      "\"",
                       "|\n",        ">\n",    "~",
                       ".nan",       "-.inf",  "1e400",
                       "4294967299", "-1",     "99999999999999999999",
                       "0x10",       "\t",     "type: ",
                       "layers:",    "train:", "model:\n  layers:\n    -",
                       "epochs: "};
  target.load = load_like_a_run;
  target.max_message_chars = kConfigMessageChars;
  const FuzzCounts counts = run_fuzz(target, 19);
  CHECK(counts.loaded > kMutantsPerTarget / 20);  // the mutants reach both outcomes
  CHECK(counts.refused > kMutantsPerTarget / 20);
}

TEST_CASE("fuzz: deeply nested YAML is refused, not a stack overflow", "[fuzz]") {
  TempDir dir;
  for (const std::string open : {"[", "{a: ", "- "}) {
    std::string text = "model: ";
    for (int i = 0; i < 100000; ++i) text += open;
    const std::filesystem::path path = dir / "deep.yaml";
    write_bytes(path, to_bytes(text));
    const Status status = load_like_a_run(path);
    INFO(status.to_string().substr(0, 400));
    CHECK(status.code() == StatusCode::kInvalidArgument);
    CHECK(status.message().find(path.string()) != std::string::npos);
  }
}
