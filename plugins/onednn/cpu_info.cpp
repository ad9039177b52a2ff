#include "cpu_info.h"

#include <unistd.h>

#include <oneapi/dnnl/dnnl.h>
#include <cstring>
#include <fstream>
#include <sstream>

namespace sy_onednn {
namespace {

std::string trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t");
  size_t end = text.find_last_not_of(" \t\r\n");
  return begin == std::string::npos ? std::string() : text.substr(begin, end - begin + 1);
}

// The value of the first "key : value" line of /proc/cpuinfo whose key is `key`.
std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon != std::string::npos && trim(line.substr(0, colon)) == key) {
      return trim(line.substr(colon + 1));
    }
  }
  return {};
}

// A /proc/meminfo value in bytes (the file gives kB).
uint64_t meminfo_bytes(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string name;
  uint64_t kib = 0;
  std::string unit;
  while (in >> name >> kib >> unit) {
    if (name == key + ":") return kib * 1024;
  }
  return 0;
}

}  // namespace

bool cpu_has_avx512f() {
  // oneDNN's ISA, not only the CPU's: ONEDNN_MAX_CPU_ISA=AVX2 (or lower) then runs every kernel
  // as a CPU without AVX-512 would, ours included, so that those paths can be tested here.
  static const bool has =
      __builtin_cpu_supports("avx512f") && std::strstr(effective_isa_name(), "avx512") != nullptr;
  return has;
}

bool onednn_legacy_sse() {
  static const bool legacy = [] {
    const std::string isa = effective_isa_name();
    return isa == "sse41" || isa == "avx";
  }();
  return legacy;
}

CpuInfo read_cpu_info() {
  CpuInfo info;
  info.model_name = cpuinfo_field("model name");
  if (info.model_name.empty()) info.model_name = "CPU";
  std::string vendor_id = cpuinfo_field("vendor_id");
  info.vendor = vendor_id == "AuthenticAMD"   ? "AMD"
                : vendor_id == "GenuineIntel" ? "Intel"
                                              : vendor_id;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  info.cores = online > 0 ? static_cast<uint32_t>(online) : 0;
  info.memory_total_bytes = meminfo_bytes("MemTotal");
  info.memory_free_bytes = meminfo_bytes("MemAvailable");
  return info;
}

const char* effective_isa_name() {
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41:
      return "sse41";
    case dnnl_cpu_isa_avx:
      return "avx";
    case dnnl_cpu_isa_avx2:
      return "avx2";
    case dnnl_cpu_isa_avx2_vnni:
      return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic:
      return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops:
      return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core:
      return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "generic";
  }
}

std::string onednn_version_string() {
  const dnnl_version_t* version = dnnl_version();
  std::ostringstream out;
  out << "oneDNN " << version->major << '.' << version->minor << '.' << version->patch;
  return out.str();
}

}  // namespace sy_onednn
