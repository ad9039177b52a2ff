#include "device.h"

#include <omp.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>

#include "error.h"

namespace sy_onednn {
namespace {

constexpr size_t kPrimitiveCacheCapacity = 1024;

int64_t parse_integer(const char* key, const char* value) {
  int64_t parsed = 0;
  const char* end = value + std::strlen(value);
  auto [ptr, ec] = std::from_chars(value, end, parsed);
  if (ec != std::errc() || ptr != end) {
    fail_invalid(cat("onednn: option '", key, "' must be an integer, got '", value, "'"));
  }
  return parsed;
}

double parse_number(const char* key, const char* value) {
  char* end = nullptr;
  double parsed = std::strtod(value, &end);
  if (end == value || *end != '\0') {
    fail_invalid(cat("onednn: option '", key, "' must be a number, got '", value, "'"));
  }
  return parsed;
}

bool parse_bool(const char* key, const char* value) {
  const std::string text = value;
  if (text == "true" || text == "1" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "0" || text == "no" || text == "off") return false;
  fail_invalid(cat("onednn: option '", key, "' must be true or false, got '", value, "'"));
}

}  // namespace

int default_thread_count() {
  static const int count = std::max(1, omp_get_max_threads());
  return count;
}

DeviceOptions parse_device_options(const sy_option* options, size_t count,
                                   uint64_t memory_total_bytes) {
  DeviceOptions parsed;
  parsed.threads = default_thread_count();
  uint64_t bytes_cap = 0;
  uint64_t fraction_cap = 0;
  for (size_t i = 0; i < count; ++i) {
    const char* key = options[i].key ? options[i].key : "";
    const char* value = options[i].value ? options[i].value : "";
    if (std::strcmp(key, "threads") == 0) {
      int64_t threads = parse_integer(key, value);
      if (threads < 1 || threads > 4096) {
        fail_invalid(cat("onednn: option 'threads' must be between 1 and 4096, got ", threads));
      }
      parsed.threads = static_cast<int>(threads);
    } else if (std::strcmp(key, "memory_limit_bytes") == 0) {
      int64_t bytes = parse_integer(key, value);
      if (bytes < 0) fail_invalid(cat("onednn: option 'memory_limit_bytes' is negative: ", bytes));
      bytes_cap = static_cast<uint64_t>(bytes);
    } else if (std::strcmp(key, "memory_fraction") == 0) {
      double fraction = parse_number(key, value);
      if (!(fraction > 0.0 && fraction <= 1.0)) {
        fail_invalid(cat("onednn: option 'memory_fraction' must be in (0, 1], got ", value));
      }
      fraction_cap = static_cast<uint64_t>(fraction * static_cast<double>(memory_total_bytes));
      if (fraction_cap == 0) fraction_cap = 1;
    } else if (std::strcmp(key, "adaptive_threads") == 0) {
      parsed.adaptive_threads = parse_bool(key, value);
    } else {
      fail_invalid(
          cat("onednn: unknown option '", key,
              "' (known: threads, memory_limit_bytes, memory_fraction, adaptive_threads)"));
    }
  }
  if (bytes_cap != 0 && fraction_cap != 0) {
    parsed.limit_bytes = std::min(bytes_cap, fraction_cap);
  } else {
    parsed.limit_bytes = bytes_cap != 0 ? bytes_cap : fraction_cap;
  }
  return parsed;
}

}  // namespace sy_onednn

sy_device_s::sy_device_s(const sy_onednn::CpuInfo& cpu_info,
                         const sy_onednn::DeviceOptions& options)
    : cpu(cpu_info),
      threads(options.threads),
      adaptive_threads(options.adaptive_threads),
      engine(dnnl::engine::kind::cpu, 0),
      pool(options.limit_bytes),
      primitives(sy_onednn::kPrimitiveCacheCapacity) {}
