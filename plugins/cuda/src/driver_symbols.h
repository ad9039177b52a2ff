// The one table of CUDA driver functions the plugin uses, as an X-macro list of
// (API name as written in cuda.h, versioned symbol exported by libcuda.so.1).
//
// cuda.h maps most API names to versioned symbols with macros (cuMemAlloc -> cuMemAlloc_v2,
// cuEventElapsedTime -> cuEventElapsedTime_v2 in CUDA 13); dlsym needs the versioned name.
// driver.cpp checks at compile time that cuda.h maps each API name to the symbol listed here, and
// tests/cuda/driver_symbols_test.cpp resolves every symbol in the toolkit's stub libcuda.so.
// This header includes nothing, so the test can use the list without cuda.h.
#pragma once

#define SY_CUDA_DRIVER_SYMBOLS(X)                            \
  X(cuInit, cuInit)                                          \
  X(cuDriverGetVersion, cuDriverGetVersion)                  \
  X(cuGetErrorName, cuGetErrorName)                          \
  X(cuGetErrorString, cuGetErrorString)                      \
  X(cuDeviceGetCount, cuDeviceGetCount)                      \
  X(cuDeviceGet, cuDeviceGet)                                \
  X(cuDeviceGetName, cuDeviceGetName)                        \
  X(cuDeviceGetAttribute, cuDeviceGetAttribute)              \
  X(cuDeviceTotalMem, cuDeviceTotalMem_v2)                   \
  X(cuDeviceGetUuid, cuDeviceGetUuid_v2)                     \
  X(cuDeviceGetPCIBusId, cuDeviceGetPCIBusId)                \
  X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain)      \
  X(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2) \
  X(cuCtxPushCurrent, cuCtxPushCurrent_v2)                   \
  X(cuCtxPopCurrent, cuCtxPopCurrent_v2)                     \
  X(cuCtxSynchronize, cuCtxSynchronize)                      \
  X(cuMemGetInfo, cuMemGetInfo_v2)                           \
  X(cuMemAlloc, cuMemAlloc_v2)                               \
  X(cuMemFree, cuMemFree_v2)                                 \
  X(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2)                 \
  X(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2)                 \
  X(cuPointerGetAttributes, cuPointerGetAttributes)          \
  X(cuModuleLoadData, cuModuleLoadData)                      \
  X(cuModuleUnload, cuModuleUnload)                          \
  X(cuModuleGetFunction, cuModuleGetFunction)                \
  X(cuLaunchKernel, cuLaunchKernel)                          \
  X(cuStreamCreate, cuStreamCreate)                          \
  X(cuStreamDestroy, cuStreamDestroy_v2)                     \
  X(cuStreamSynchronize, cuStreamSynchronize)                \
  X(cuStreamWaitEvent, cuStreamWaitEvent)                    \
  X(cuEventCreate, cuEventCreate)                            \
  X(cuEventDestroy, cuEventDestroy_v2)                       \
  X(cuEventRecord, cuEventRecord)                            \
  X(cuEventSynchronize, cuEventSynchronize)                  \
  X(cuEventElapsedTime, cuEventElapsedTime_v2)               \
  X(cuStreamBeginCapture, cuStreamBeginCapture_v2)           \
  X(cuStreamEndCapture, cuStreamEndCapture)                  \
  X(cuStreamGetCaptureInfo, cuStreamGetCaptureInfo_v3)       \
  X(cuGraphInstantiate, cuGraphInstantiateWithFlags)         \
  X(cuGraphLaunch, cuGraphLaunch)                            \
  X(cuGraphExecDestroy, cuGraphExecDestroy)                  \
  X(cuGraphDestroy, cuGraphDestroy)                          \
  X(cuGraphGetNodes, cuGraphGetNodes)                        \
  X(cuGraphExecKernelNodeSetParams, cuGraphExecKernelNodeSetParams_v2)
