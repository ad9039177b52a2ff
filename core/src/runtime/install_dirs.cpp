#include "runtime/install_dirs.h"

#include <dlfcn.h>

namespace switchyard::detail {

std::filesystem::path executable_directory() {
  std::error_code error;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::filesystem::path() : exe.parent_path();
}

std::filesystem::path core_library_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&core_library_directory), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  std::error_code error;
  const auto path = std::filesystem::canonical(info.dli_fname, error);
  if (error) return {};
  // The CLI and the tests link the core's objects into the program itself: then there is no
  // library to look beside, only the executable.
  const auto exe = std::filesystem::canonical("/proc/self/exe", error);
  if (!error && exe == path) return {};
  return path.parent_path();
}

}  // namespace switchyard::detail
