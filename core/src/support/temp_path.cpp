#include "support/temp_path.h"

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <string>

namespace switchyard::detail {

std::filesystem::path temporary_path_for(const std::filesystem::path& path) {
  static std::atomic<uint64_t> next{0};
  const uint64_t n = next.fetch_add(1, std::memory_order_relaxed);
  const std::string name = "." + path.filename().string() + ".tmp." + std::to_string(::getpid()) +
                           "." + std::to_string(n);
  return path.parent_path().empty() ? std::filesystem::path(name) : path.parent_path() / name;
}

}  // namespace switchyard::detail
