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
// Whether this CPU has AVX-512F and oneDNN's ISA (capped by ONEDNN_MAX_CPU_ISA) is an AVX-512
// one: the plugin's own AVX-512 kernels (depthwise, 2x2 max pool, SiLU, Philox, the transposed
// sgemm path) run only then, each with a fallback. Checked once.
bool cpu_has_avx512f();
// oneDNN's name for the ISA its kernels use here, e.g. "avx512_core_bf16".
const char* effective_isa_name();
// Whether oneDNN runs its SSE4.1 kernels here (its ISA is sse41 or avx: CPUs without AVX2, or
// ONEDNN_MAX_CPU_ISA), whose legacy-SSE memory operands fault on addresses that are not 16-byte
// aligned. Checked once.
bool onednn_legacy_sse();
// "oneDNN 2.6.3"
std::string onednn_version_string();

}  // namespace sy_onednn
