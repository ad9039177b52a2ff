// Strided tensor views over plugin buffers, and conversion of their elements to and from plain
// contiguous arrays in row-major logical order.
//
// Every op in the reference reads its inputs into contiguous f32 (or i64) arrays, computes with
// plain loops, and writes the results back through the output's strides. That one rule gives every
// op support for arbitrary strides, broadcasting (stride 0) and the 16-bit storage types.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "switchyard/plugin_abi.h"
#include "switchyard/plugin_support/dtype_codec.h"

namespace sy_reference {

using Dims = std::array<int64_t, SY_MAX_RANK>;

struct Shape {
  uint32_t rank = 0;
  Dims dims{};

  static Shape of(std::initializer_list<int64_t> sizes);
  int64_t count() const;  // product of dims; 1 for rank 0
  int64_t operator[](uint32_t axis) const { return dims[axis]; }
  std::string to_string() const;  // "[2, 3]"
  bool operator==(const Shape& other) const;
};

struct TensorRef {
  std::byte* data = nullptr;  // element [0, ..., 0]; may be null for an empty tensor
  sy_dtype dtype = SY_DTYPE_F32;
  Shape shape;
  Dims strides{};  // in elements
};

size_t dtype_size_bytes(sy_dtype dtype);
const char* dtype_name(sy_dtype dtype);
using sy_support::is_float_dtype;  // switchyard/plugin_support/dtype_codec.h
bool is_index_dtype(sy_dtype dtype);

// The view with the last two axes swapped (a matrix transpose of every batch entry).
TensorRef swap_last_two_axes(const TensorRef& tensor);

// The view of `tensor` broadcast to `target` by numpy rules (right-aligned; size-1 or missing axes
// read with stride 0). The caller has checked that the shapes are compatible.
TensorRef broadcast_to(const TensorRef& tensor, const Shape& target);

// True if the strides are those of a row-major contiguous tensor (size-1 axes are ignored).
bool is_contiguous(const TensorRef& tensor);

// Reads every element (row-major logical order) as f32; f16/bf16 convert exactly.
std::vector<float> read_f32(const TensorRef& tensor);
// Writes values (row-major logical order) rounding to the tensor's float dtype (nearest even).
void write_f32(const TensorRef& tensor, std::span<const float> values);
// The same for integer dtypes (I32 values are sign-extended; I64 -> I32 keeps the low 32 bits).
std::vector<int64_t> read_i64(const TensorRef& tensor);
void write_i64(const TensorRef& tensor, std::span<const int64_t> values);

// Calls visit(element_offset) for every element in row-major logical order.
template <class Visit>
void for_each_offset(const Shape& shape, const Dims& strides, Visit&& visit) {
  if (shape.count() == 0) return;
  if (shape.rank == 0) {
    visit(int64_t{0});
    return;
  }
  const uint32_t last = shape.rank - 1;
  const int64_t inner_size = shape.dims[last];
  const int64_t inner_stride = strides[last];
  Dims index{};
  int64_t base = 0;
  while (true) {
    for (int64_t i = 0; i < inner_size; ++i) visit(base + i * inner_stride);
    int axis = static_cast<int>(last) - 1;
    for (; axis >= 0; --axis) {
      ++index[axis];
      base += strides[axis];
      if (index[axis] < shape.dims[axis]) break;
      base -= strides[axis] * shape.dims[axis];
      index[axis] = 0;
    }
    if (axis < 0) return;
  }
}

}  // namespace sy_reference
