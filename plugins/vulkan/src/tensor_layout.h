// Shape arithmetic shared by op families: broadcasting views and merging of axes.
#pragma once

#include <span>

#include "op_context.h"

namespace sy_vk {

// Numpy broadcast of two shapes into `out_shape`/`out_rank`; false when incompatible.
bool broadcast_shapes(const sy_tensor_desc& a, const sy_tensor_desc& b, int64_t* out_shape,
                      uint32_t* out_rank);

// A view of input `in` with `shape`/`rank` (right-aligned numpy broadcasting): broadcast axes get
// stride 0. INVALID_ARGUMENT names both shapes when `in` does not broadcast to it.
Status broadcast_view(const OpContext& ctx, const sy_tensor_desc& in, const char* role,
                      const int64_t* shape, uint32_t rank, sy_tensor_desc* view);

// Drops size-1 axes and merges neighbouring axes that are contiguous in every tensor, so that
// elementwise shaders do less index arithmetic. All tensors must share one shape.
void coalesce_axes(std::span<sy_tensor_desc*> tensors);

// True when a and b describe exactly the same elements (same buffer, offset, shape, strides).
bool same_view(const sy_tensor_desc& a, const sy_tensor_desc& b);

}  // namespace sy_vk
