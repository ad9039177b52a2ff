// libFuzzer target: the safetensors reader (fuzz_target.h). The input is a file's bytes, parsed as
// they are and again with the header length set to where the header's JSON ends, so that
// mutations of the JSON reach the dtype, shape and offset checks (the steps of
// tests/fuzz/safetensors_fuzz_test.cpp). Corpus: tests/fuzz/corpus/safetensors (files our own
// writer made, one by hand with every dtype, and regression-*: inputs fuzzing found).
#include "fuzz/fuzz_checks.h"
#include "fuzz_target.h"
#include "switchyard/safetensors.h"

using namespace switchyard;

namespace {

void parse_and_check(const std::vector<uint8_t>& bytes, const std::string& source) {
  const Result<SafetensorsFile> file = parse_safetensors(bytes, source);
  const Status status = file.ok() ? testing::check_loaded_safetensors(*file) : file.status();
  fuzz::check_outcome(status, source, 2000);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::no_exception_escapes([&] {
    std::vector<uint8_t> bytes = fuzz::to_vector(data, size);
    parse_and_check(bytes, "fuzz-input.safetensors");
    if (bytes.size() >= 8) {
      testing::fix_safetensors_header_length(bytes);
      parse_and_check(bytes, "fuzz-input-fixed.safetensors");
    }
  });
  return 0;
}
