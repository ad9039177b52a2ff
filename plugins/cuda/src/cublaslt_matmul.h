// Matmuls through cuBLASLt for one device: descriptors and the heuristic's algorithm are cached
// per problem (shape, layout, dtype, alignment), so a training loop pays for the heuristic once.
#pragma once

#include <cuda.h>

#include <array>
#include <map>
#include <mutex>
#include <set>

#include "cublaslt.h"
#include "matmul_plan.h"
#include "status.h"

namespace sy_cuda {

class LtMatmul {
 public:
  explicit LtMatmul(const CublasLtApi& api) : api_(api) {}
  ~LtMatmul();
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;

  Status init();  // the device's context must be current

  // Enqueues one cuBLASLt product of `plan` (one position of its outer batch axes): c = a * b in
  // cuBLASLt's terms, where lt_a is our b and lt_b our a. UNIMPLEMENTED when no algorithm fits,
  // so the caller can use the tiled kernel instead.
  Status run(const LtPlan& plan, uint32_t dtype, bool tf32, CUdeviceptr lt_a, CUdeviceptr lt_b,
             CUdeviceptr c, CUstream stream, CUdeviceptr workspace, uint64_t workspace_bytes);

 private:
  struct Prepared {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo{};
  };
  using Key = std::array<int64_t, 22>;

  Status prepare(const LtPlan& plan, uint32_t dtype, bool tf32, const uint32_t* alignments,
                 uint64_t workspace_bytes, Prepared* out);
  Status choose_algorithm(Prepared* p, const uint32_t* alignments, uint64_t workspace_bytes);
  void destroy(Prepared* p);

  const CublasLtApi& api_;
  cublasLtHandle_t handle_ = nullptr;
  std::mutex mutex_;
  std::map<Key, Prepared> cache_;
  // Problems cuBLASLt could not prepare (no algorithm, unsupported layout): later calls go
  // straight to the plugin's own kernel instead of asking the heuristic again every time.
  std::set<Key> unsupported_;
};

}  // namespace sy_cuda
