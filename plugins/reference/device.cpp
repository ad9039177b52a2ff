#include "device.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "error.h"

namespace sy_reference {
namespace {

constexpr const char* kKnownOptions = "memory_limit_bytes, memory_fraction, threads, deterministic";

[[noreturn]] void bad_option_value(const sy_option& option, const char* expected) {
  raise(SY_STATUS_INVALID_ARGUMENT, std::string("reference: option ") + option.key + " = '" +
                                        option.value + "' is not valid: expected " + expected);
}

uint64_t parse_unsigned(const sy_option& option) {
  const char* text = option.value;
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (text[0] == '\0' || text[0] == '-' || *end != '\0' || errno != 0) {
    bad_option_value(option, "a non-negative integer");
  }
  return value;
}

bool parse_bool(const sy_option& option) {
  const std::string text = option.value;
  if (text == "true" || text == "1" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "0" || text == "no" || text == "off") return false;
  bad_option_value(option, "true or false");
}

double parse_fraction(const sy_option& option) {
  char* end = nullptr;
  const double value = std::strtod(option.value, &end);
  if (option.value[0] == '\0' || *end != '\0' || !(value > 0.0 && value <= 1.0)) {
    bad_option_value(option, "a number in (0, 1]");
  }
  return value;
}

// "model name : AMD EPYC ..." from /proc/cpuinfo, or "" if unavailable.
std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(std::min(colon + 2, line.size()));
    }
  }
  return "";
}

void copy_text(char* destination, size_t capacity, const std::string& text) {
  std::snprintf(destination, capacity, "%s", text.c_str());
}

}  // namespace

DeviceOptions parse_device_options(const sy_option* options, size_t option_count) {
  DeviceOptions parsed;
  uint64_t fraction_limit_bytes = 0;
  for (size_t i = 0; i < option_count; ++i) {
    const sy_option& option = options[i];
    if (option.key == nullptr || option.value == nullptr) {
      raise(SY_STATUS_INVALID_ARGUMENT,
            "reference: option " + std::to_string(i) + " has a null key or value");
    }
    const std::string key = option.key;
    if (key == "memory_limit_bytes") {
      parsed.memory_limit_bytes = parse_unsigned(option);
    } else if (key == "memory_fraction") {
      const double bytes = parse_fraction(option) * static_cast<double>(physical_memory_bytes());
      fraction_limit_bytes = std::max<uint64_t>(1, static_cast<uint64_t>(bytes));
    } else if (key == "threads") {
      if (parse_unsigned(option) == 0) bad_option_value(option, "a positive integer");
    } else if (key == "deterministic") {
      parsed.deterministic = parse_bool(option);
    } else {
      raise(SY_STATUS_INVALID_ARGUMENT, "reference: unknown device option '" + key +
                                            "'; the known options are " + kKnownOptions);
    }
  }
  if (fraction_limit_bytes != 0 &&
      (parsed.memory_limit_bytes == 0 || fraction_limit_bytes < parsed.memory_limit_bytes)) {
    parsed.memory_limit_bytes = fraction_limit_bytes;
  }
  return parsed;
}

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

uint64_t available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string name;
  uint64_t kilobytes = 0;
  std::string unit;
  while (meminfo >> name >> kilobytes >> unit) {
    if (name == "MemAvailable:") return kilobytes * 1024;
  }
  return 0;
}

void fill_device_properties(sy_device_properties* props) {
  props->type = SY_DEVICE_TYPE_CPU;
  copy_text(props->name, sizeof(props->name), "reference (plain C++)");
  copy_text(props->vendor, sizeof(props->vendor), "switchyard");
  copy_text(props->driver_version, sizeof(props->driver_version), "0.1.0");
  copy_text(props->runtime_version, sizeof(props->runtime_version), "C++20, single thread");
  props->uuid[0] = '\0';
  props->bus_id[0] = '\0';
  props->memory_total_bytes = physical_memory_bytes();
  props->memory_free_bytes = available_memory_bytes();
  props->compute_units = 1;
  const std::string cpu = cpu_model_name();
  copy_text(props->details, sizeof(props->details),
            "the plain C++ oracle for the op set; host memory; " +
                (cpu.empty() ? std::string("unknown CPU") : cpu));
}

}  // namespace sy_reference
