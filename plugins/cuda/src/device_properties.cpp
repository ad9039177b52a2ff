// device_properties: what `switchyard devices` shows for a CUDA device. Free memory is read with
// cuMemGetInfo inside the device's primary context (retained for the call when no switchyard
// device holds it already).
#include <cstdio>
#include <cstring>
#include <string>

#include "cublaslt.h"
#include "device.h"
#include "kernels.h"

namespace sy_cuda {
namespace {

template <size_t N>
void copy_text(char (&dst)[N], const std::string& text) {
  const size_t n = std::min(text.size(), N - 1);
  std::memcpy(dst, text.data(), n);
  dst[n] = '\0';
}

std::string uuid_text(const CUuuid& uuid) {
  std::string text;
  char hex[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    std::snprintf(hex, sizeof(hex), "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    text += hex;
  }
  return text;  // 36 characters, as nvidia-smi prints after "GPU-"
}

int attribute(const DriverApi& api, CUdevice device, CUdevice_attribute which) {
  int value = 0;
  if (api.cuDeviceGetAttribute(&value, which, device) != CUDA_SUCCESS) return 0;
  return value;
}

Status free_memory(const DriverApi& api, CUdevice device, uint64_t* free_bytes) {
  CUcontext context = nullptr;
  SY_CUDA_RETURN_IF_ERROR(
      cu_check(api, api.cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain"));
  Status status;
  {
    ContextScope scope(api, context);
    size_t free_now = 0, total = 0;
    status = scope.status().ok()
                 ? cu_check(api, api.cuMemGetInfo_v2(&free_now, &total), "cuMemGetInfo")
                 : scope.status();
    *free_bytes = free_now;
  }
  (void)api.cuDevicePrimaryCtxRelease_v2(device);
  return status;
}

std::string details_text(const DriverApi& api, CUdevice device) {
  const int major = attribute(api, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  const int minor = attribute(api, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  const int l2_bytes = attribute(api, device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  const std::string lt = cublaslt_description();
  return "compute capability " + std::to_string(major) + "." + std::to_string(minor) + " (sm_" +
         std::to_string(major) + std::to_string(minor) + "), L2 " +
         std::to_string(l2_bytes / (1024 * 1024)) +
         " MiB; kernels: " + KernelSet::fatbin_summary() +
         "; matmul: " + (lt.rfind("cuBLASLt ", 0) == 0 ? lt : "own tiled kernel (" + lt + ")");
}

}  // namespace

Status device_properties(uint32_t index, sy_device_properties* props) {
  if (props == nullptr || props->struct_size < sizeof(sy_device_properties)) {
    return invalid_argument("device_properties: struct_size " +
                            std::to_string(props != nullptr ? props->struct_size : 0) +
                            " is smaller than this plugin's " +
                            std::to_string(sizeof(sy_device_properties)));
  }
  const DriverApi* api = nullptr;
  CUdevice device = 0;
  SY_CUDA_RETURN_IF_ERROR(get_cu_device(index, &api, &device));
  const uint32_t struct_size = props->struct_size;
  std::memset(props, 0, sizeof(sy_device_properties));
  props->struct_size = struct_size;
  SY_CUDA_RETURN_IF_ERROR(cu_check(
      *api, api->cuDeviceGetName(props->name, sizeof(props->name), device), "cuDeviceGetName"));
  props->type = attribute(*api, device, CU_DEVICE_ATTRIBUTE_INTEGRATED) != 0
                    ? SY_DEVICE_TYPE_INTEGRATED_GPU
                    : SY_DEVICE_TYPE_GPU;
  copy_text(props->vendor, "NVIDIA");
  copy_text(props->driver_version, driver_version_text());
  copy_text(props->runtime_version, "CUDA " + std::to_string(CUDA_VERSION / 1000) + "." +
                                        std::to_string(CUDA_VERSION % 1000 / 10) +
                                        " (plugin build)");
  CUuuid uuid{};
  if (api->cuDeviceGetUuid_v2(&uuid, device) == CUDA_SUCCESS)
    copy_text(props->uuid, uuid_text(uuid));
  if (api->cuDeviceGetPCIBusId(props->bus_id, sizeof(props->bus_id), device) != CUDA_SUCCESS) {
    props->bus_id[0] = '\0';
  }
  size_t total = 0;
  SY_CUDA_RETURN_IF_ERROR(
      cu_check(*api, api->cuDeviceTotalMem_v2(&total, device), "cuDeviceTotalMem"));
  props->memory_total_bytes = total;
  uint64_t free_bytes = 0;
  if (free_memory(*api, device, &free_bytes).ok()) props->memory_free_bytes = free_bytes;
  props->compute_units =
      static_cast<uint32_t>(attribute(*api, device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  copy_text(props->details, details_text(*api, device));
  return ok_status();
}

}  // namespace sy_cuda
