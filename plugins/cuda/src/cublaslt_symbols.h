// The cuBLASLt functions the plugin uses, as an X-macro list of exported names. cuBLASLt is
// optional: it is opened at run time (libcublasLt.so.13, then .12) and the plugin's own tiled
// kernel takes every matmul when it is missing. Includes nothing, so tests can use the list.
#pragma once

#define SY_CUBLASLT_SYMBOLS(X)            \
  X(cublasLtCreate)                       \
  X(cublasLtDestroy)                      \
  X(cublasLtGetVersion)                   \
  X(cublasLtGetStatusName)                \
  X(cublasLtGetStatusString)              \
  X(cublasLtMatmulDescCreate)             \
  X(cublasLtMatmulDescDestroy)            \
  X(cublasLtMatmulDescSetAttribute)       \
  X(cublasLtMatrixLayoutCreate)           \
  X(cublasLtMatrixLayoutDestroy)          \
  X(cublasLtMatrixLayoutSetAttribute)     \
  X(cublasLtMatmulPreferenceCreate)       \
  X(cublasLtMatmulPreferenceDestroy)      \
  X(cublasLtMatmulPreferenceSetAttribute) \
  X(cublasLtMatmulAlgoGetHeuristic)       \
  X(cublasLtMatmul)

// Library names tried in order; the absolute paths cover toolkits whose lib64 is not on the
// dynamic linker's search path.
#define SY_CUBLASLT_LIBRARY_CANDIDATES                                                   \
  {                                                                                      \
    "libcublasLt.so.13", "libcublasLt.so.12", "/usr/local/cuda/lib64/libcublasLt.so.13", \
        "/usr/local/cuda/lib64/libcublasLt.so.12"                                        \
  }
