// The kernels of one device: the embedded fatbins loaded into the device's context with
// cuModuleLoadData, every kernel resolved by name, and a launcher that passes one argument struct.
#pragma once

#include <cuda.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "driver.h"
#include "kernel_list.h"
#include "status.h"

namespace sy_cuda {

enum class Kernel {
#define SY_CUDA_KERNEL_ENUM(name, module) name,
  SY_CUDA_KERNELS(SY_CUDA_KERNEL_ENUM)
#undef SY_CUDA_KERNEL_ENUM
      kCount
};

struct LaunchShape {
  uint32_t grid_x = 1, grid_y = 1, grid_z = 1;
  uint32_t block = 256;
};

// A 1-D launch with `threads` per block covering `work_items`, capped at `max_blocks` blocks
// (kernels loop with a grid stride beyond that).
LaunchShape linear_launch(int64_t work_items, uint32_t threads, uint32_t max_blocks);

class KernelSet {
 public:
  // The device's context must be current. Fails with the module name and the driver's reason
  // (for example a driver too old for the PTX, or no code for this GPU's architecture).
  Status load(const DriverApi& api);
  void unload();  // context current

  // Enqueues `kernel` with `args` as its only parameter.
  template <typename Args>
  Status launch(Kernel kernel, const LaunchShape& shape, CUstream stream, const Args& args) const {
    void* params[] = {const_cast<Args*>(&args)};
    return launch_raw(kernel, shape, stream, params);
  }

  CUfunction function(Kernel kernel) const { return functions_[static_cast<size_t>(kernel)]; }

  // "sm_90 cubin" style summary of what the fatbins contain, for device details.
  static std::string fatbin_summary();

 private:
  Status launch_raw(Kernel kernel, const LaunchShape& shape, CUstream stream, void** params) const;

  const DriverApi* api_ = nullptr;
  std::vector<CUmodule> modules_;
  std::array<CUfunction, static_cast<size_t>(Kernel::kCount)> functions_{};
};

}  // namespace sy_cuda
