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

dnnl::fpmath_mode parse_fpmath(const char* key, const char* value) {
  for (auto mode : {dnnl::fpmath_mode::strict, dnnl::fpmath_mode::bf16, dnnl::fpmath_mode::f16,
                    dnnl::fpmath_mode::any}) {
    if (std::strcmp(value, fpmath_name(mode)) == 0) return mode;
  }
  fail_invalid(
      cat("onednn: option '", key, "' must be strict, bf16, f16 or any, got '", value, "'"));
}

}  // namespace

const char* fpmath_name(dnnl::fpmath_mode mode) {
  switch (mode) {
    case dnnl::fpmath_mode::bf16:
      return "bf16";
    case dnnl::fpmath_mode::f16:
      return "f16";
    case dnnl::fpmath_mode::any:
      return "any";
    default:
      return "strict";
  }
}

std::string settings_line(const sy_device_s& device) {
  return cat("threads=", device.threads,
             " adaptive_threads=", device.adaptive_threads ? "on" : "off",
             " deterministic=", device.deterministic ? "on" : "off",
             " fpmath=", fpmath_name(device.fpmath));
}

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
    } else if (std::strcmp(key, "deterministic") == 0) {
      parsed.deterministic = parse_bool(key, value);
    } else if (std::strcmp(key, "fpmath") == 0) {
      parsed.fpmath = parse_fpmath(key, value);
    } else {
      fail_invalid(cat("onednn: unknown option '", key,
                       "' (known: threads, memory_limit_bytes, memory_fraction, adaptive_threads, "
                       "deterministic, fpmath)"));
    }
  }
  // Adaptive threading picks one thread or `threads` by the machine's load at the moment, and the
  // thread count decides how sums are split: deterministic results need it off, whatever was asked.
  if (parsed.deterministic) parsed.adaptive_threads = false;
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
      deterministic(options.deterministic),
      fpmath(options.fpmath),
      engine(dnnl::engine::kind::cpu, 0),
      pool(options.limit_bytes),
      weights(pool),
      primitives(sy_onednn::kPrimitiveCacheCapacity) {}
