// The CUDA driver, opened at run time: libcuda.so.1 through dlopen and one table of symbols
// (driver_symbols.h). Nothing in the plugin links libcuda, so the plugin loads on a machine
// without the NVIDIA driver and reports why it cannot be used.
#pragma once

#include <cuda.h>

#include <string>
#include <string_view>

#include "driver_symbols.h"
#include "status.h"

namespace sy_cuda {

// Function pointers named by their versioned symbols (cuMemAlloc_v2, ...), so each call site says
// exactly which entry point it uses.
struct DriverApi {
#define SY_CUDA_DECLARE_POINTER(api, symbol) decltype(&::symbol) symbol = nullptr;
  SY_CUDA_DRIVER_SYMBOLS(SY_CUDA_DECLARE_POINTER)
#undef SY_CUDA_DECLARE_POINTER
};

// Opens libcuda.so.1, resolves every symbol and calls cuInit(0), once per process. Returns
// UNAVAILABLE with the reason (the dlerror text, the missing symbols, or the cuInit error) when
// the driver cannot be used; the same answer on every later call.
Status load_driver(const DriverApi** out_api);

// "13.0" from cuDriverGetVersion, and the file the dynamic linker found for libcuda.so.1.
std::string driver_version_text();
std::string driver_library_path();
// The CUDA version the driver supports, as cuDriverGetVersion reports it (13000 = 13.0).
int driver_version();

// OK for CUDA_SUCCESS; otherwise a status whose message is "<what>: CUDA_ERROR_NAME (text)".
// Out of memory maps to RESOURCE_EXHAUSTED, missing devices to UNAVAILABLE, the rest to INTERNAL.
Status cu_check(const DriverApi& api, CUresult result, std::string_view what);

// Makes a context current on this thread for the scope and restores the previous one after, so
// the plugin never disturbs a host application's own CUDA context.
class ContextScope {
 public:
  ContextScope(const DriverApi& api, CUcontext context);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;
  const Status& status() const { return status_; }

 private:
  const DriverApi& api_;
  Status status_;
};

}  // namespace sy_cuda
