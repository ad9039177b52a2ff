#include "tensor_layout.h"

#include <algorithm>

namespace sy_vk {

bool broadcast_shapes(const sy_tensor_desc& a, const sy_tensor_desc& b, int64_t* out_shape,
                      uint32_t* out_rank) {
  const uint32_t rank = std::max(a.rank, b.rank);
  for (uint32_t i = 0; i < rank; ++i) {
    const int ai = static_cast<int>(i) - static_cast<int>(rank - a.rank);
    const int bi = static_cast<int>(i) - static_cast<int>(rank - b.rank);
    const int64_t as = ai >= 0 ? a.shape[ai] : 1;
    const int64_t bs = bi >= 0 ? b.shape[bi] : 1;
    if (as != bs && as != 1 && bs != 1) return false;
    out_shape[i] = as == 1 ? bs : as;
  }
  *out_rank = rank;
  return true;
}

Status broadcast_view(const OpContext& ctx, const sy_tensor_desc& in, const char* role,
                      const int64_t* shape, uint32_t rank, sy_tensor_desc* view) {
  sy_tensor_desc target{};
  target.rank = rank;
  for (uint32_t d = 0; d < rank; ++d) target.shape[d] = shape[d];
  if (in.rank > rank) {
    return invalid_argument(std::string(op_name(ctx.call.op)) + ": " + role + " " + shape_text(in) +
                            " has more axes than the result " + shape_text(target));
  }
  sy_tensor_desc result = in;
  result.rank = rank;
  for (uint32_t d = 0; d < rank; ++d) {
    const int source = static_cast<int>(d) - static_cast<int>(rank - in.rank);
    result.shape[d] = shape[d];
    if (source < 0) {
      result.strides[d] = 0;
    } else if (in.shape[source] == shape[d]) {
      result.strides[d] = in.strides[source];
    } else if (in.shape[source] == 1) {
      result.strides[d] = 0;
    } else {
      return invalid_argument(std::string(op_name(ctx.call.op)) + ": " + role + " " +
                              shape_text(in) + " does not broadcast to " + shape_text(target));
    }
  }
  *view = result;
  return ok_status();
}

void coalesce_axes(std::span<sy_tensor_desc*> tensors) {
  const sy_tensor_desc& first = *tensors[0];
  int64_t shape[SY_MAX_RANK];
  int64_t strides[SY_MAX_OP_INPUTS + SY_MAX_OP_OUTPUTS][SY_MAX_RANK];
  int kept = 0;  // built from the innermost axis outwards
  for (int d = static_cast<int>(first.rank) - 1; d >= 0; --d) {
    if (first.shape[d] == 1) continue;
    bool merge = kept > 0;
    for (size_t t = 0; merge && t < tensors.size(); ++t) {
      merge = tensors[t]->strides[d] == strides[t][kept - 1] * shape[kept - 1];
    }
    if (merge) {
      shape[kept - 1] *= first.shape[d];
      continue;
    }
    shape[kept] = first.shape[d];
    for (size_t t = 0; t < tensors.size(); ++t) strides[t][kept] = tensors[t]->strides[d];
    ++kept;
  }
  for (size_t t = 0; t < tensors.size(); ++t) {
    tensors[t]->rank = static_cast<uint32_t>(kept);
    for (int d = 0; d < kept; ++d) {
      tensors[t]->shape[d] = shape[kept - 1 - d];
      tensors[t]->strides[d] = strides[t][kept - 1 - d];
    }
  }
}

bool same_view(const sy_tensor_desc& a, const sy_tensor_desc& b) {
  if (a.buffer != b.buffer || a.offset_bytes != b.offset_bytes || a.rank != b.rank ||
      a.dtype != b.dtype) {
    return false;
  }
  for (uint32_t d = 0; d < a.rank; ++d) {
    if (a.shape[d] != b.shape[d] || (a.shape[d] > 1 && a.strides[d] != b.strides[d])) return false;
  }
  return true;
}

}  // namespace sy_vk
