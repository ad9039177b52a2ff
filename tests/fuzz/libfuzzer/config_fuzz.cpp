// libFuzzer target: the YAML configuration (fuzz_target.h). The input is a configuration's text,
// parsed and validated as `switchyard run` reads it before it touches data or devices (the steps
// of tests/fuzz/config_fuzz_test.cpp). Corpus: tests/fuzz/corpus/config (the shipped configs).
#include <string>

#include "fuzz/fuzz_checks.h"
#include "fuzz_target.h"
#include "switchyard/config.h"

using namespace switchyard;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string source = "fuzz-input.yaml";
  fuzz::no_exception_escapes([&] {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const Result<Config> config = Config::load_string(text, source);
    const Status status = config.ok() ? testing::settings_like_a_run(*config) : config.status();
    fuzz::check_outcome(status, source, testing::kConfigMessageChars);
  });
  return 0;
}
