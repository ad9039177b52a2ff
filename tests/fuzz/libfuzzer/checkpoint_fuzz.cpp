// libFuzzer target: the checkpoint reader (fuzz_target.h). The input is a checkpoint file's bytes,
// parsed as they are and again with their framing repaired (magic, version, payload size and
// checksum made to match), so that the records themselves are reached; each loaded checkpoint is
// decoded as a resume or a prediction would (the steps of tests/fuzz/checkpoint_fuzz_test.cpp).
// Corpus: tests/fuzz/corpus/checkpoint (checkpoints our own serializer wrote).
#include "fuzz/fuzz_checks.h"
#include "fuzz_target.h"
#include "switchyard/checkpoint.h"

using namespace switchyard;

namespace {

void parse_and_decode(const std::vector<uint8_t>& bytes, const std::string& source) {
  const Result<Checkpoint> checkpoint = parse_checkpoint(bytes, source);
  const Status status =
      checkpoint.ok() ? testing::decode_checkpoint(*checkpoint) : checkpoint.status();
  fuzz::check_outcome(status, source);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::no_exception_escapes([&] {
    std::vector<uint8_t> bytes = fuzz::to_vector(data, size);
    parse_and_decode(bytes, "fuzz-input.ckpt");
    if (bytes.size() >= 32) {
      testing::fix_checkpoint_framing(bytes);
      parse_and_decode(bytes, "fuzz-input-framed.ckpt");
    }
  });
  return 0;
}
