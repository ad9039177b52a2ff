#include "geometry.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sy_cuda {

size_t element_size(uint32_t dtype) {
  return sy_dtype_size(dtype);
}

const char* dtype_name(uint32_t dtype) {
  return sy_dtype_name(dtype);
}

const char* op_name(uint32_t op) {
  return sy_op_name(op);
}

std::string shape_text(uint32_t rank, const int64_t* shape) {
  std::string text = "[";
  for (uint32_t d = 0; d < rank; ++d) text += (d ? ", " : "") + std::to_string(shape[d]);
  return text + "]";
}

std::string shape_text(const sy_tensor_desc& t) {
  return shape_text(std::min<uint32_t>(t.rank, SY_MAX_RANK), t.shape);
}

std::string describe(const sy_tensor_desc& t) {
  const uint32_t rank = std::min<uint32_t>(t.rank, SY_MAX_RANK);
  return std::string(dtype_name(t.dtype)) + " " + shape_text(rank, t.shape) + " strides " +
         shape_text(rank, t.strides);
}

int64_t numel(const sy_tensor_desc& t) {
  int64_t n = 1;
  for (uint32_t d = 0; d < t.rank && d < SY_MAX_RANK; ++d) n *= t.shape[d];
  return n;
}

bool same_shape(const sy_tensor_desc& a, const sy_tensor_desc& b) {
  if (a.rank != b.rank) return false;
  for (uint32_t d = 0; d < a.rank; ++d) {
    if (a.shape[d] != b.shape[d]) return false;
  }
  return true;
}

namespace {

Status check_axes(const std::string& what, const sy_tensor_desc& t, bool is_output) {
  for (uint32_t d = 0; d < t.rank; ++d) {
    if (t.shape[d] < 0 || t.strides[d] < 0) {
      return invalid_argument(what + " " + describe(t) + ": negative size or stride on axis " +
                              std::to_string(d));
    }
    if (is_output && t.shape[d] > 1 && t.strides[d] == 0) {
      return invalid_argument(what + " " + describe(t) + ": an output axis of size " +
                              std::to_string(t.shape[d]) + " has stride 0 (axis " +
                              std::to_string(d) + ")");
    }
  }
  return ok_status();
}

}  // namespace

Status check_tensor(const char* op, const char* role, const sy_tensor_desc& t, uint64_t buffer_size,
                    bool is_output) {
  const std::string what = std::string(op) + ": " + role;
  if (t.rank > SY_MAX_RANK) {
    return invalid_argument(what + " has rank " + std::to_string(t.rank) + " (at most " +
                            std::to_string(SY_MAX_RANK) + ")");
  }
  if (t.dtype >= SY_DTYPE_COUNT) {
    return invalid_argument(what + " has unknown dtype " + std::to_string(t.dtype));
  }
  if (t.buffer == nullptr) return invalid_argument(what + " has no buffer");
  SY_CUDA_RETURN_IF_ERROR(check_axes(what, t, is_output));
  const uint64_t size = element_size(t.dtype);
  if (t.offset_bytes % size != 0) {
    return invalid_argument(what + " " + describe(t) + ": offset_bytes " +
                            std::to_string(t.offset_bytes) + " is not a multiple of " +
                            std::to_string(size));
  }
  if (numel(t) == 0) return ok_status();
  uint64_t last = 0;  // element offset of the last element
  for (uint32_t d = 0; d < t.rank; ++d)
    last += static_cast<uint64_t>(t.shape[d] - 1) * t.strides[d];
  const uint64_t end = t.offset_bytes + size * (last + 1);
  if (end > buffer_size) {
    return invalid_argument(what + " " + describe(t) + " at offset " +
                            std::to_string(t.offset_bytes) + " needs " + std::to_string(end) +
                            " bytes but its buffer has " + std::to_string(buffer_size));
  }
  return ok_status();
}

bool broadcast_strides(const sy_tensor_desc& in, uint32_t rank, const int64_t* shape,
                       int64_t* strides) {
  if (in.rank > rank) return false;
  const uint32_t lead = rank - in.rank;
  for (uint32_t d = 0; d < rank; ++d) {
    if (d < lead) {
      strides[d] = 0;
      continue;
    }
    const int64_t extent = in.shape[d - lead];
    if (extent == shape[d]) {
      strides[d] = extent == 1 ? 0 : in.strides[d - lead];
    } else if (extent == 1) {
      strides[d] = 0;
    } else {
      return false;
    }
  }
  return true;
}

