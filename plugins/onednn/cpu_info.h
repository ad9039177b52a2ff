// What the plugin reports about the host CPU: read from /proc and sysconf, and oneDNN's ISA.
#pragma once

#include <cstdint>
#include <string>

namespace sy_onednn {

struct CpuInfo {
  std::string model_name;  // /proc/cpuinfo "model name", e.g. "AMD EPYC"
  std::string vendor;      // "AMD", "Intel" or the raw vendor_id
  uint32_t cores = 0;      // online logical CPUs
  uint64_t memory_total_bytes = 0;
  uint64_t memory_free_bytes = 0;  // MemAvailable
};

CpuInfo read_cpu_info();
// Whether this CPU has AVX-512F: the plugin's own AVX-512 kernels (depthwise, 2x2 max pool, SiLU,
// Philox) run only then, each with a fallback. Checked once.
bool cpu_has_avx512f();
// oneDNN's name for the ISA its kernels use here, e.g. "avx512_core_bf16".
const char* effective_isa_name();
// "oneDNN 2.6.3"
std::string onednn_version_string();

}  // namespace sy_onednn
