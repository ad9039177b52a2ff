// One CUDA device as the plugin sees it: the device's primary context (shared with any other
// runtime-API user in the process, such as PyTorch), its kernels, its memory pool and its queues.
#pragma once

#include <cuda.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "allocator.h"
#include "driver.h"
#include "graph.h"
#include "kernels.h"
#include "status.h"
#include "switchyard/plugin_abi.h"

namespace sy_cuda {

class LtMatmul;

// Which code runs MATMUL (option `matmul`): cuBLASLt where it takes the layout and the plugin's
// own tiled kernel otherwise (auto), cuBLASLt for every matmul with no fallback (an error
// instead), or always the plugin's kernel.
enum class MatmulPath { kAuto, kCublaslt, kKernel };

// Parsed from the YAML backend section. Unknown keys are INVALID_ARGUMENT.
struct DeviceOptions {
  bool tf32 = false;  // f32 matmuls may use TF32 tensor cores (PyTorch's default: off)
  uint64_t memory_limit_bytes = 0;
  double memory_fraction = 0.0;  // of the device's total memory; 0 = no cap
  // The ABI's standard option: SCATTER_ADD gathers per output element in index order instead of
  // using float atomics, and tf32 is forced off (f32 matmuls in full f32, as the reference does).
  bool deterministic = false;
  MatmulPath matmul = MatmulPath::kAuto;
  // Option `conv`: auto runs f32 convolutions with groups 1 as im2col + MATMUL (conv_gemm true);
  // direct keeps every convolution on the direct kernel (for tests of that kernel, and triage).
  bool conv_gemm = true;
};

// Also applies the rules between options (deterministic turns tf32 off).
Status parse_options(const sy_option* options, size_t count, DeviceOptions* out);

// The options' part of the device_settings line: "tf32=off deterministic=on matmul=auto conv=auto".
std::string settings_line(const DeviceOptions& options);

// A stream and what belongs to it: cuBLASLt needs a workspace per stream for concurrent use.
// While the queue captures (graph.h), `capture` collects what its calls enqueue.
struct CudaQueue {
  CUstream stream = nullptr;
  CudaBuffer* lt_workspace = nullptr;
  std::unique_ptr<CaptureRecorder> capture;
};

struct CudaEvent {
  CUevent event = nullptr;
};

struct CudaDevice {
  const DriverApi* api = nullptr;
  uint32_t index = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;
  DeviceOptions options;
  int compute_major = 0, compute_minor = 0;
  uint32_t sm_count = 0;
  uint64_t total_memory_bytes = 0;
  KernelSet kernels;
  std::unique_ptr<CachingAllocator> allocator;
  std::unique_ptr<LtMatmul> lt;  // null when cuBLASLt is unavailable
  // Matmuls run so far by each path, for the settings line (bench and gpu-check report which
  // path ran), and the first reason cuBLASLt failed on a layout it had accepted.
  std::atomic<uint64_t> matmuls_cublaslt{0};
  std::atomic<uint64_t> matmuls_kernel{0};
  std::mutex lt_failure_mutex;
  std::string first_lt_failure;

  std::mutex queues_mutex;
  std::vector<CudaQueue*> queues;

  // The largest 1-D grid worth launching: enough blocks to fill every SM several times.
  uint32_t max_blocks() const { return sm_count * 32; }
};

// Checks that the driver is usable and that `index` names a device; sets *device_out.
Status get_cu_device(uint32_t index, const DriverApi** api, CUdevice* device_out);

Status create_device(uint32_t index, const sy_option* options, size_t option_count,
                     CudaDevice** out);
void destroy_device(CudaDevice* device);

Status device_properties(uint32_t index, sy_device_properties* props);

Status create_queue(CudaDevice& device, CudaQueue** out);
void destroy_queue(CudaDevice& device, CudaQueue* queue);

}  // namespace sy_cuda
