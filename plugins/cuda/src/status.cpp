#include "status.h"

#include <cstdio>

namespace sy_cuda {
namespace {
thread_local std::string g_last_error;
}  // namespace

sy_status report(const Status& status) {
  g_last_error = status.ok() ? std::string() : status.message();
  return status.code();
}

const char* last_error_message() {
  return g_last_error.c_str();
}

std::string format_bytes(unsigned long long bytes) {
  static const char* const kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char text[96];
  if (unit == 0) {
    std::snprintf(text, sizeof(text), "%llu bytes", bytes);
  } else {
    std::snprintf(text, sizeof(text), "%.1f %s (%llu bytes)", value, kUnits[unit], bytes);
  }
  return text;
}

}  // namespace sy_cuda
