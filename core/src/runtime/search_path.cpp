#include <unistd.h>

#include <cstdlib>
#include <string>

#include "runtime/install_dirs.h"
#include "switchyard/registry.h"

namespace switchyard {
namespace {

void append_unique(std::vector<std::filesystem::path>& paths, const std::filesystem::path& path) {
  if (path.empty()) return;
  const auto normal = path.lexically_normal();
  for (const auto& existing : paths) {
    if (existing == normal) return;
  }
  paths.push_back(normal);
}

}  // namespace

std::vector<std::filesystem::path> plugin_search_path(
    const std::vector<std::filesystem::path>& config_paths) {
  std::vector<std::filesystem::path> paths;
  if (const char* env = std::getenv("SWITCHYARD_PLUGIN_PATH"); env != nullptr) {
    std::string text = env;
    size_t start = 0;
    while (start <= text.size()) {
      const size_t end = text.find(':', start);
      const std::string part = text.substr(start, end == std::string::npos ? end : end - start);
      if (!part.empty()) append_unique(paths, std::filesystem::absolute(part));
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  for (const auto& path : config_paths) append_unique(paths, path);
  const auto exe_dir = detail::executable_directory();
  if (!exe_dir.empty()) append_unique(paths, exe_dir.parent_path() / "lib" / "switchyard");
  const auto core_dir = detail::core_library_directory();
  if (!core_dir.empty()) append_unique(paths, core_dir / "switchyard");
  return paths;
}

}  // namespace switchyard
