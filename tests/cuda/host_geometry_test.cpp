// The cuda plugin's host-side geometry, checked without a GPU: descriptor validation, numpy
// broadcasting, coalescing of iteration spaces, and the translation of MATMUL calls into
// cuBLASLt's column-major terms. The plugin's sources are compiled into this test directly
// (they include no CUDA header), so the test checks the code the plugin runs.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "../../plugins/cuda/src/geometry.cpp"
#include "../../plugins/cuda/src/matmul_plan.cpp"

namespace sy_cuda {
namespace {

sy_buffer fake_buffer() {
  return reinterpret_cast<sy_buffer>(static_cast<uintptr_t>(0x1000));
}

sy_tensor_desc tensor(uint32_t dtype, std::vector<int64_t> shape,
                      std::vector<int64_t> strides = {}) {
  sy_tensor_desc t{};
  t.buffer = fake_buffer();
  t.dtype = dtype;
  t.rank = static_cast<uint32_t>(shape.size());
  int64_t stride = 1;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    t.shape[d] = shape[d];
    t.strides[d] = strides.empty() ? stride : strides[d];
    stride *= shape[d];
  }
  return t;
}

TEST_CASE("check_tensor accepts in-bounds layouts and names what is wrong otherwise", "[cuda]") {
  const sy_tensor_desc t = tensor(SY_DTYPE_F32, {2, 3});
  CHECK(check_tensor("ADD", "input 0", t, 24, false).ok());
  const Status too_small = check_tensor("ADD", "input 0", t, 20, false);
  CHECK(too_small.code() == SY_STATUS_INVALID_ARGUMENT);
  CHECK(too_small.message() ==
        "ADD: input 0 f32 [2, 3] strides [3, 1] at offset 0 needs 24 bytes but its buffer has 20");
  sy_tensor_desc misaligned = tensor(SY_DTYPE_BF16, {4});
  misaligned.offset_bytes = 3;
  CHECK(check_tensor("COPY", "output 0", misaligned, 64, true).message() ==
        "COPY: output 0 bf16 [4] strides [1]: offset_bytes 3 is not a multiple of 2");
  const sy_tensor_desc broadcast_out = tensor(SY_DTYPE_F32, {4, 3}, {0, 1});
  CHECK(check_tensor("ADD", "output 0", broadcast_out, 1024, true).code() ==
        SY_STATUS_INVALID_ARGUMENT);
  CHECK(check_tensor("ADD", "input 1", broadcast_out, 12, false).ok());  // inputs may broadcast
  const sy_tensor_desc empty = tensor(SY_DTYPE_F32, {0, 5});
  CHECK(check_tensor("ADD", "input 0", empty, 0, false).ok());
}

TEST_CASE("broadcast_strides follows numpy rules", "[cuda]") {
  const int64_t out_shape[3] = {2, 4, 3};
  int64_t strides[3] = {-1, -1, -1};
  CHECK(broadcast_strides(tensor(SY_DTYPE_F32, {3}), 3, out_shape, strides));
  CHECK(std::vector<int64_t>(strides, strides + 3) == std::vector<int64_t>{0, 0, 1});
  CHECK(broadcast_strides(tensor(SY_DTYPE_F32, {4, 1}), 3, out_shape, strides));
  CHECK(std::vector<int64_t>(strides, strides + 3) == std::vector<int64_t>{0, 1, 0});
  CHECK_FALSE(broadcast_strides(tensor(SY_DTYPE_F32, {5, 3}), 3, out_shape, strides));
  uint32_t rank = 0;
  int64_t shape[SY_MAX_RANK];
  const int64_t a[2] = {4, 1}, b[3] = {2, 1, 3};
  CHECK(broadcast_shapes(2, a, 3, b, &rank, shape));
  CHECK(std::vector<int64_t>(shape, shape + rank) == std::vector<int64_t>{2, 4, 3});
}

TEST_CASE("coalesce merges contiguous axes and keeps broadcast and permuted ones apart", "[cuda]") {
  const int64_t shape[3] = {2, 3, 4};
  SyIter iter = make_iter(3, shape);
  const int64_t contiguous[3] = {12, 4, 1};
  const int64_t row_broadcast[3] = {0, 0, 1};  // a bias of shape [4]
  SyOperand out = operand(0, SY_DTYPE_F32, contiguous, 3);
  SyOperand bias = operand(0, SY_DTYPE_F32, row_broadcast, 3);
  SyOperand* both[2] = {&out, &bias};
  coalesce(&iter, both, 2);
  REQUIRE(iter.rank == 2);  // [6, 4]: the two leading axes merge, the bias axis stays apart
  CHECK(iter.shape[0] == 6);
  CHECK(iter.shape[1] == 4);
  CHECK(out.strides[0] == 4);
  CHECK(bias.strides[0] == 0);
  CHECK(iter.numel == 24);
  CHECK(iter.index32 == 1);

  SyIter plain = make_iter(3, shape);
  SyOperand only = operand(0, SY_DTYPE_F32, contiguous, 3);
  SyOperand* one[1] = {&only};
  coalesce(&plain, one, 1);
  CHECK(plain.rank == 1);
  CHECK(plain.shape[0] == 24);
  CHECK(only.strides[0] == 1);

  const int64_t transposed_shape[2] = {3, 2};
  SyIter t_iter = make_iter(2, transposed_shape);
  const int64_t transposed[2] = {1, 3};
  SyOperand t_op = operand(0, SY_DTYPE_F32, transposed, 2);
  SyOperand* t_ops[1] = {&t_op};
  coalesce(&t_iter, t_ops, 1);
  CHECK(t_iter.rank == 2);  // a transpose cannot be flattened
}

TEST_CASE("fill_integer truncates toward zero and saturates to the output dtype", "[cuda]") {
  constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();
  constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
  CHECK(fill_integer(2.9, SY_DTYPE_I32) == 2);
  CHECK(fill_integer(-2.9, SY_DTYPE_I64) == -2);
  CHECK(fill_integer(std::nan(""), SY_DTYPE_I32) == 0);
  // An I32 fill saturates (as the reference does) instead of keeping the low 32 bits.
  CHECK(fill_integer(3.0e9, SY_DTYPE_I32) == kI32Max);
  CHECK(fill_integer(-3.0e9, SY_DTYPE_I32) == kI32Min);
  CHECK(fill_integer(2147483647.5, SY_DTYPE_I32) == kI32Max);
  CHECK(fill_integer(-2147483648.9, SY_DTYPE_I32) == kI32Min);
  CHECK(fill_integer(HUGE_VAL, SY_DTYPE_I32) == kI32Max);
  CHECK(fill_integer(3.0e9, SY_DTYPE_I64) == 3000000000);
  CHECK(fill_integer(1.0e19, SY_DTYPE_I64) == std::numeric_limits<int64_t>::max());
  CHECK(fill_integer(-HUGE_VAL, SY_DTYPE_I64) == std::numeric_limits<int64_t>::min());
}

sy_op_call matmul_call(const sy_tensor_desc& a, const sy_tensor_desc& b,
                       const sy_tensor_desc& out) {
  sy_op_call call;
  std::memset(&call, 0, sizeof(call));
  call.op = SY_OP_MATMUL;
  call.num_inputs = 2;
  call.num_outputs = 1;
  call.inputs[0] = a;
  call.inputs[1] = b;
  call.outputs[0] = out;
  return call;
}

TEST_CASE("matmul_geometry validates shapes with messages that name them", "[cuda]") {
  MatmulGeometry g;
  sy_op_call bad_k = matmul_call(tensor(SY_DTYPE_F32, {4, 3}), tensor(SY_DTYPE_F32, {5, 2}),
                                 tensor(SY_DTYPE_F32, {4, 2}));
  const Status status = matmul_geometry(bad_k, &g);
  CHECK(status.code() == SY_STATUS_INVALID_ARGUMENT);
  CHECK(status.message() == "MATMUL: inner dimensions differ: a [4, 3], b [5, 2] (K=3 vs K=5)");
  sy_op_call bad_out = matmul_call(tensor(SY_DTYPE_F32, {4, 3}), tensor(SY_DTYPE_F32, {3, 2}),
                                   tensor(SY_DTYPE_F32, {4, 3}));
  CHECK(matmul_geometry(bad_out, &g).message() ==
        "MATMUL: out [4, 3] should be [4, 2] for a [4, 3], b [3, 2]");
  sy_op_call mixed = matmul_call(tensor(SY_DTYPE_F32, {4, 3}), tensor(SY_DTYPE_BF16, {3, 2}),
                                 tensor(SY_DTYPE_F32, {4, 2}));
  CHECK(matmul_geometry(mixed, &g).code() == SY_STATUS_INVALID_ARGUMENT);
  sy_op_call batched =
      matmul_call(tensor(SY_DTYPE_F32, {5, 1, 4, 3}), tensor(SY_DTYPE_F32, {6, 3, 2}),
                  tensor(SY_DTYPE_F32, {5, 6, 4, 2}));
  REQUIRE(matmul_geometry(batched, &g).ok());
  CHECK(g.batch_rank == 2);
  CHECK(g.a_batch[1] == 0);  // a broadcast over the second batch axis
  CHECK(g.b_batch[0] == 0);  // b broadcast over the first
}

TEST_CASE("plan_cublaslt maps a row-major product onto cuBLASLt's column-major one", "[cuda]") {
  MatmulGeometry g;
  sy_op_call call = matmul_call(tensor(SY_DTYPE_BF16, {8, 5}), tensor(SY_DTYPE_BF16, {5, 6}),
                                tensor(SY_DTYPE_BF16, {8, 6}));
  REQUIRE(matmul_geometry(call, &g).ok());
  LtPlan plan;
  std::string why;
  REQUIRE(plan_cublaslt(g, &plan, &why));
  // out^T [6, 8] = b^T [6, 5] * a^T [5, 8], all without transposes.
  CHECK(plan.m == 6);
  CHECK(plan.n == 8);
  CHECK(plan.k == 5);
  CHECK_FALSE(plan.a.transpose);
  CHECK(plan.a.rows == 6);
  CHECK(plan.a.cols == 5);
  CHECK(plan.a.ld == 6);
  CHECK_FALSE(plan.b.transpose);
  CHECK(plan.b.rows == 5);
  CHECK(plan.b.ld == 5);
  CHECK(plan.c.rows == 6);
  CHECK(plan.c.ld == 6);
  CHECK(plan.batch_count == 1);

  call.params.matmul.transpose_b = 1;  // b stored [N, K] = [6, 5] (a linear layer's weight)
  call.inputs[1] = tensor(SY_DTYPE_BF16, {6, 5});
  REQUIRE(matmul_geometry(call, &g).ok());
  REQUIRE(plan_cublaslt(g, &plan, &why));
  CHECK(plan.a.transpose);
  CHECK(plan.a.rows == 5);
  CHECK(plan.a.cols == 6);
  CHECK(plan.a.ld == 5);
}

TEST_CASE("plan_cublaslt folds broadcast weights, batches the rest, and declines odd strides",
          "[cuda]") {
  MatmulGeometry g;
  LtPlan plan;
  std::string why;
  // [2, 7, 5] @ [5, 3]: one [14, 5] @ [5, 3] product.
  sy_op_call folded = matmul_call(tensor(SY_DTYPE_F32, {2, 7, 5}), tensor(SY_DTYPE_F32, {5, 3}),
                                  tensor(SY_DTYPE_F32, {2, 7, 3}));
  REQUIRE(matmul_geometry(folded, &g).ok());
  REQUIRE(plan_cublaslt(g, &plan, &why));
  CHECK(plan.n == 14);
  CHECK(plan.batch_count == 1);
  CHECK(plan.outer_rank == 0);
  // [4, 7, 5] @ [4, 5, 3]: a strided batch of 4.
  sy_op_call batched = matmul_call(tensor(SY_DTYPE_F32, {4, 7, 5}), tensor(SY_DTYPE_F32, {4, 5, 3}),
                                   tensor(SY_DTYPE_F32, {4, 7, 3}));
  REQUIRE(matmul_geometry(batched, &g).ok());
  REQUIRE(plan_cublaslt(g, &plan, &why));
  CHECK(plan.batch_count == 4);
  CHECK(plan.a.batch_stride == 15);  // cuBLASLt's A is our b
  CHECK(plan.b.batch_stride == 35);
  CHECK(plan.c.batch_stride == 21);
  // An operand with no unit stride in its last two axes goes to the tiled kernel.
  sy_op_call strided = matmul_call(tensor(SY_DTYPE_F32, {4, 3}, {6, 2}),
                                   tensor(SY_DTYPE_F32, {3, 2}), tensor(SY_DTYPE_F32, {4, 2}));
  REQUIRE(matmul_geometry(strided, &g).ok());
  CHECK_FALSE(plan_cublaslt(g, &plan, &why));
  CHECK(why == "an operand has no unit stride in its last two axes");
  // A column-major output cannot be cuBLASLt's D.
  sy_op_call col_out = matmul_call(tensor(SY_DTYPE_F32, {4, 3}), tensor(SY_DTYPE_F32, {3, 2}),
                                   tensor(SY_DTYPE_F32, {4, 2}, {1, 4}));
  REQUIRE(matmul_geometry(col_out, &g).ok());
  CHECK_FALSE(plan_cublaslt(g, &plan, &why));
  CHECK(why == "the output is not row-major in its last two axes");
}

// cuBLASLt's documented semantics, executed on the host: D(i, j) = sum_p op(A)(i, p) * op(B)(p, j)
// over column-major matrices (element (r, c) of a stored matrix at r + c * ld, each batch
// batch_stride further on). Running a plan through it checks the row-major -> column-major mapping.
void column_major_gemm(const LtPlan& plan, const float* lt_a, const float* lt_b, float* c) {
  auto at = [](const LtMatrix& m, const float* base, int64_t batch, uint64_t r, uint64_t col,
               bool transposed) {
    const uint64_t row = transposed ? col : r, column = transposed ? r : col;
    return base[batch * m.batch_stride + static_cast<int64_t>(row) +
                static_cast<int64_t>(column) * m.ld];
  };
  for (int64_t batch = 0; batch < plan.batch_count; ++batch) {
    for (uint64_t i = 0; i < plan.m; ++i) {
      for (uint64_t j = 0; j < plan.n; ++j) {
        float sum = 0.0f;
        for (uint64_t p = 0; p < plan.k; ++p) {
          sum += at(plan.a, lt_a, batch, i, p, plan.a.transpose) *
                 at(plan.b, lt_b, batch, p, j, plan.b.transpose);
        }
        c[batch * plan.c.batch_stride + static_cast<int64_t>(i) +
          static_cast<int64_t>(j) * plan.c.ld] = sum;
      }
    }
  }
}

// Runs `call` (descriptors over three host arrays) through plan_cublaslt + column_major_gemm,
// looping over the plan's outer batch axes as ops_matmul.cpp does, and compares every output
// element with the product computed directly from the geometry.
void check_plan_computes_the_product(const sy_op_call& call, size_t a_size, size_t b_size,
                                     size_t out_size) {
  MatmulGeometry g;
  REQUIRE(matmul_geometry(call, &g).ok());
  LtPlan plan;
  std::string why;
  REQUIRE(plan_cublaslt(g, &plan, &why));
  std::vector<float> a(a_size), b(b_size), out(out_size, -999.0f), expected(out_size, -999.0f);
  for (size_t i = 0; i < a_size; ++i) a[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  for (size_t i = 0; i < b_size; ++i) b[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
  int64_t batches = 1;
  for (uint32_t d = 0; d < g.batch_rank; ++d) batches *= g.batch_shape[d];
  for (int64_t batch = 0; batch < batches; ++batch) {
    int64_t rest = batch, a0 = 0, b0 = 0, o0 = 0;
    for (int d = static_cast<int>(g.batch_rank) - 1; d >= 0; --d) {
      const int64_t c = rest % g.batch_shape[d];
      rest /= g.batch_shape[d];
      a0 += c * g.a_batch[d];
      b0 += c * g.b_batch[d];
      o0 += c * g.out_batch[d];
    }
    for (int64_t m = 0; m < g.m; ++m) {
      for (int64_t n = 0; n < g.n; ++n) {
        float sum = 0.0f;
        for (int64_t k = 0; k < g.k; ++k) {
          sum += a[a0 + m * g.a_stride_m + k * g.a_stride_k] *
                 b[b0 + k * g.b_stride_k + n * g.b_stride_n];
        }
        expected[o0 + m * g.out_stride_m + n * g.out_stride_n] = sum;
      }
    }
  }
  int64_t outer = 1;
  for (uint32_t d = 0; d < plan.outer_rank; ++d) outer *= plan.outer_shape[d];
  for (int64_t o = 0; o < outer; ++o) {
    int64_t rest = o, a0 = 0, b0 = 0, o0 = 0;
    for (int d = static_cast<int>(plan.outer_rank) - 1; d >= 0; --d) {
      const int64_t c = rest % plan.outer_shape[d];
      rest /= plan.outer_shape[d];
      a0 += c * plan.outer_a[d];
      b0 += c * plan.outer_b[d];
      o0 += c * plan.outer_out[d];
    }
    column_major_gemm(plan, b.data() + b0, a.data() + a0, out.data() + o0);
  }
  CHECK(out == expected);
}

TEST_CASE("cuBLASLt plans compute the row-major product under cuBLASLt's column-major rules",
          "[cuda]") {
  SECTION("plain") {
    check_plan_computes_the_product(
        matmul_call(tensor(SY_DTYPE_F32, {8, 5}), tensor(SY_DTYPE_F32, {5, 6}),
                    tensor(SY_DTYPE_F32, {8, 6})),
        40, 30, 48);
  }
  SECTION("both transposed") {
    sy_op_call call = matmul_call(tensor(SY_DTYPE_F32, {5, 8}), tensor(SY_DTYPE_F32, {6, 5}),
                                  tensor(SY_DTYPE_F32, {8, 6}));
    call.params.matmul.transpose_a = 1;
    call.params.matmul.transpose_b = 1;
    check_plan_computes_the_product(call, 40, 30, 48);
  }
  SECTION("strided batch") {
    check_plan_computes_the_product(
        matmul_call(tensor(SY_DTYPE_F32, {4, 7, 5}), tensor(SY_DTYPE_F32, {4, 5, 3}),
                    tensor(SY_DTYPE_F32, {4, 7, 3})),
        140, 60, 84);
  }
  SECTION("broadcast weight folded into M") {
    check_plan_computes_the_product(
        matmul_call(tensor(SY_DTYPE_F32, {2, 7, 5}), tensor(SY_DTYPE_F32, {5, 3}),
                    tensor(SY_DTYPE_F32, {2, 7, 3})),
        70, 15, 42);
  }
  SECTION("single-row batches folded") {
    check_plan_computes_the_product(
        matmul_call(tensor(SY_DTYPE_F32, {3, 1, 5}), tensor(SY_DTYPE_F32, {5, 6}),
                    tensor(SY_DTYPE_F32, {3, 1, 6})),
        15, 30, 18);
  }
  SECTION("broadcast a over the batch (stride 0)") {
    check_plan_computes_the_product(
        matmul_call(tensor(SY_DTYPE_F32, {1, 7, 5}), tensor(SY_DTYPE_F32, {3, 5, 2}),
                    tensor(SY_DTYPE_F32, {3, 7, 2})),
        35, 30, 42);
  }
  SECTION("permuted batch axes looped on the host") {
    // a is a [3, 2, 4, 5] tensor viewed with its batch axes swapped: shape [2, 3, 4, 5].
    check_plan_computes_the_product(
        matmul_call(tensor(SY_DTYPE_F32, {2, 3, 4, 5}, {20, 40, 5, 1}),
                    tensor(SY_DTYPE_F32, {2, 3, 5, 6}), tensor(SY_DTYPE_F32, {2, 3, 4, 6})),
        120, 180, 144);
  }
}

}  // namespace
}  // namespace sy_cuda
