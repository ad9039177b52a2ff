#include "cublaslt_matmul.h"

#include <algorithm>

#include "switchyard/plugin_abi.h"

namespace sy_cuda {
namespace {

cudaDataType_t data_type(uint32_t dtype) {
  switch (dtype) {
    case SY_DTYPE_F16:
      return CUDA_R_16F;
    case SY_DTYPE_BF16:
      return CUDA_R_16BF;
    default:
      return CUDA_R_32F;
  }
}

// The largest power of two (up to 256) that divides the address: cuBLASLt's heuristic picks
// vectorised algorithms only when told the operands are aligned enough.
uint32_t alignment_of(CUdeviceptr ptr) {
  uint32_t alignment = 256;
  while (alignment > 1 && ptr % alignment != 0) alignment /= 2;
  return alignment;
}

}  // namespace

LtMatmul::~LtMatmul() {
  for (auto& [key, prepared] : cache_) destroy(&prepared);
  if (handle_ != nullptr) (void)api_.cublasLtDestroy(handle_);
}

Status LtMatmul::init() {
  return cublas_check(api_, api_.cublasLtCreate(&handle_), "cublasLtCreate");
}

void LtMatmul::destroy(Prepared* p) {
  if (p->a != nullptr) (void)api_.cublasLtMatrixLayoutDestroy(p->a);
  if (p->b != nullptr) (void)api_.cublasLtMatrixLayoutDestroy(p->b);
  if (p->c != nullptr) (void)api_.cublasLtMatrixLayoutDestroy(p->c);
  if (p->op != nullptr) (void)api_.cublasLtMatmulDescDestroy(p->op);
  *p = Prepared{};
}

namespace {

Status make_layout(const CublasLtApi& api, cudaDataType_t type, const LtMatrix& m, int32_t batch,
                   cublasLtMatrixLayout_t* out) {
  SY_CUDA_RETURN_IF_ERROR(
      cublas_check(api, api.cublasLtMatrixLayoutCreate(out, type, m.rows, m.cols, m.ld),
                   "cublasLtMatrixLayoutCreate"));
  if (batch == 1) return ok_status();
  const int64_t stride = m.batch_stride;
  SY_CUDA_RETURN_IF_ERROR(
      cublas_check(api,
                   api.cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                        &batch, sizeof(batch)),
                   "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)"));
  return cublas_check(
      api,
      api.cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                           &stride, sizeof(stride)),
      "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)");
}

}  // namespace

Status LtMatmul::prepare(const LtPlan& plan, uint32_t dtype, bool tf32, const uint32_t* alignments,
                         uint64_t workspace_bytes, Prepared* p) {
  const bool use_tf32 = tf32 && dtype == SY_DTYPE_F32;
  const cublasComputeType_t compute = use_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  SY_CUDA_RETURN_IF_ERROR(cublas_check(api_,
                                       api_.cublasLtMatmulDescCreate(&p->op, compute, CUDA_R_32F),
                                       "cublasLtMatmulDescCreate"));
  const cublasOperation_t trans_a = plan.a.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t trans_b = plan.b.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  SY_CUDA_RETURN_IF_ERROR(
      cublas_check(api_,
                   api_.cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a,
                                                       sizeof(trans_a)),
                   "cublasLtMatmulDescSetAttribute(TRANSA)"));
  SY_CUDA_RETURN_IF_ERROR(
      cublas_check(api_,
                   api_.cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b,
                                                       sizeof(trans_b)),
                   "cublasLtMatmulDescSetAttribute(TRANSB)"));
  const cudaDataType_t type = data_type(dtype);
  SY_CUDA_RETURN_IF_ERROR(make_layout(api_, type, plan.a, plan.batch_count, &p->a));
  SY_CUDA_RETURN_IF_ERROR(make_layout(api_, type, plan.b, plan.batch_count, &p->b));
  SY_CUDA_RETURN_IF_ERROR(make_layout(api_, type, plan.c, plan.batch_count, &p->c));
  return choose_algorithm(p, alignments, workspace_bytes);
}

