#include "runtime/memory_budget.h"

#include <unistd.h>

#include "switchyard/device.h"
#include "switchyard/plugin_support/format_bytes.h"

namespace switchyard::detail {
namespace {

uint64_t physical_memory_bytes() {
  static const uint64_t bytes = [] {
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page_size = ::sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page_size <= 0) return uint64_t{0};
    return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
  }();
  return bytes;
}

std::string with_file(const std::string& file, const std::string& message) {
  return file.empty() ? message : file + ": " + message;
}

std::string budget_text(const MemoryBudget& budget) {
  return "the memory budget of " + sy_support::format_bytes(budget.bytes) + ", " + budget.source;
}

}  // namespace

MemoryBudget memory_budget(const Device* device) {
  MemoryBudget budget{physical_memory_bytes(), "the host's physical memory"};
  if (budget.bytes == 0) budget = {UINT64_MAX, "unknown (sysconf gives no physical memory)"};
  if (device == nullptr) return budget;
  const uint64_t total = device->info().memory_total_bytes;
  if (total != 0 && total < budget.bytes) budget = {total, "the memory of " + device->id()};
  if (const auto stats = device->memory_stats(); stats.ok()) {
    if (stats->limit_bytes != 0 && stats->limit_bytes < budget.bytes) {
      budget = {stats->limit_bytes, "the memory limit of " + device->id()};
    }
  }
  return budget;
}

std::optional<uint64_t> shape_bytes(const std::vector<int64_t>& shape, uint64_t element_bytes) {
  uint64_t bytes = element_bytes;
  for (const int64_t extent : shape) {
    const uint64_t e = extent < 0 ? 0 : static_cast<uint64_t>(extent);
    if (__builtin_mul_overflow(bytes, e, &bytes)) return std::nullopt;
  }
  return bytes;
}

Status check_memory_budget(uint64_t bytes, const std::string& what, const std::string& file,
                           const Device* device) {
  const MemoryBudget budget = memory_budget(device);
  if (bytes <= budget.bytes) return ok_status();
  return resource_exhausted(with_file(
      file, sy_support::format_bytes(bytes) + " for " + what + " exceed " + budget_text(budget)));
}

Status check_shape_budget(const std::vector<int64_t>& shape, uint64_t element_bytes,
                          const std::string& what, const std::string& file, const Device* device) {
  const std::optional<uint64_t> bytes = shape_bytes(shape, element_bytes);
  if (bytes) return check_memory_budget(*bytes, what, file, device);
  return resource_exhausted(with_file(
      file, what + " needs more than 2^64 bytes, over " + budget_text(memory_budget(device))));
}

}  // namespace switchyard::detail
