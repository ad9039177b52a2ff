// MATMUL: out[..., m, n] = sum_k A[..., m, k] * B[..., k, n] (+ bias), batch axes broadcast.
#include <cstring>
#include <vector>

#include "ops.h"

namespace sy_reference {
namespace {

// The operand's elements in row-major order of its logical (transposed) view: borrowed from the
// buffer when it is already contiguous f32, otherwise converted into owned storage.
class ContiguousF32 {
 public:
  explicit ContiguousF32(const TensorRef& view) {
    if (view.dtype == SY_DTYPE_F32 && is_contiguous(view)) {
      data_ = reinterpret_cast<const float*>(view.data);
    } else {
      storage_ = read_f32(view);
      data_ = storage_.data();
    }
  }
  const float* data() const { return data_; }

 private:
  std::vector<float> storage_;
  const float* data_ = nullptr;
};

// c[M, N] += a[M, K] @ b[K, N], all row-major. The i-k-j order streams rows of b and c, which
// the compiler vectorises; blocking over k and n keeps the tile of b that every row of a reuses
// in cache (each element of c still accumulates in ascending k).
void gemm_accumulate(const float* a, const float* b, float* c, int64_t m_size, int64_t n_size,
                     int64_t k_size) {
  constexpr int64_t kBlockK = 128;
  constexpr int64_t kBlockN = 512;
  for (int64_t n0 = 0; n0 < n_size; n0 += kBlockN) {
    const int64_t n1 = n0 + kBlockN < n_size ? n0 + kBlockN : n_size;
    for (int64_t k0 = 0; k0 < k_size; k0 += kBlockK) {
      const int64_t k1 = k0 + kBlockK < k_size ? k0 + kBlockK : k_size;
      for (int64_t m = 0; m < m_size; ++m) {
        float* c_row = c + m * n_size;
        const float* a_row = a + m * k_size;
        for (int64_t k = k0; k < k1; ++k) {
          const float a_value = a_row[k];
          const float* b_row = b + k * n_size;
          for (int64_t n = n0; n < n1; ++n) c_row[n] += a_value * b_row[n];
        }
      }
    }
  }
}

Shape leading_axes(const Shape& shape, uint32_t trailing) {
  Shape lead;
  lead.rank = shape.rank - trailing;
  for (uint32_t axis = 0; axis < lead.rank; ++axis) lead.dims[axis] = shape.dims[axis];
  return lead;
}

// The row-major linear index into `batch` of the broadcast batch index `index` (of `out_batch`).
int64_t broadcast_linear_index(const Shape& batch, const Shape& out_batch, const Dims& index) {
  const uint32_t lead = out_batch.rank - batch.rank;
  int64_t linear = 0;
  for (uint32_t axis = 0; axis < batch.rank; ++axis) {
    const int64_t i = batch.dims[axis] == 1 ? 0 : index[lead + axis];
    linear = linear * batch.dims[axis] + i;
  }
  return linear;
}

void advance(Dims& index, const Shape& shape) {
  for (int axis = static_cast<int>(shape.rank) - 1; axis >= 0; --axis) {
    if (++index[axis] < shape.dims[axis]) return;
    index[axis] = 0;
  }
}

}  // namespace

void run_matmul(const OpContext& ctx) {
  const sy_matmul_params& params = ctx.params().matmul;
  require_io_counts(ctx, params.has_bias ? 3 : 2, 1);
  const TensorRef a = ctx.input(0);
  const TensorRef b = ctx.input(1);
  const TensorRef out = ctx.output(0);
  require_float(ctx, "a", a);
  require_same_dtype(ctx, "b", b, "a", a);
  require_same_dtype(ctx, "out", out, "a", a);
  if (a.shape.rank < 2 || b.shape.rank < 2) {
    fail(ctx, "a and b need rank >= 2, got " + describe("a", a) + " and " + describe("b", b));
  }
  const TensorRef a_view = params.transpose_a ? swap_last_two_axes(a) : a;
  const TensorRef b_view = params.transpose_b ? swap_last_two_axes(b) : b;
  const int64_t m_size = a_view.shape[a.shape.rank - 2];
  const int64_t k_size = a_view.shape[a.shape.rank - 1];
  const int64_t n_size = b_view.shape[b.shape.rank - 1];
  if (b_view.shape[b.shape.rank - 2] != k_size) {
    fail(ctx, "inner dimensions differ: " + describe("a", a) +
                  (params.transpose_a ? " (transposed)" : "") + " has K=" + std::to_string(k_size) +
                  " but " + describe("b", b) + (params.transpose_b ? " (transposed)" : "") +
                  " has K=" + std::to_string(b_view.shape[b.shape.rank - 2]));
  }
  const Shape a_batch = leading_axes(a_view.shape, 2);
  const Shape b_batch = leading_axes(b_view.shape, 2);
  const Shape out_batch = broadcast_shapes(ctx, "a's batch", a_batch, "b's batch", b_batch);
  Shape out_shape = out_batch;
  out_shape.dims[out_shape.rank++] = m_size;
  out_shape.dims[out_shape.rank++] = n_size;
  require_shape(ctx, "out", out, out_shape);

  std::vector<float> result(static_cast<size_t>(out_shape.count()), 0.0f);
  if (params.has_bias) {
    const TensorRef bias = ctx.input(2);
    require_same_dtype(ctx, "bias", bias, "a", a);
    if (!(broadcast_shapes(ctx, "bias", bias.shape, "out", out_shape) == out_shape)) {
      fail(ctx, describe("bias", bias) + " does not broadcast to out " + out_shape.to_string());
    }
    result = read_f32(broadcast_to(bias, out_shape));
  }
  if (result.empty()) return;
  if (k_size > 0) {
    const ContiguousF32 a_values(a_view);
    const ContiguousF32 b_values(b_view);
    Dims index{};
    for (int64_t batch = 0; batch < out_batch.count(); ++batch) {
      const int64_t a_index = broadcast_linear_index(a_batch, out_batch, index);
      const int64_t b_index = broadcast_linear_index(b_batch, out_batch, index);
      gemm_accumulate(a_values.data() + a_index * m_size * k_size,
                      b_values.data() + b_index * k_size * n_size,
                      result.data() + batch * m_size * n_size, m_size, n_size, k_size);
      advance(index, out_batch);
    }
  }
  write_f32(out, result);
}

}  // namespace sy_reference