Status LtMatmul::choose_algorithm(Prepared* p, const uint32_t* alignments,
                                  uint64_t workspace_bytes) {
  cublasLtMatmulPreference_t preference = nullptr;
  SY_CUDA_RETURN_IF_ERROR(cublas_check(api_, api_.cublasLtMatmulPreferenceCreate(&preference),
                                       "cublasLtMatmulPreferenceCreate"));
  const cublasLtMatmulPreferenceAttributes_t alignment_attributes[4] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  Status status = cublas_check(api_,
                               api_.cublasLtMatmulPreferenceSetAttribute(
                                   preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                   &workspace_bytes, sizeof(workspace_bytes)),
                               "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  for (int i = 0; i < 4 && status.ok(); ++i) {
    status =
        cublas_check(api_,
                     api_.cublasLtMatmulPreferenceSetAttribute(preference, alignment_attributes[i],
                                                               &alignments[i], sizeof(uint32_t)),
                     "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT)");
  }
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (status.ok()) {
    status = cublas_check(api_,
                          api_.cublasLtMatmulAlgoGetHeuristic(handle_, p->op, p->a, p->b, p->c,
                                                              p->c, preference, 1, &result, &found),
                          "cublasLtMatmulAlgoGetHeuristic");
  }
  (void)api_.cublasLtMatmulPreferenceDestroy(preference);
  SY_CUDA_RETURN_IF_ERROR(status);
  if (found == 0) return unimplemented("cuBLASLt has no algorithm for this matmul");
  p->algo = result.algo;
  return ok_status();
}

Status LtMatmul::run(const LtPlan& plan, uint32_t dtype, bool tf32, CUdeviceptr lt_a,
                     CUdeviceptr lt_b, CUdeviceptr c, CUstream stream, CUdeviceptr workspace,
                     uint64_t workspace_bytes) {
  const uint32_t alignments[4] = {alignment_of(lt_a), alignment_of(lt_b), alignment_of(c),
                                  alignment_of(c)};
  const Key key = {static_cast<int64_t>(dtype),
                   tf32 ? 1 : 0,
                   plan.a.transpose,
                   static_cast<int64_t>(plan.a.rows),
                   static_cast<int64_t>(plan.a.cols),
                   plan.a.ld,
                   plan.a.batch_stride,
                   plan.b.transpose,
                   static_cast<int64_t>(plan.b.rows),
                   static_cast<int64_t>(plan.b.cols),
                   plan.b.ld,
                   plan.b.batch_stride,
                   static_cast<int64_t>(plan.c.rows),
                   static_cast<int64_t>(plan.c.cols),
                   plan.c.ld,
                   plan.c.batch_stride,
                   plan.batch_count,
                   alignments[0],
                   alignments[1],
                   alignments[2],
                   static_cast<int64_t>(workspace_bytes),
                   0};
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    if (unsupported_.count(key) != 0) {
      return unimplemented("cuBLASLt could not prepare this matmul earlier");
    }
    Prepared prepared;
    const Status status = prepare(plan, dtype, tf32, alignments, workspace_bytes, &prepared);
    if (!status.ok()) {
      destroy(&prepared);
      unsupported_.insert(key);
      return status;
    }
    it = cache_.emplace(key, prepared).first;
  }
  const Prepared& p = it->second;
  const float alpha = 1.0f, beta = 0.0f;
  return cublas_check(
      api_,
      api_.cublasLtMatmul(handle_, p.op, &alpha, reinterpret_cast<const void*>(lt_a), p.a,
                          reinterpret_cast<const void*>(lt_b), p.b, &beta,
                          reinterpret_cast<const void*>(c), p.c, reinterpret_cast<void*>(c), p.c,
                          &p.algo, reinterpret_cast<void*>(workspace), workspace_bytes, stream),
      "cublasLtMatmul");
}

}  // namespace sy_cuda
