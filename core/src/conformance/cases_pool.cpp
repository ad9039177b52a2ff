// MAX_POOL2D, AVG_POOL2D and their backward ops: overlapping and non-overlapping windows, padding
// with and without count_include_pad, ragged edges, ties, and channels-last inputs.
#include <algorithm>

#include "conformance/cases.h"

namespace switchyard::conformance {
namespace {

struct PoolSpec {
  const char* name;
  int64_t n, c, h, w;
  int32_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w;
  bool channels_last;

  int64_t out_h() const { return (h + 2 * pad_h - kernel_h) / stride_h + 1; }
  int64_t out_w() const { return (w + 2 * pad_w - kernel_w) / stride_w + 1; }
  bool overlapping() const { return stride_h < kernel_h || stride_w < kernel_w; }
  bool padded() const { return pad_h > 0 || pad_w > 0; }
};

// At most 512 elements each, so distinct_tensor's values are exact in bf16.
const PoolSpec kPoolSpecs[] = {
    {"2x2/stride2", 2, 3, 6, 8, 2, 2, 2, 2, 0, 0, false},
    {"3x3/stride2/pad1", 2, 3, 7, 7, 3, 3, 2, 2, 1, 1, false},
    {"3x3/stride1/pad1", 1, 2, 5, 6, 3, 3, 1, 1, 1, 1, false},
    {"2x3/stride2x1/pad0x1", 2, 2, 6, 7, 2, 3, 2, 1, 0, 1, false},
    {"3x3/stride3/ragged_edge", 1, 3, 8, 7, 3, 3, 3, 3, 0, 0, false},
    {"2x2/stride3/gaps", 2, 2, 8, 7, 2, 2, 3, 3, 0, 0, false},
    // A row and a column in no window, and rows as wide as some backends' vector kernels take
    // (onednn: 14 columns and more).
    {"2x2/stride2/odd_edges", 1, 2, 7, 17, 2, 2, 2, 2, 0, 0, false},
    {"2x2/stride2/wide_rows", 1, 2, 4, 62, 2, 2, 2, 2, 0, 0, false},
    {"2x2/stride2/channels_last", 2, 3, 4, 6, 2, 2, 2, 2, 0, 0, true},
    {"3x3/stride2/pad1/channels_last", 2, 5, 7, 6, 3, 3, 2, 2, 1, 1, true},
};

// Ties (values -1, 0, 1) over rows of 34 columns: 17 outputs a row, a 16-output chunk and one of 1.
const PoolSpec kWideTies = {"2x2/stride2/wide_rows", 1, 2, 4, 34, 2, 2, 2, 2, 0, 0, false};

sy_pool2d_params pool_params(const PoolSpec& spec, bool count_include_pad) {
  sy_pool2d_params params{};
  params.kernel_h = spec.kernel_h;
  params.kernel_w = spec.kernel_w;
  params.stride_h = spec.stride_h;
  params.stride_w = spec.stride_w;
  params.pad_h = spec.pad_h;
  params.pad_w = spec.pad_w;
  params.count_include_pad = count_include_pad ? 1u : 0u;
  return params;
}

HostTensor laid_out(const HostTensor& t, const PoolSpec& spec) {
  return spec.channels_last ? permuted_layout(t, {0, 2, 3, 1}) : t;
}

OpCase build_pool(Generator& gen, sy_op op, sy_dtype dtype, const PoolSpec& spec,
                  bool count_include_pad, bool ties) {
  const Shape x_shape = {spec.n, spec.c, spec.h, spec.w};
  const Shape y_shape = {spec.n, spec.c, spec.out_h(), spec.out_w()};
  // Max pooling gets pairwise distinct values so the maximum of every window is unique, unless
  // the case tests the tie rule on purpose.
  HostTensor x = ties ? random_integers(gen, dtype, x_shape, -1, 1)
                      : distinct_tensor(gen, dtype, x_shape, 0.125);
  HostTensor grad_y = random_tensor(gen, dtype, y_shape, -1.0, 1.0);
  OpCase op_case;
  switch (op) {
    case SY_OP_MAX_POOL2D:
    case SY_OP_AVG_POOL2D:
      // A channels-last output too, as the host allocates it after a channels-last input.
      op_case = make_op_case(op, {laid_out(x, spec)}, {laid_out(zeros(dtype, y_shape), spec)});
      break;
    case SY_OP_MAX_POOL2D_BACKWARD:
      op_case =
          make_op_case(op, {laid_out(grad_y, spec), laid_out(x, spec)}, {zeros(dtype, x_shape)});
      // Overlapping windows add into one element in an order docs/ops.md leaves open.
      if (spec.overlapping())
        op_case.tolerance = default_tolerance(SY_OP_AVG_POOL2D_BACKWARD, dtype);
      break;
    default:
      op_case = make_op_case(op, {laid_out(grad_y, spec)}, {zeros(dtype, x_shape)});
      break;
  }
  op_case.params.pool2d = pool_params(spec, count_include_pad);
  return op_case;
}

void add_pool_op(CaseTable& table, sy_op op, sy_dtype dtype) {
  const bool avg = op == SY_OP_AVG_POOL2D || op == SY_OP_AVG_POOL2D_BACKWARD;
  for (const PoolSpec& spec : kPoolSpecs) {
    if (spec.channels_last && dtype != SY_DTYPE_F32) continue;
    for (bool include_pad : {false, true}) {
      // count_include_pad only matters for average pooling over padded windows.
      if (include_pad && !(avg && spec.padded())) continue;
      const std::string variant =
          std::string(spec.name) + (include_pad ? "/count_include_pad" : "");
      add_case(table, op, dtype, variant, [op, dtype, spec, include_pad](Generator& gen) {
        return build_pool(gen, op, dtype, spec, include_pad, false);
      });
    }
  }
  if (!avg) {
    add_case(table, op, dtype, "2x2/stride2/ties_first_max", [op, dtype](Generator& gen) {
      return build_pool(gen, op, dtype, kPoolSpecs[0], false, true);
    });
    // Rows as wide as some backends' vector kernels take (onednn: 14 columns and more).
    add_case(table, op, dtype, "2x2/stride2/wide_rows/ties_first_max", [op, dtype](Generator& gen) {
      return build_pool(gen, op, dtype, kWideTies, false, true);
    });
  }
}

// A drawn pool: 1 to 3 images of 1 to 5 channels (channels-last, F32 only: up to 24), up to 20
// rows of up to 70 columns; a 2x2 window of stride 2 a third of the time (onednn's own kernel on
// rows of 14 columns and more), otherwise windows 1 to 4 a side, stride 1 to 4, padding up to half
// the window. Max pooling gets pairwise distinct values, or small integers (ties: the first
// maximum wins) a quarter of the time and whenever distinct values would not be exact in F16 or
// BF16 (over 256 elements).
struct DrawnPool {
  PoolSpec spec;
  bool count_include_pad = false;
  bool ties = false;
};

DrawnPool draw_pool(Generator& g, sy_op op, sy_dtype dtype, std::string& text) {
  DrawnPool drawn;
  PoolSpec& spec = drawn.spec;
  spec.name = "";
  spec.channels_last = dtype == SY_DTYPE_F32 && chance(g, 0.25);
  spec.n = g.integer(1, 3);
  spec.c = spec.channels_last ? draw_extent(g, 24) : g.integer(1, 5);
  if (chance(g, 0.33)) {
    spec.kernel_h = spec.kernel_w = spec.stride_h = spec.stride_w = 2;
    spec.pad_h = spec.pad_w = 0;
  } else {
    spec.kernel_h = static_cast<int32_t>(g.integer(1, 4));
    spec.kernel_w = static_cast<int32_t>(g.integer(1, 4));
    spec.stride_h = static_cast<int32_t>(g.integer(1, 4));
    spec.stride_w = static_cast<int32_t>(g.integer(1, 4));
    spec.pad_h = static_cast<int32_t>(g.integer(0, spec.kernel_h / 2));
    spec.pad_w = static_cast<int32_t>(g.integer(0, spec.kernel_w / 2));
  }
  spec.h = std::max(draw_extent(g, 20), spec.kernel_h - 2 * int64_t{spec.pad_h});
  spec.w = std::max(draw_extent(g, 70), spec.kernel_w - 2 * int64_t{spec.pad_w});
  const bool avg = op == SY_OP_AVG_POOL2D || op == SY_OP_AVG_POOL2D_BACKWARD;
  drawn.count_include_pad = avg && spec.padded() && chance(g, 0.5);
  const bool exact_distinct = dtype == SY_DTYPE_F32 || spec.n * spec.c * spec.h * spec.w <= 256;
  drawn.ties = !avg && (!exact_distinct || chance(g, 0.25));
  text = join_extents({spec.n, spec.c, spec.h, spec.w}) + "/k" + std::to_string(spec.kernel_h) +
         "x" + std::to_string(spec.kernel_w) + "/s" + std::to_string(spec.stride_h) + "x" +
         std::to_string(spec.stride_w) + "/p" + std::to_string(spec.pad_h) + "x" +
         std::to_string(spec.pad_w);
  if (spec.channels_last) text += "/channels_last";
  if (drawn.count_include_pad) text += "/count_include_pad";
  if (drawn.ties) text += "/ties_first_max";
  return drawn;
}

}  // namespace

void add_drawn_pool_cases(CaseTable& table, uint64_t seed, int count) {
  for (sy_op op :
       {SY_OP_MAX_POOL2D, SY_OP_MAX_POOL2D_BACKWARD, SY_OP_AVG_POOL2D, SY_OP_AVG_POOL2D_BACKWARD}) {
    add_drawn_op(table, seed, count, op, [op](Generator& g, sy_dtype dtype, std::string& text) {
      const DrawnPool drawn = draw_pool(g, op, dtype, text);
      return [op, dtype, drawn](Generator& gen) {
        return build_pool(gen, op, dtype, drawn.spec, drawn.count_include_pad, drawn.ties);
      };
    });
  }
}

void add_pool_cases(CaseTable& table) {
  for (sy_op op :
       {SY_OP_MAX_POOL2D, SY_OP_MAX_POOL2D_BACKWARD, SY_OP_AVG_POOL2D, SY_OP_AVG_POOL2D_BACKWARD}) {
    for (sy_dtype dtype : kFloatDtypes) add_pool_op(table, op, dtype);
  }
}

}  // namespace switchyard::conformance
