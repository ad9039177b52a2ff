#include "matmul_plan.h"

#include <algorithm>
#include <limits>

#include "geometry.h"

namespace sy_cuda {
namespace {

struct Matrix {  // the last two axes of an operand after the transpose flag
  int64_t rows, cols, row_stride, col_stride;
};

Matrix last_two(const sy_tensor_desc& t, bool transpose) {
  const uint32_t r = t.rank;
  Matrix m{t.shape[r - 2], t.shape[r - 1], t.strides[r - 2], t.strides[r - 1]};
  if (transpose) {
    std::swap(m.rows, m.cols);
    std::swap(m.row_stride, m.col_stride);
  }
  return m;
}

// The batch strides of `t` broadcast to the output batch shape.
bool batch_strides(const sy_tensor_desc& t, uint32_t batch_rank, const int64_t* batch_shape,
                   int64_t* strides) {
  sy_tensor_desc batch = t;
  batch.rank = t.rank - 2;
  return broadcast_strides(batch, batch_rank, batch_shape, strides);
}

Status check_inputs(const sy_op_call& call) {
  const uint32_t expected = call.params.matmul.has_bias ? 3 : 2;
  if (call.num_inputs != expected || call.num_outputs != 1) {
    return invalid_argument("MATMUL: expected " + std::to_string(expected) +
                            " inputs and 1 output, got " + std::to_string(call.num_inputs) +
                            " and " + std::to_string(call.num_outputs));
  }
  const sy_tensor_desc& a = call.inputs[0];
  for (uint32_t i = 0; i < expected; ++i) {
    const sy_tensor_desc& t = call.inputs[i];
    if (!is_float_dtype(t.dtype) || t.dtype != a.dtype || call.outputs[0].dtype != a.dtype) {
      return invalid_argument("MATMUL: all tensors must share one of f32/f16/bf16, got a " +
                              describe(a) + ", input " + std::to_string(i) + " " + describe(t) +
                              ", out " + describe(call.outputs[0]));
    }
  }
  if (a.rank < 2 || call.inputs[1].rank < 2) {
    return invalid_argument("MATMUL: a " + shape_text(a) + " and b " + shape_text(call.inputs[1]) +
                            " must both have rank >= 2");
  }
  return ok_status();
}

Status check_bias(const sy_op_call& call, MatmulGeometry* g) {
  const sy_tensor_desc& out = call.outputs[0];
  const sy_tensor_desc& bias = call.inputs[2];
  int64_t strides[SY_MAX_RANK] = {};
  if (!broadcast_strides(bias, out.rank, out.shape, strides)) {
    return invalid_argument("MATMUL: bias " + shape_text(bias) + " does not broadcast to out " +
                            shape_text(out));
  }
  for (uint32_t d = 0; d < g->batch_rank; ++d) g->bias_batch[d] = strides[d];
  g->bias_stride_m = strides[out.rank - 2];
  g->bias_stride_n = strides[out.rank - 1];
  g->has_bias = true;
  return ok_status();
}

}  // namespace

Status matmul_geometry(const sy_op_call& call, MatmulGeometry* g) {
  SY_CUDA_RETURN_IF_ERROR(check_inputs(call));
  const sy_tensor_desc& a = call.inputs[0];
  const sy_tensor_desc& b = call.inputs[1];
  const sy_tensor_desc& out = call.outputs[0];
  const Matrix am = last_two(a, call.params.matmul.transpose_a != 0);
  const Matrix bm = last_two(b, call.params.matmul.transpose_b != 0);
  const std::string shapes = "a " + shape_text(a) + (call.params.matmul.transpose_a ? "^T" : "") +
                             ", b " + shape_text(b) + (call.params.matmul.transpose_b ? "^T" : "");
  if (am.cols != bm.rows) {
    return invalid_argument("MATMUL: inner dimensions differ: " + shapes + " (K=" +
                            std::to_string(am.cols) + " vs K=" + std::to_string(bm.rows) + ")");
  }
  uint32_t batch_rank = 0;
  if (!broadcast_shapes(a.rank - 2, a.shape, b.rank - 2, b.shape, &batch_rank, g->batch_shape)) {
    return invalid_argument("MATMUL: batch dimensions do not broadcast: " + shapes);
  }
  g->batch_rank = batch_rank;
  bool out_ok = out.rank == batch_rank + 2 && out.shape[batch_rank] == am.rows &&
                out.shape[batch_rank + 1] == bm.cols;
  for (uint32_t d = 0; out_ok && d < batch_rank; ++d) out_ok = out.shape[d] == g->batch_shape[d];
  if (!out_ok) {
    int64_t expected[SY_MAX_RANK];
    std::copy(g->batch_shape, g->batch_shape + batch_rank, expected);
    expected[batch_rank] = am.rows;
    expected[batch_rank + 1] = bm.cols;
    return invalid_argument("MATMUL: out " + shape_text(out) + " should be " +
                            shape_text(batch_rank + 2, expected) + " for " + shapes);
  }
  batch_strides(a, batch_rank, g->batch_shape, g->a_batch);
  batch_strides(b, batch_rank, g->batch_shape, g->b_batch);
  std::copy(out.strides, out.strides + batch_rank, g->out_batch);
  g->m = am.rows;
  g->n = bm.cols;
  g->k = am.cols;
  g->a_stride_m = am.row_stride;
  g->a_stride_k = am.col_stride;
  g->b_stride_k = bm.row_stride;
  g->b_stride_n = bm.col_stride;
  g->out_stride_m = out.strides[batch_rank];
  g->out_stride_n = out.strides[batch_rank + 1];
  if (call.params.matmul.has_bias) SY_CUDA_RETURN_IF_ERROR(check_bias(call, g));
  return ok_status();
}

namespace {

// cuBLASLt wants X^T for a logical X [R, C] with strides (sr, sc): either X^T is stored
// column-major already (sc == 1, op N) or X is (sr == 1, op T).
bool transposed_view(int64_t R, int64_t C, int64_t sr, int64_t sc, LtMatrix* out) {
  if ((sc == 1 || C == 1) && (R == 1 || sr >= std::max<int64_t>(C, 1))) {
    *out = {false, static_cast<uint64_t>(C), static_cast<uint64_t>(R),
            R == 1 ? std::max<int64_t>(C, 1) : sr, 0};
    return out->ld >= 1;
  }
  if ((sr == 1 || R == 1) && (C == 1 || sc >= std::max<int64_t>(R, 1))) {
    *out = {true, static_cast<uint64_t>(R), static_cast<uint64_t>(C),
            C == 1 ? std::max<int64_t>(R, 1) : sc, 0};
    return out->ld >= 1;
  }
  return false;
}

struct Batch {
  uint32_t rank;
  int64_t shape[SY_MAX_RANK], a[SY_MAX_RANK], b[SY_MAX_RANK], out[SY_MAX_RANK];
};

// A batch whose b is broadcast over the trailing batch axes and whose a and out continue their
// m axis there is one taller product: [B, M, K] @ [K, N] becomes [B*M, K] @ [K, N].
void fold_into_m(Batch* batch, int64_t* m, int64_t* a_sm, int64_t* out_sm) {
  while (batch->rank > 0) {
    const uint32_t d = batch->rank - 1;
    const int64_t extent = batch->shape[d];
    if (extent != 1 && batch->b[d] != 0) return;
    if (extent == 1) {
      --batch->rank;
    } else if (*m == 1) {
      *a_sm = batch->a[d];
      *out_sm = batch->out[d];
      *m = extent;
      --batch->rank;
    } else if (batch->a[d] == *a_sm * *m && batch->out[d] == *out_sm * *m) {
      *m *= extent;
      --batch->rank;
    } else {
      return;
    }
  }
}

void coalesce_batch(Batch* batch) {
  uint32_t rank = 0;
  for (uint32_t d = 0; d < batch->rank; ++d) {
    const int64_t e = batch->shape[d];
    if (e == 1) continue;
    if (rank > 0 && batch->a[rank - 1] == batch->a[d] * e &&
        batch->b[rank - 1] == batch->b[d] * e && batch->out[rank - 1] == batch->out[d] * e) {
      batch->shape[rank - 1] *= e;
      batch->a[rank - 1] = batch->a[d];
      batch->b[rank - 1] = batch->b[d];
      batch->out[rank - 1] = batch->out[d];
    } else {
      batch->shape[rank] = e;
      batch->a[rank] = batch->a[d];
      batch->b[rank] = batch->b[d];
      batch->out[rank] = batch->out[d];
      ++rank;
    }
  }
  batch->rank = rank;
}

}  // namespace

bool plan_cublaslt(const MatmulGeometry& g, LtPlan* plan, std::string* why_not) {
  Batch batch{};
  batch.rank = g.batch_rank;
  std::copy(g.batch_shape, g.batch_shape + g.batch_rank, batch.shape);
  std::copy(g.a_batch, g.a_batch + g.batch_rank, batch.a);
  std::copy(g.b_batch, g.b_batch + g.batch_rank, batch.b);
  std::copy(g.out_batch, g.out_batch + g.batch_rank, batch.out);
  int64_t m = g.m, a_sm = g.a_stride_m, out_sm = g.out_stride_m;
  fold_into_m(&batch, &m, &a_sm, &out_sm);
  coalesce_batch(&batch);
  *plan = LtPlan{};
  if (!transposed_view(g.k, g.n, g.b_stride_k, g.b_stride_n, &plan->a) ||
      !transposed_view(m, g.k, a_sm, g.a_stride_k, &plan->b)) {
    *why_not = "an operand has no unit stride in its last two axes";
    return false;
  }
  if (!transposed_view(m, g.n, out_sm, g.out_stride_n, &plan->c) || plan->c.transpose) {
    *why_not = "the output is not row-major in its last two axes";
    return false;
  }
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (m > kMax || g.n > kMax || g.k > kMax || plan->a.ld > kMax || plan->b.ld > kMax ||
      plan->c.ld > kMax) {
    *why_not = "a size or leading dimension exceeds 32 bits";
    return false;
  }
  plan->m = static_cast<uint64_t>(g.n);
  plan->n = static_cast<uint64_t>(m);
  plan->k = static_cast<uint64_t>(g.k);
  if (batch.rank > 0) {
    const uint32_t last = batch.rank - 1;
    if (batch.shape[last] > kMax) {
      *why_not = "the batch count exceeds 32 bits";
      return false;
    }
    plan->batch_count = static_cast<int32_t>(batch.shape[last]);
    plan->a.batch_stride = batch.b[last];
    plan->b.batch_stride = batch.a[last];
    plan->c.batch_stride = batch.out[last];
    plan->outer_rank = last;
    std::copy(batch.shape, batch.shape + last, plan->outer_shape);
    std::copy(batch.a, batch.a + last, plan->outer_a);
    std::copy(batch.b, batch.b + last, plan->outer_b);
    std::copy(batch.out, batch.out + last, plan->outer_out);
  }
  return true;
}

}  // namespace sy_cuda
