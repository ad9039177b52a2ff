// Matmul geometry on the host: validation of a MATMUL call (shapes, transposes, batch and bias
// broadcasting) and the translation of a row-major, strided, batched product into cuBLASLt's
// column-major terms. Nothing here touches CUDA, so tests/cuda checks it without a GPU.
#pragma once

#include <cstdint>
#include <string>

#include "status.h"
#include "switchyard/plugin_abi.h"

namespace sy_cuda {

// out[batch..., m, n] = sum_k a[batch..., m, k] * b[batch..., k, n] (+ bias), with every stride
// already adjusted for the transpose flags and broadcasting (0 on broadcast axes).
struct MatmulGeometry {
  int64_t m = 0, n = 0, k = 0;
  uint32_t batch_rank = 0;
  int64_t batch_shape[SY_MAX_RANK] = {};
  int64_t a_batch[SY_MAX_RANK] = {}, b_batch[SY_MAX_RANK] = {};
  int64_t out_batch[SY_MAX_RANK] = {}, bias_batch[SY_MAX_RANK] = {};
  int64_t a_stride_m = 0, a_stride_k = 0, b_stride_k = 0, b_stride_n = 0;
  int64_t out_stride_m = 0, out_stride_n = 0;
  bool has_bias = false;
  int64_t bias_stride_m = 0, bias_stride_n = 0;
};

// Checks counts, dtypes (F32/F16/BF16, all equal), ranks, K, batch broadcasting, the output
// shape and the bias shape; INVALID_ARGUMENT messages name the shapes involved.
Status matmul_geometry(const sy_op_call& call, MatmulGeometry* g);

// One column-major matrix as cuBLASLt sees it: stored rows x cols with leading dimension ld,
// used as is or transposed.
struct LtMatrix {
  bool transpose = false;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int64_t batch_stride = 0;
};

// cuBLASLt computes out^T = b^T a^T in column-major terms: its A is our b, its B is our a, and
// its C/D is our out, so that no data moves. Batch axes that cuBLASLt cannot express as one
// strided batch are looped over on the host (outer_*).
struct LtPlan {
  LtMatrix a, b, c;
  uint64_t m = 0, n = 0, k = 0;  // cuBLASLt's sizes: m = N, n = M, k = K
  int32_t batch_count = 1;
  uint32_t outer_rank = 0;
  int64_t outer_shape[SY_MAX_RANK] = {};
  int64_t outer_a[SY_MAX_RANK] = {}, outer_b[SY_MAX_RANK] = {}, outer_out[SY_MAX_RANK] = {};
};

// False (with the reason) when the layout has no unit stride cuBLASLt can use, the output is not
// row-major, or a size exceeds 32 bits; the tiled kernel then runs the product.
bool plan_cublaslt(const MatmulGeometry& g, LtPlan* plan, std::string* why_not);

}  // namespace sy_cuda
