// GATHER (index_select) and SCATTER_ADD (index_add_) along params.index.axis.
//
// Data tensors are viewed as [outer, axis, inner] in row-major logical order; an index selects one
// [outer, 1, inner] slab. Float data is handled as f32 (exact for every float dtype), integer
// data as i64.
#include <vector>

#include "ops.h"

namespace sy_reference {
namespace {

struct SlabLayout {
  int64_t outer = 1;
  int64_t axis_size = 0;    // of the tensor indexed into (x, or out for scatter)
  int64_t index_count = 0;  // L
  int64_t inner = 1;
};

// Checks `indexed` against `other` (same shape except the axis, whose size is L) and the indices.
SlabLayout make_layout(const OpContext& ctx, const TensorRef& indexed, const char* indexed_role,
                       const TensorRef& other, const char* other_role,
                       const std::vector<int64_t>& indices) {
  const int32_t axis = ctx.params().index.axis;
  require_axis(ctx, "index.axis", axis, indexed);
  require_same_dtype(ctx, other_role, other, indexed_role, indexed);
  SlabLayout layout;
  layout.axis_size = indexed.shape[static_cast<uint32_t>(axis)];
  layout.index_count = static_cast<int64_t>(indices.size());
  Shape expected = indexed.shape;
  expected.dims[axis] = layout.index_count;
  require_shape(ctx, other_role, other, expected);
  for (uint32_t a = 0; a < indexed.shape.rank; ++a) {
    if (a < static_cast<uint32_t>(axis)) layout.outer *= indexed.shape.dims[a];
    if (a > static_cast<uint32_t>(axis)) layout.inner *= indexed.shape.dims[a];
  }
  for (size_t j = 0; j < indices.size(); ++j) {
    if (indices[j] < 0 || indices[j] >= layout.axis_size) {
      fail(ctx, "indices[" + std::to_string(j) + "] = " + std::to_string(indices[j]) +
                    " is outside [0, " + std::to_string(layout.axis_size) + ") for axis " +
                    std::to_string(axis) + " of " + describe(indexed_role, indexed));
    }
  }
  return layout;
}

std::vector<int64_t> read_indices(const OpContext& ctx) {
  const TensorRef indices = ctx.input(1);
  require_index(ctx, "indices", indices);
  require_rank(ctx, "indices", indices, 1, "[L]");
  return read_i64(indices);
}

template <class Value>
void gather_slabs(const SlabLayout& l, const std::vector<int64_t>& indices,
                  const std::vector<Value>& x, std::vector<Value>& out) {
  for (int64_t p = 0; p < l.outer; ++p) {
    for (int64_t j = 0; j < l.index_count; ++j) {
      const Value* from = x.data() + (p * l.axis_size + indices[j]) * l.inner;
      Value* to = out.data() + (p * l.index_count + j) * l.inner;
      for (int64_t q = 0; q < l.inner; ++q) to[q] = from[q];
    }
  }
}

float accumulate(float total, float value) {
  return total + value;
}

// Integer sums wrap around (two's complement) instead of overflowing, which would be undefined.
int64_t accumulate(int64_t total, int64_t value) {
  return static_cast<int64_t>(static_cast<uint64_t>(total) + static_cast<uint64_t>(value));
}

template <class Value>
void scatter_add_slabs(const SlabLayout& l, const std::vector<int64_t>& indices,
                       const std::vector<Value>& src, std::vector<Value>& out) {
  for (int64_t p = 0; p < l.outer; ++p) {
    for (int64_t j = 0; j < l.index_count; ++j) {
      const Value* from = src.data() + (p * l.index_count + j) * l.inner;
      Value* to = out.data() + (p * l.axis_size + indices[j]) * l.inner;
      for (int64_t q = 0; q < l.inner; ++q) to[q] = accumulate(to[q], from[q]);
    }
  }
}

}  // namespace

void run_gather(const OpContext& ctx) {
  require_io_counts(ctx, 2, 1);
  const TensorRef x = ctx.input(0);
  const TensorRef out = ctx.output(0);
  const std::vector<int64_t> indices = read_indices(ctx);
  const SlabLayout layout = make_layout(ctx, x, "x", out, "out", indices);
  if (is_float_dtype(x.dtype)) {
    std::vector<float> result(static_cast<size_t>(out.shape.count()));
    gather_slabs(layout, indices, read_f32(x), result);
    write_f32(out, result);
  } else {
    std::vector<int64_t> result(static_cast<size_t>(out.shape.count()));
    gather_slabs(layout, indices, read_i64(x), result);
    write_i64(out, result);
  }
}

void run_scatter_add(const OpContext& ctx) {
  require_io_counts(ctx, 2, 1);
  const TensorRef src = ctx.input(0);
  const TensorRef out = ctx.output(0);
  const std::vector<int64_t> indices = read_indices(ctx);
  const SlabLayout layout = make_layout(ctx, out, "out", src, "src", indices);
  if (is_float_dtype(out.dtype)) {
    std::vector<float> result = read_f32(out);
    scatter_add_slabs(layout, indices, read_f32(src), result);
    write_f32(out, result);
  } else {
    std::vector<int64_t> result = read_i64(out);
    scatter_add_slabs(layout, indices, read_i64(src), result);
    write_i64(out, result);
  }
}

}  // namespace sy_reference
