// MATMUL cases: plain and transposed operands, odd and moderately large sizes, bias, batched
// operands with broadcast batch dims, strided operands, K = 0, and a shape error.
#include "conformance/cases.h"
#include "conformance/shape_util.h"

namespace switchyard::conformance {
namespace {

struct MatmulSpec {
  Shape a{};  // as stored (already transposed when transpose_a)
  Shape b{};
  bool transpose_a = false;
  bool transpose_b = false;
  Shape bias{};  // empty = no bias
  bool bias_present = false;
  bool permute_a = false;  // store a column-major (non-contiguous strides)
  bool slice_b = false;    // store b inside a padded buffer
};

Shape matmul_out_shape(const MatmulSpec& spec) {
  const Shape batch_a(spec.a.begin(), spec.a.end() - 2);
  const Shape batch_b(spec.b.begin(), spec.b.end() - 2);
  Shape out = broadcast_shapes(batch_a, batch_b);
  const size_t ra = spec.a.size();
  const size_t rb = spec.b.size();
  out.push_back(spec.transpose_a ? spec.a[ra - 1] : spec.a[ra - 2]);
  out.push_back(spec.transpose_b ? spec.b[rb - 2] : spec.b[rb - 1]);
  return out;
}

std::vector<int> last_two_swapped(size_t rank) {
  std::vector<int> order;
  for (size_t i = 0; i < rank; ++i) order.push_back(static_cast<int>(i));
  std::swap(order[rank - 1], order[rank - 2]);
  return order;
}

OpCase build_matmul(Generator& gen, sy_dtype dtype, const MatmulSpec& spec) {
  HostTensor a = random_tensor(gen, dtype, spec.a, -1.0, 1.0);
  HostTensor b = random_tensor(gen, dtype, spec.b, -1.0, 1.0);
  if (spec.permute_a) a = permuted_layout(a, last_two_swapped(spec.a.size()));
  if (spec.slice_b) b = sliced_layout(b, 1, gen);
  std::vector<HostTensor> inputs = {a, b};
  if (spec.bias_present) inputs.push_back(random_tensor(gen, dtype, spec.bias, -1.0, 1.0));
  OpCase op_case = make_op_case(SY_OP_MATMUL, inputs, {zeros(dtype, matmul_out_shape(spec))});
  op_case.params.matmul.transpose_a = spec.transpose_a ? 1u : 0u;
  op_case.params.matmul.transpose_b = spec.transpose_b ? 1u : 0u;
  op_case.params.matmul.has_bias = spec.bias_present ? 1u : 0u;
  return op_case;
}

void add_spec(CaseTable& table, sy_dtype dtype, const std::string& variant, MatmulSpec spec) {
  add_case(table, SY_OP_MATMUL, dtype, variant,
           [dtype, spec](Generator& gen) { return build_matmul(gen, dtype, spec); });
}

void add_plain_shapes(CaseTable& table, sy_dtype dtype) {
  add_spec(table, dtype, "7x13x5", {.a = {7, 13}, .b = {13, 5}});
  add_spec(table, dtype, "7x13x5/transpose_a", {.a = {13, 7}, .b = {13, 5}, .transpose_a = true});
  add_spec(table, dtype, "7x13x5/transpose_b", {.a = {7, 13}, .b = {5, 13}, .transpose_b = true});
  add_spec(table, dtype, "7x13x5/transpose_ab",
           {.a = {13, 7}, .b = {5, 13}, .transpose_a = true, .transpose_b = true});
  add_spec(table, dtype, "7x13x5/bias",
           {.a = {7, 13}, .b = {13, 5}, .bias = {5}, .bias_present = true});
  add_spec(table, dtype, "7x13x5/bias_column",
           {.a = {7, 13}, .b = {13, 5}, .bias = {7, 1}, .bias_present = true});
  add_spec(table, dtype, "64x96x80", {.a = {64, 96}, .b = {96, 80}});
  add_spec(table, dtype, "64x96x80/transpose_b/bias",
           {.a = {64, 96}, .b = {80, 96}, .transpose_b = true, .bias = {80}, .bias_present = true});
  add_spec(table, dtype, "1x1x1", {.a = {1, 1}, .b = {1, 1}});
}

void add_batched_shapes(CaseTable& table, sy_dtype dtype) {
  add_spec(table, dtype, "batched/broadcast", {.a = {2, 1, 4, 6}, .b = {3, 6, 5}});
  add_spec(
      table, dtype, "batched/transpose_b/bias",
      {.a = {3, 4, 6}, .b = {3, 5, 6}, .transpose_b = true, .bias = {4, 5}, .bias_present = true});
  add_spec(table, dtype, "batched/rank2_b", {.a = {4, 3, 6}, .b = {6, 5}});
  add_spec(table, dtype, "batched/transpose_a/broadcast_a",
           {.a = {1, 6, 3}, .b = {4, 6, 5}, .transpose_a = true});
  add_spec(table, dtype, "strided/permuted_a", {.a = {7, 13}, .b = {13, 5}, .permute_a = true});
  add_spec(table, dtype, "strided/sliced_b/batched",
           {.a = {2, 5, 9}, .b = {2, 9, 4}, .slice_b = true});
  // Shapes of a Transformer on short sequences, which backends may run by other strategies than
  // a plain product (the Vulkan plugin folds a shared B's batch into rows, and computes products
  // far smaller than its 64x64 tiles element by element): a Linear layer on [batch, time,
  // features] large enough for tiles, attention scores per head, a weight gradient with a long K,
  // and a shared B beside an A whose batch cannot be folded into its rows.
  add_spec(
      table, dtype, "batched/rank2_b/transpose_b/bias/tiles",
      {.a = {4, 32, 40}, .b = {72, 40}, .transpose_b = true, .bias = {72}, .bias_present = true});
  add_spec(table, dtype, "batched/heads/transpose_b",
           {.a = {2, 3, 8, 8}, .b = {2, 3, 8, 8}, .transpose_b = true});
  add_spec(table, dtype, "32x200x16/transpose_a",
           {.a = {200, 32}, .b = {200, 16}, .transpose_a = true});
  add_spec(table, dtype, "batched/rank2_b/permuted_a",
           {.a = {3, 4, 6}, .b = {6, 5}, .permute_a = true});
  // Weight gradients with K >= 1024 and a leading dimension of 1024 (onednn: oneDNN's sgemm on
  // AVX-512, a row-major copy elsewhere), with b row-major and transposed.
  add_spec(table, dtype, "24x1100x20/transpose_a/long_k",
           {.a = {1100, 24}, .b = {1100, 20}, .transpose_a = true});
  add_spec(table, dtype, "1024x1030x9/transpose_ab/long_k",
           {.a = {1030, 1024}, .b = {9, 1030}, .transpose_a = true, .transpose_b = true});
}

OpCase build_inner_mismatch(Generator& gen) {
  OpCase op_case = make_op_case(SY_OP_MATMUL,
                                {random_tensor(gen, SY_DTYPE_F32, {4, 3}, -1, 1),
                                 random_tensor(gen, SY_DTYPE_F32, {5, 2}, -1, 1)},
                                {zeros(SY_DTYPE_F32, {4, 2})});
  op_case.expected_error = StatusCode::kInvalidArgument;
  return op_case;
}

// A drawn product: M and N up to 96, K up to 160 (one K in ten from 1000 to 1100, a weight
// gradient's); no batch, or one or two batch axes where either operand may broadcast an axis or B
// may be one shared matrix; transposes; a bias of [N], [M, 1], [M, N], [1] or the output's shape;
// A stored column-major, B inside a padded buffer.
MatmulSpec draw_matmul_spec(Generator& g, std::string& text) {
  const int64_t m = draw_extent(g, 96), n = draw_extent(g, 96);
  const int64_t k = chance(g, 0.1) ? g.integer(1000, 1100) : draw_extent(g, 160);
  MatmulSpec spec;
  spec.transpose_a = chance(g, 0.5);
  spec.transpose_b = chance(g, 0.5);
  Shape batch_a, batch_b;
  const auto batch_rank = static_cast<size_t>(g.integer(0, 2) == 0 ? 0 : g.integer(1, 2));
  const bool shared_b = batch_rank > 0 && chance(g, 0.25);
  for (size_t i = 0; i < batch_rank; ++i) {
    const int64_t extent = g.integer(1, 4);
    const int who = static_cast<int>(g.integer(0, 3));  // 0: A broadcasts, 1: B broadcasts
    batch_a.push_back(who == 0 ? 1 : extent);
    if (!shared_b) batch_b.push_back(who == 1 ? 1 : extent);
  }
  spec.a = batch_a;
  spec.a.push_back(spec.transpose_a ? k : m);
  spec.a.push_back(spec.transpose_a ? m : k);
  spec.b = batch_b;
  spec.b.push_back(spec.transpose_b ? n : k);
  spec.b.push_back(spec.transpose_b ? k : n);
  text = "a" + join_extents(spec.a) + "/b" + join_extents(spec.b);
  if (spec.transpose_a) text += "/transpose_a";
  if (spec.transpose_b) text += "/transpose_b";
  if (chance(g, 0.4)) {
    spec.bias_present = true;
    switch (g.integer(0, 4)) {
      case 0:
        spec.bias = {n};
        break;
      case 1:
        spec.bias = {m, 1};
        break;
      case 2:
        spec.bias = {m, n};
        break;
      case 3:
        spec.bias = {1};
        break;
      default:
        spec.bias = matmul_out_shape(spec);
        break;
    }
    text += "/bias" + join_extents(spec.bias);
  }
  spec.permute_a = chance(g, 0.2);
  spec.slice_b = chance(g, 0.2);
  if (spec.permute_a) text += "/permuted_a";
  if (spec.slice_b) text += "/sliced_b";
  return spec;
}

}  // namespace

void add_drawn_matmul_cases(CaseTable& table, uint64_t seed, int count) {
  add_drawn_op(table, seed, count, SY_OP_MATMUL,
               [](Generator& g, sy_dtype dtype, std::string& text) {
                 const MatmulSpec spec = draw_matmul_spec(g, text);
                 return [dtype, spec](Generator& gen) { return build_matmul(gen, dtype, spec); };
               });
}

void add_matmul_cases(CaseTable& table) {
  for (sy_dtype dtype : kFloatDtypes) {
    add_plain_shapes(table, dtype);
    add_batched_shapes(table, dtype);
  }
  add_spec(table, SY_DTYPE_F32, "k0/bias",
           {.a = {3, 0}, .b = {0, 4}, .bias = {4}, .bias_present = true});
  add_case(table, SY_OP_MATMUL, SY_DTYPE_F32, "error/inner_mismatch", build_inner_mismatch);
}

}  // namespace switchyard::conformance
