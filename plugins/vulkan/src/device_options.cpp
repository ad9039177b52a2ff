#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "device.h"

namespace sy_vk {
namespace {

Status parse_bool(const std::string& key, const std::string& value, bool* out) {
  if (value == "true" || value == "1" || value == "yes" || value == "on") {
    *out = true;
  } else if (value == "false" || value == "0" || value == "no" || value == "off") {
    *out = false;
  } else {
    return invalid_argument("vulkan option '" + key + "': expected true or false, got '" + value +
                            "'");
  }
  return ok_status();
}

Status parse_bytes(const std::string& key, const std::string& value, uint64_t* out) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long parsed = std::strtoull(value.c_str(), &end, 10);
  if (value.empty() || value[0] == '-' || errno != 0 || end == nullptr || *end != '\0') {
    return invalid_argument("vulkan option '" + key +
                            "': expected a non-negative whole number of bytes, got '" + value +
                            "'");
  }
  *out = parsed;
  return ok_status();
}

Status parse_fraction(const std::string& key, const std::string& value, double* out) {
  errno = 0;
  char* end = nullptr;
  const double parsed = std::strtod(value.c_str(), &end);
  if (value.empty() || errno != 0 || end == nullptr || *end != '\0' || !(parsed > 0.0) ||
      parsed > 1.0) {
    return invalid_argument("vulkan option '" + key + "': expected a number in (0, 1], got '" +
                            value + "'");
  }
  *out = parsed;
  return ok_status();
}

}  // namespace

Status parse_device_options(const sy_option* options, size_t count, DeviceOptions* out) {
  DeviceOptions parsed;
  const char* env = std::getenv("SWITCHYARD_VULKAN_VALIDATION");
  if (env != nullptr && *env != '\0') {
    SY_VK_RETURN_IF_ERROR(
        parse_bool("SWITCHYARD_VULKAN_VALIDATION (environment)", env, &parsed.validation));
  }
  for (size_t i = 0; i < count; ++i) {
    if (options == nullptr || options[i].key == nullptr || options[i].value == nullptr) {
      return invalid_argument("vulkan option " + std::to_string(i) + " has a null key or value");
    }
    const std::string key = options[i].key;
    const std::string value = options[i].value;
    if (key == "validation") {
      bool validation = false;
      SY_VK_RETURN_IF_ERROR(parse_bool(key, value, &validation));
      parsed.validation = parsed.validation || validation;
    } else if (key == "memory_limit_bytes") {
      SY_VK_RETURN_IF_ERROR(parse_bytes(key, value, &parsed.memory_limit_bytes));
    } else if (key == "memory_fraction") {
      SY_VK_RETURN_IF_ERROR(parse_fraction(key, value, &parsed.memory_fraction));
    } else if (key == "device_local_only") {
      SY_VK_RETURN_IF_ERROR(parse_bool(key, value, &parsed.device_local_only));
    } else if (key == "deterministic") {
      SY_VK_RETURN_IF_ERROR(parse_bool(key, value, &parsed.deterministic));
    } else if (key == "matmul_tile") {
      if (value == "auto" || value == "64" || value == "128") {
        parsed.matmul_tile = value == "auto" ? 0 : std::stoi(value);
      } else {
        return invalid_argument("vulkan option 'matmul_tile': expected auto, 64 or 128, got '" +
                                value + "'");
      }
    } else if (key == "cooperative_matrix") {
      using Mode = DeviceOptions::CooperativeMatrix;
      if (value == "auto") {
        parsed.cooperative_matrix = Mode::kAuto;
      } else {
        bool on = false;
        if (!parse_bool(key, value, &on).ok()) {
          return invalid_argument(
              "vulkan option 'cooperative_matrix': expected auto, on or off, "
              "got '" +
              value + "'");
        }
        parsed.cooperative_matrix = on ? Mode::kOn : Mode::kOff;
      }
    } else {
      return invalid_argument("unknown vulkan option '" + key +
                              "' (known: validation, memory_limit_bytes, memory_fraction, "
                              "device_local_only, deterministic, cooperative_matrix, matmul_tile)");
    }
  }
  *out = parsed;
  return ok_status();
}

}  // namespace sy_vk
