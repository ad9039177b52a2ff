// The safetensors loader under mutated input (fuzz_support.h): whole files, headers with a
// repaired length, and data areas.
#include <cstring>

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

// Sets the header length to where the header's JSON ends (its last '}'), so that mutations of
// the header text reach the JSON and offset checks instead of the length check.
void fix_header_length(Bytes& bytes) {
  if (bytes.size() < 8) return;
  size_t end = 8;
  int depth = 0;
  for (size_t i = 8; i < bytes.size(); ++i) {
    depth += bytes[i] == '{' ? 1 : bytes[i] == '}' ? -1 : 0;
    if (bytes[i] == '}' && depth == 0) {
      end = i + 1;
      break;
    }
  }
  const uint64_t length = end - 8;
  std::memcpy(bytes.data(), &length, 8);
}

Status check_loaded(const SafetensorsFile& file) {
  for (const auto& [name, record] : file.tensors) {
    uint64_t count = 1;
    for (const int64_t extent : record.shape) count *= static_cast<uint64_t>(extent);
    const size_t values = is_floating(record.dtype) ? record.floats.size() : record.integers.size();
    if (values != count) return Status(StatusCode::kInternal, "tensor " + name + " miscounted");
  }
  return ok_status();
}

}  // namespace

TEST_CASE("fuzz: the safetensors loader loads or refuses mutants, naming the file", "[fuzz]") {
  FuzzTarget target;
  target.name = "mutant.safetensors";
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
  target.fix_up = fix_header_length;
  target.load = [](const std::filesystem::path& path) {
    auto file = read_safetensors(path);
    return file.ok() ? check_loaded(*file) : file.status();
  };
  const FuzzCounts counts = run_fuzz(target, 29);
  CHECK(counts.refused > kMutantsPerTarget / 2);
  CHECK(counts.loaded > 0);
}
