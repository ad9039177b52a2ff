// Whole-file reads and writes for checkpoints and exported weights. A write replaces the file so
// that a crash at any moment leaves the old file or the new one, never a mixture.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "switchyard/status.h"

namespace switchyard::detail {

// A temporary file in the same folder, fsync, rename over `path`, fsync of the folder. On any
// failure the temporary file is removed and an existing `path` is left untouched. Creates missing
// parent folders. `what` ("checkpoint", "weights") names the file in error messages.
Status write_file_atomically(const std::filesystem::path& path, const std::vector<uint8_t>& bytes,
                             const std::string& what);

// The file's bytes; errors as detail::read_input_bytes (runtime/input_file.h) gives them:
// "<what> <path> is a directory, expected a file" and so on.
Result<std::vector<uint8_t>> read_file_bytes(const std::filesystem::path& path,
                                             const std::string& what);

}  // namespace switchyard::detail
