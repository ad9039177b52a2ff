#include "tensor_view.h"

#include <algorithm>
#include <sstream>

namespace sy_onednn {

int64_t TensorView::numel() const {
  int64_t count = 1;
  for (int d = 0; d < rank; ++d) count *= shape[d];
  return count;
}

bool TensorView::is_contiguous() const {
  int64_t expected = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

bool TensorView::is_channels_last() const {
  if (rank != 4) return false;
  int64_t expected = 1;
  for (int d : {1, 3, 2, 0}) {
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

char* TensorView::element(const int64_t* index) const {
  int64_t offset = 0;
  for (int d = 0; d < rank; ++d) offset += index[d] * strides[d];
  return data + offset * static_cast<int64_t>(element_size());
}

TensorView make_dense_view(void* data, uint32_t dtype, int rank, const int64_t* shape) {
  TensorView view;
  view.data = static_cast<char*>(data);
  view.dtype = dtype;
  view.rank = rank;
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    view.shape[d] = shape[d];
    view.strides[d] = stride;
    stride *= shape[d];
  }
  return view;
}

bool same_memory(const TensorView& a, const TensorView& b) {
  if (a.data != b.data || a.rank != b.rank || a.dtype != b.dtype) return false;
  for (int d = 0; d < a.rank; ++d) {
    if (a.shape[d] != b.shape[d]) return false;
    if (a.shape[d] != 1 && a.strides[d] != b.strides[d]) return false;
  }
  return true;
}

namespace {

// [first byte, one past the last byte] spanned by a non-empty view.
std::pair<const char*, const char*> byte_range(const TensorView& v) {
  int64_t last = 0;
  for (int d = 0; d < v.rank; ++d) last += (v.shape[d] - 1) * v.strides[d];
  return {v.data, v.data + (last + 1) * static_cast<int64_t>(v.element_size())};
}

}  // namespace

bool ranges_overlap(const TensorView& a, const TensorView& b) {
  if (a.numel() == 0 || b.numel() == 0) return false;
  auto [a_begin, a_end] = byte_range(a);
  auto [b_begin, b_end] = byte_range(b);
  return a_begin < b_end && b_begin < a_end;
}

std::string shape_string(const int64_t* shape, int rank) {
  std::ostringstream out;
  out << '[';
  for (int d = 0; d < rank; ++d) out << (d ? ", " : "") << shape[d];
  out << ']';
  return out.str();
}

std::string shape_string(const TensorView& view) {
  return shape_string(view.shape, view.rank);
}

std::string describe(const TensorView& view) {
  std::string text = std::string(dtype_name(view.dtype)) + " " + shape_string(view);
  if (!view.is_contiguous()) text += " strides " + shape_string(view.strides, view.rank);
  return text;
}

}  // namespace sy_onednn
