// cuBLASLt, opened at run time through its own small symbol table (cublaslt_symbols.h).
#pragma once

#include <cublasLt.h>

#include <string>

#include "cublaslt_symbols.h"
#include "status.h"

namespace sy_cuda {

struct CublasLtApi {
#define SY_CUBLASLT_DECLARE_POINTER(name) decltype(&::name) name = nullptr;
  SY_CUBLASLT_SYMBOLS(SY_CUBLASLT_DECLARE_POINTER)
#undef SY_CUBLASLT_DECLARE_POINTER
};

// Opens cuBLASLt once per process. UNAVAILABLE (with every name tried and why) when it is absent;
// the caller then uses the plugin's own matmul kernel. SWITCHYARD_CUDA_NO_CUBLASLT=1 skips it.
Status load_cublaslt(const CublasLtApi** out_api);

// "cuBLASLt 130001 (/usr/local/cuda/lib64/libcublasLt.so.13)" or why it is not used.
std::string cublaslt_description();

// OK for CUBLAS_STATUS_SUCCESS, else INTERNAL "<what>: CUBLAS_STATUS_NAME (text)".
Status cublas_check(const CublasLtApi& api, cublasStatus_t status, const char* what);

}  // namespace sy_cuda
