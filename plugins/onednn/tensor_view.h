// TensorView: an sy_tensor_desc resolved to a host pointer and checked against its buffer.
//
// Every op works on views; none sees sy_buffer. A view of a plugin-internal temporary (a staging
// copy, a converted operand) is made with make_dense_view().
#pragma once

#include <cstdint>
#include <string>

#include "dtype.h"
#include "switchyard/plugin_abi.h"

namespace sy_onednn {

struct TensorView {
  char* data = nullptr;
  uint32_t dtype = SY_DTYPE_F32;
  int rank = 0;
  int64_t shape[SY_MAX_RANK] = {};
  int64_t strides[SY_MAX_RANK] = {};  // in elements, never negative

  int64_t numel() const;
  size_t element_size() const { return dtype_size(dtype); }
  // Row-major dense (size-1 axes may carry any stride).
  bool is_contiguous() const;
  // Rank 4 [N, C, H, W] dense in NHWC order (SY_CAP_CHANNELS_LAST; size-1 axes may carry any
  // stride, so a [N, C, 1, 1] or [N, 1, H, W] tensor is both this and contiguous).
  bool is_channels_last() const;
  template <typename T>
  T* as() const {
    return reinterpret_cast<T*>(data);
  }
  // The address of the element with the given multi-index (rank entries).
  char* element(const int64_t* index) const;
};

// A row-major dense view over `data` with the given shape.
TensorView make_dense_view(void* data, uint32_t dtype, int rank, const int64_t* shape);

// Same buffer memory, shape and strides: the "exactly the same memory" rule for in-place ops.
bool same_memory(const TensorView& a, const TensorView& b);
// Whether the byte ranges spanned by two views intersect (conservative).
bool ranges_overlap(const TensorView& a, const TensorView& b);

// "[2, 3]"
std::string shape_string(const TensorView& view);
std::string shape_string(const int64_t* shape, int rank);
// "f32 [2, 3]" (and " strides [1, 2]" when not contiguous)
std::string describe(const TensorView& view);

}  // namespace sy_onednn
