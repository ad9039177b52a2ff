#include "kernels.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <string>

#include "cuda_fatbins.inc"  // generated: SY_CUDA_FATBINS(X) with one X(name) per kernels/*.cu

namespace sy_cuda {
namespace fatbin {
#define SY_CUDA_DECLARE_FATBIN(name)        \
  extern const unsigned char name##_data[]; \
  extern const std::size_t name##_size;
SY_CUDA_FATBINS(SY_CUDA_DECLARE_FATBIN)
#undef SY_CUDA_DECLARE_FATBIN
}  // namespace fatbin

namespace {

struct EmbeddedFatbin {
  const char* name;
  const unsigned char* data;
  std::size_t size;
};

const EmbeddedFatbin kFatbins[] = {
#define SY_CUDA_FATBIN_ENTRY(name) {#name, fatbin::name##_data, fatbin::name##_size},
    SY_CUDA_FATBINS(SY_CUDA_FATBIN_ENTRY)
#undef SY_CUDA_FATBIN_ENTRY
};

const char* const kKernelNames[] = {
#define SY_CUDA_KERNEL_NAME(name, module) #name,
    SY_CUDA_KERNELS(SY_CUDA_KERNEL_NAME)
#undef SY_CUDA_KERNEL_NAME
};

// The embedded module (kernels/<module>.cu) of each kernel, in kKernelNames' order.
const char* const kKernelModules[] = {
#define SY_CUDA_KERNEL_MODULE(name, module) #module,
    SY_CUDA_KERNELS(SY_CUDA_KERNEL_MODULE)
#undef SY_CUDA_KERNEL_MODULE
};

}  // namespace

LaunchShape linear_launch(int64_t work_items, uint32_t threads, uint32_t max_blocks) {
  LaunchShape shape;
  shape.block = threads;
  const int64_t blocks = (std::max<int64_t>(work_items, 1) + threads - 1) / threads;
  shape.grid_x = static_cast<uint32_t>(std::min<int64_t>(blocks, max_blocks));
  return shape;
}

Status KernelSet::load(const DriverApi& api) {
  api_ = &api;
  for (const EmbeddedFatbin& image : kFatbins) {
    CUmodule module = nullptr;
    const Status status =
        cu_check(api, api.cuModuleLoadData(&module, image.data),
                 std::string("cuModuleLoadData(") + image.name + ".fatbin, " +
                     std::to_string(image.size) + " bytes; " + fatbin_summary() + ")");
    if (!status.ok()) {
      unload();
      return Status(status.code(), status.message() + "; the driver supports CUDA " +
                                       driver_version_text() + ", the kernels were built with " +
                                       "CUDA " + std::to_string(CUDA_VERSION / 1000) + "." +
                                       std::to_string(CUDA_VERSION % 1000 / 10));
    }
    modules_.push_back(module);
  }
  for (size_t k = 0; k < functions_.size(); ++k) {
    functions_[k] = nullptr;
    const std::string module_name = kKernelModules[k];
    size_t m = 0;
    while (m < std::size(kFatbins) && module_name != kFatbins[m].name) ++m;
    const Status found =
        m == std::size(kFatbins)
            ? internal_error("no embedded CUDA module " + module_name + ".fatbin")
            : cu_check(api, api.cuModuleGetFunction(&functions_[k], modules_[m], kKernelNames[k]),
                       "cuModuleGetFunction");
    if (!found.ok()) {
      unload();
      return internal_error(std::string("kernel ") + kKernelNames[k] + " of " + module_name +
                            ".cu: " + found.message());
    }
  }
  return ok_status();
}

void KernelSet::unload() {
  if (api_ != nullptr) {
    for (CUmodule module : modules_) (void)api_->cuModuleUnload(module);
  }
  modules_.clear();
  functions_.fill(nullptr);
}

Status KernelSet::launch_raw(Kernel kernel, const LaunchShape& shape, CUstream stream,
                             void** params) const {
  const auto index = static_cast<size_t>(kernel);
  const CUresult result =
      api_->cuLaunchKernel(functions_[index], shape.grid_x, shape.grid_y, shape.grid_z, shape.block,
                           1, 1, 0, stream, params, nullptr);
  if (result == CUDA_SUCCESS) return ok_status();
  return cu_check(*api_, result,
                  std::string("cuLaunchKernel(") + kKernelNames[index] + ", grid " +
                      std::to_string(shape.grid_x) + "x" + std::to_string(shape.grid_y) + "x" +
                      std::to_string(shape.grid_z) + ", block " + std::to_string(shape.block) +
                      ")");
}

std::string KernelSet::fatbin_summary() {
  return SY_CUDA_FATBIN_ARCHITECTURES;
}

}  // namespace sy_cuda
