// Where this process's files are: the folders that plugin and data-set lookups start from.
// Private to the core.
#pragma once

#include <filesystem>

namespace switchyard::detail {

// The folder of the running executable ("" if /proc/self/exe cannot be read).
std::filesystem::path executable_directory();

// The folder of libswitchyard_core itself, symlinks resolved ("" if unknown, or if the core is
// linked into the executable, as in the CLI and the tests). It differs from the executable's when
// an application links an installed core: plugins and data sit next to it.
std::filesystem::path core_library_directory();

}  // namespace switchyard::detail
