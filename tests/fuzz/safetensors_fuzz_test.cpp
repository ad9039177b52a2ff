// The safetensors loader under mutated input (fuzz_support.h): whole files, headers with a
// repaired length, and data areas.
#include <cstring>

#include "fuzz/fuzz_checks.h"
#include "fuzz/fuzz_support.h"
#include "switchyard/safetensors.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

Bytes exported_file() {
  SafetensorsFile file;
  file.tensors.emplace_back("0.weight", TensorRecord{DType::kF32, {2, 3}, {1, -2, 3, 0, 5, 6}, {}});
  file.tensors.emplace_back("0.bias", TensorRecord{DType::kF32, {2}, {0.25f, -0.5f}, {}});
  file.tensors.emplace_back("steps", TensorRecord{DType::kI64, {1}, {}, {3}});
  file.metadata["format"] = "pt";
  file.metadata["switchyard.data"] = "dataset=iris";
  return value_or_throw(serialize_safetensors(file));
}

Bytes handmade_file() {
  const std::string header =
      "{\"h\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]},"
      "\"b\":{\"dtype\":\"BF16\",\"shape\":[],\"data_offsets\":[4,6]},"
      "\"s\":{\"dtype\":\"I8\",\"shape\":[2],\"data_offsets\":[6,8]},"
      "\"d\":{\"dtype\":\"F64\",\"shape\":[1,1],\"data_offsets\":[8,16]}}";
  Bytes bytes(8);
  const uint64_t length = header.size();
  std::memcpy(bytes.data(), &length, 8);
  bytes.insert(bytes.end(), header.begin(), header.end());
  for (int i = 0; i < 16; ++i) bytes.push_back(static_cast<uint8_t>(0x3c + i));
  return bytes;
}

}  // namespace

TEST_CASE("fuzz: the safetensors loader loads or refuses mutants, naming the file", "[fuzz]") {
  FuzzTarget target;
  target.name = "mutant.safetensors";
  target.corpus = "safetensors";
  target.seeds = {exported_file(), handmade_file()};
  target.dictionary = {"{",
                       "}",
                       "[",
                       "]",
                       ",",
                       ":",
                       "\"",
                       "\\",
                       "F32",
                       "I64",
                       "BF16",
                       "__metadata__",
                       "data_offsets",
                       "shape",
                       "-1",
                       "0",
                       "18446744073709551615",
                       "9223372036854775807",
                       "1e3",
                       "null",
                       "true"};
  target.fix_up = fix_safetensors_header_length;
  target.load = [](const std::filesystem::path& path) {
    auto file = read_safetensors(path);
    return file.ok() ? check_loaded_safetensors(*file) : file.status();
  };
  const FuzzCounts counts = run_fuzz(target, 29);
  CHECK(counts.refused > kMutantsPerTarget / 2);
  CHECK(counts.loaded > 0);
}
