// Tensors in the safetensors format, the plain weight file of the PyTorch / Hugging Face world,
// so that weights move between switchyard and other frameworks without a converter.
//
// File layout (https://github.com/huggingface/safetensors, little-endian):
//   bytes 0..7   u64 N, the length of the JSON header
//   N bytes      {"<name>": {"dtype": "F32", "shape": [out, in], "data_offsets": [begin, end]},
//                 ..., "__metadata__": {"<key>": "<value>", ...}}
//   the rest     the tensors' bytes, row-major; offsets count from the end of the header
// Written headers are padded with spaces to a multiple of 8 bytes. Read: F64, F32, F16, BF16 (as
// floats), I64, I32, I16, I8, U8, BOOL (as integers); anything else is an error naming the tensor.
//
// Parameter names and layouts are PyTorch's: a Sequential's "0.weight" of a linear layer is
// [out_features, in_features], a conv2d weight [out, in, kh, kw], so a state_dict of the same
// nn.Sequential loads either way.
//
// Threads: as checkpoint.h: plain values, functions without state, and whole files when threads
// write one path at once.
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "switchyard/checkpoint.h"
#include "switchyard/status.h"

namespace switchyard {

struct SafetensorsFile {
  std::vector<std::pair<std::string, TensorRecord>> tensors;  // in file (offset) order
  std::map<std::string, std::string> metadata;
};

// The file's bytes. Float tensors are written as f32, integer tensors as i64 (the widths
// TensorRecord holds). INVALID_ARGUMENT for an empty or repeated name or "__metadata__".
Result<std::vector<uint8_t>> serialize_safetensors(const SafetensorsFile& file);
// Checks the header length, the JSON, every dtype, shape and offset range (inside the data, no
// overlaps, sizes matching the shapes); DATA_LOSS naming `source` and the tensor otherwise.
Result<SafetensorsFile> parse_safetensors(const std::vector<uint8_t>& bytes,
                                          const std::string& source);

// Written like a checkpoint: a temporary file, fsync, rename, so an existing file at `path` is
// either replaced whole or left untouched.
Status write_safetensors(const std::filesystem::path& path, const SafetensorsFile& file);
Result<SafetensorsFile> read_safetensors(const std::filesystem::path& path);

}  // namespace switchyard

#pragma GCC visibility pop
