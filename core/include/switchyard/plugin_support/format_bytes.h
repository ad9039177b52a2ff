// Byte counts in plugin messages: "1.5 MiB (1572864 bytes)", or "512 bytes" below 1 KiB. Both
// forms, so that a reader sees the scale and a script can match the exact number.
//
// Part of plugin_support: header-only, depends only on the C++ standard library, and may be
// included by plugins (docs/writing-a-backend.md, section 2).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace sy_support {

inline std::string format_bytes(uint64_t bytes) {
  static const char* const kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 6) {
    value /= 1024.0;
    ++unit;
  }
  const auto exact = static_cast<unsigned long long>(bytes);
  char text[64];
  if (unit == 0) {
    std::snprintf(text, sizeof(text), "%llu bytes", exact);
  } else {
    std::snprintf(text, sizeof(text), "%.1f %s (%llu bytes)", value, kUnits[unit], exact);
  }
  return text;
}

}  // namespace sy_support
