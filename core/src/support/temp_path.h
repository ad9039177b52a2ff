// The temporary file a write goes to before it is renamed over its destination.
#pragma once

#include <filesystem>

namespace switchyard::detail {

// "<folder of path>/.<name of path>.tmp.<pid>.<n>": hidden, in the destination's folder (so that
// the rename stays on one file system), and unique for every call in this process, not only per
// process: two threads saving one path at once each write their own file and the later rename
// wins whole. With the process id alone they shared one temporary file, and the second O_TRUNC
// and interleaved writes could rename a mixture of both over the destination.
std::filesystem::path temporary_path_for(const std::filesystem::path& path);

}  // namespace switchyard::detail
