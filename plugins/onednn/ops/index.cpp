// GATHER and SCATTER_ADD (docs/ops.md section 12): plain loops over slices along the axis. Every
// index is checked before anything is written (a synchronous backend reports bad indices).
#include <type_traits>

#include "ops/convert.h"
#include "ops/ops.h"
#include "ops/strided_loop.h"

namespace sy_onednn {
namespace {

int64_t index_at(const TensorView& indices, int64_t j) {
  const int64_t offset = j * indices.strides[0];
  return indices.dtype == SY_DTYPE_I32 ? indices.as<int32_t>()[offset]
                                       : indices.as<int64_t>()[offset];
}

// Validates axis, indices and shapes; `data` is x (gather) or out (scatter), `other` the tensor
// whose axis has length L.
int check_call(const OpContext& ctx, const TensorView& data, const char* data_role,
               const TensorView& indices, const TensorView& other, const char* other_role) {
  const int axis = ctx.params.index.axis;
  if (axis < 0 || axis >= data.rank) {
    ctx.fail_shape(cat("axis ", axis, " is out of range for ", data_role, " ", shape_string(data)));
  }
  ctx.require_dtype_in(indices, "indices", {SY_DTYPE_I32, SY_DTYPE_I64});
  if (indices.rank != 1)
    ctx.fail_shape(cat("indices must have rank 1, got ", shape_string(indices)));
  ctx.require_same_dtype(data, data_role, other, other_role);
  int64_t expected[SY_MAX_RANK];
  for (int d = 0; d < data.rank; ++d) expected[d] = d == axis ? indices.shape[0] : data.shape[d];
  ctx.require_shape(other, other_role, expected, data.rank);
  const int64_t size = data.shape[axis];
  for (int64_t j = 0; j < indices.shape[0]; ++j) {
    const int64_t index = index_at(indices, j);
    if (index < 0 || index >= size) {
      ctx.fail_shape(cat("index ", index, " at position ", j, " is outside [0, ", size,
                         ") for axis ", axis, " of ", data_role, " ", shape_string(data)));
    }
  }
  return axis;
}

// The slice of `view` at position `position` of `axis` (that axis removed).
TensorView slice(const TensorView& view, int axis, int64_t position) {
  TensorView part = view;
  part.data = view.data + position * view.strides[axis] * static_cast<int64_t>(view.element_size());
  part.rank = view.rank - 1;
  for (int d = axis; d < part.rank; ++d) {
    part.shape[d] = view.shape[d + 1];
    part.strides[d] = view.strides[d + 1];
  }
  return part;
}

// dst += src elementwise in T's arithmetic (f32 for the float types here).
template <typename T>
void accumulate(const TensorView& dst, const TensorView& src) {
  StridedLoop<2> loop = plan_loop<2>({&dst, &src});
  run_loop(loop, 1, [](char* const* p, const int64_t* s, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
      T* out = reinterpret_cast<T*>(p[0] + i * s[0]);
      const T value = *reinterpret_cast<const T*>(p[1] + i * s[1]);
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;  // wrap around instead of overflowing
        *out = static_cast<T>(static_cast<U>(*out) + static_cast<U>(value));
      } else {
        *out += value;
      }
    }
  });
}

}  // namespace

void run_gather(OpContext& ctx) {
  ctx.require_counts(2, 1);
  const TensorView& x = ctx.in[0];
  const TensorView& indices = ctx.in[1];
  const TensorView& out = ctx.out[0];
  const int axis = check_call(ctx, x, "x", indices, out, "out");
  if (out.numel() == 0) return;
  const int64_t length = indices.shape[0];
  parallel_ranges(length, ctx.threads_for(out.numel()), [&](int64_t first, int64_t last) {
    for (int64_t j = first; j < last; ++j) {
      copy_view(slice(x, axis, index_at(indices, j)), slice(out, axis, j), 1);
    }
  });
}

void run_scatter_add(OpContext& ctx) {
  ctx.require_counts(2, 1);
  const TensorView& src = ctx.in[0];
  const TensorView& indices = ctx.in[1];
  const TensorView& out = ctx.out[0];
  const int axis = check_call(ctx, out, "out", indices, src, "src");
  if (src.numel() == 0) return;
  // f16/bf16: every output element is summed in f32 and rounded once.
  const bool widen = out.dtype == SY_DTYPE_F16 || out.dtype == SY_DTYPE_BF16;
  TensorView target = widen ? dense_copy(ctx, out, SY_DTYPE_F32) : out;
  TensorView source = widen ? dense_copy(ctx, src, SY_DTYPE_F32) : src;
  visit_dtype(target.dtype, [&](auto type_tag) {
    using T = decltype(type_tag);
    if constexpr (std::is_same_v<T, float> || std::is_integral_v<T>) {
      for (int64_t j = 0; j < indices.shape[0]; ++j) {
        accumulate<T>(slice(target, axis, index_at(indices, j)), slice(source, axis, j));
      }
    }
  });
  if (widen) copy_view(target, out, ctx.threads_for(out.numel()));
}

}  // namespace sy_onednn
