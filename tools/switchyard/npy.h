// NumPy .npy files (format versions 1.0 to 3.0), for `bench model --check-input/--check-output`:
// little-endian f32, f64, i32 and i64 arrays in C order, read into host vectors. Anything else
// (big-endian, Fortran order, object arrays, a header or data shorter than it says) is an
// INVALID_ARGUMENT naming the file and what is wrong, never a crash.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "switchyard/status.h"

namespace switchyard::cli {

struct NpyArray {
  std::string descr;           // "<f4", "<f8", "<i4" or "<i8"
  std::vector<int64_t> shape;  // () for a scalar
  std::vector<double> values;  // every element, in C order, as a double (i64 beyond 2^53 refused)
  bool is_float() const { return descr[1] == 'f'; }
};

Result<NpyArray> read_npy(const std::filesystem::path& path);

}  // namespace switchyard::cli
