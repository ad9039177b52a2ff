// Reading a whole text file, decompressing gzip on the way when the name ends in ".gz".
#pragma once

#include <filesystem>
#include <string>

#include "switchyard/status.h"

namespace switchyard::detail {

// The file's bytes. Errors name the path and the reason (errno text, or zlib's message).
Result<std::string> read_text_file(const std::filesystem::path& path);

}  // namespace switchyard::detail