bool broadcast_shapes(uint32_t rank_a, const int64_t* shape_a, uint32_t rank_b,
                      const int64_t* shape_b, uint32_t* rank, int64_t* shape) {
  *rank = std::max(rank_a, rank_b);
  for (uint32_t d = 0; d < *rank; ++d) {
    const int64_t a = d + rank_a >= *rank ? shape_a[d + rank_a - *rank] : 1;
    const int64_t b = d + rank_b >= *rank ? shape_b[d + rank_b - *rank] : 1;
    if (a != b && a != 1 && b != 1) return false;
    shape[d] = a == 1 ? b : a;
  }
  return true;
}

SyIter make_iter(uint32_t rank, const int64_t* shape) {
  SyIter iter{};
  iter.rank = static_cast<int32_t>(rank);
  iter.numel = 1;
  for (uint32_t d = 0; d < rank; ++d) {
    iter.shape[d] = shape[d];
    iter.numel *= shape[d];
  }
  return iter;
}

void coalesce(SyIter* iter, SyOperand* const* operands, int count) {
  int rank = 0;  // axes kept so far, written in place
  for (int d = 0; d < iter->rank; ++d) {
    const int64_t extent = iter->shape[d];
    if (extent == 1) continue;
    bool merge = rank > 0;
    for (int i = 0; merge && i < count; ++i) {
      merge = operands[i]->strides[rank - 1] == operands[i]->strides[d] * extent;
    }
    if (merge) {
      iter->shape[rank - 1] *= extent;
      for (int i = 0; i < count; ++i) operands[i]->strides[rank - 1] = operands[i]->strides[d];
    } else {
      iter->shape[rank] = extent;
      for (int i = 0; i < count; ++i) operands[i]->strides[rank] = operands[i]->strides[d];
      ++rank;
    }
  }
  for (int d = rank; d < SY_CUDA_MAX_RANK; ++d) {
    iter->shape[d] = 1;
    for (int i = 0; i < count; ++i) operands[i]->strides[d] = 0;
  }
  iter->rank = rank;
  iter->index32 = iter->numel <= std::numeric_limits<int32_t>::max() ? 1 : 0;
}

SyOperand operand(uint64_t data, uint32_t dtype, const int64_t* strides, uint32_t rank) {
  SyOperand op{};
  op.data = data;
  op.dtype = static_cast<int32_t>(dtype);
  for (uint32_t d = 0; d < rank; ++d) op.strides[d] = strides[d];
  return op;
}

SyTensorArg tensor_arg(uint64_t data, const sy_tensor_desc& t) {
  SyTensorArg arg{};
  arg.data = data;
  arg.dtype = static_cast<int32_t>(t.dtype);
  arg.rank = static_cast<int32_t>(t.rank);
  for (uint32_t d = 0; d < t.rank; ++d) {
    arg.shape[d] = t.shape[d];
    arg.strides[d] = t.strides[d];
  }
  return arg;
}

SyTensorArg axes_view(uint64_t data, const sy_tensor_desc& t, const int* axes, int count) {
  SyTensorArg arg{};
  arg.data = data;
  arg.dtype = static_cast<int32_t>(t.dtype);
  arg.rank = count;
  for (int i = 0; i < count; ++i) {
    arg.shape[i] = t.shape[axes[i]];
    arg.strides[i] = t.strides[axes[i]];
  }
  return arg;
}

int64_t fill_integer(double value, uint32_t dtype) {
  if (std::isnan(value)) return 0;
  const double truncated = std::trunc(value);
  if (dtype == SY_DTYPE_I32) {
    return static_cast<int64_t>(std::clamp(truncated, -2147483648.0, 2147483647.0));
  }
  // 2^63 is exactly representable; anything at or above it saturates.
  if (truncated >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
  if (truncated <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(truncated);
}

int group_size_for(int64_t length) {
  int group = 32;
  while (group < 1024 && static_cast<int64_t>(group) * 8 < length) group *= 2;
  return group;
}

}  // namespace sy_cuda
