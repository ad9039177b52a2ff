#include "tensor.h"

#include <cstring>

#include "switchyard/plugin_support/dtype_codec.h"

namespace sy_reference {

Shape Shape::of(std::initializer_list<int64_t> sizes) {
  Shape shape;
  for (int64_t size : sizes) shape.dims[shape.rank++] = size;
  return shape;
}

int64_t Shape::count() const {
  int64_t product = 1;
  for (uint32_t axis = 0; axis < rank; ++axis) product *= dims[axis];
  return product;
}

std::string Shape::to_string() const {
  std::string text = "[";
  for (uint32_t axis = 0; axis < rank; ++axis) {
    if (axis > 0) text += ", ";
    text += std::to_string(dims[axis]);
  }
  return text + "]";
}

bool Shape::operator==(const Shape& other) const {
  if (rank != other.rank) return false;
  for (uint32_t axis = 0; axis < rank; ++axis) {
    if (dims[axis] != other.dims[axis]) return false;
  }
  return true;
}

size_t dtype_size_bytes(sy_dtype dtype) {
  return sy_dtype_size(dtype);
}

const char* dtype_name(sy_dtype dtype) {
  return sy_dtype_name(dtype);
}

bool is_index_dtype(sy_dtype dtype) {
  return dtype == SY_DTYPE_I32 || dtype == SY_DTYPE_I64;
}

TensorRef swap_last_two_axes(const TensorRef& tensor) {
  TensorRef swapped = tensor;
  const uint32_t rank = tensor.shape.rank;
  std::swap(swapped.shape.dims[rank - 1], swapped.shape.dims[rank - 2]);
  std::swap(swapped.strides[rank - 1], swapped.strides[rank - 2]);
  return swapped;
}

TensorRef broadcast_to(const TensorRef& tensor, const Shape& target) {
  TensorRef view = tensor;
  view.shape = target;
  view.strides = {};
  const uint32_t lead = target.rank - tensor.shape.rank;
  for (uint32_t axis = 0; axis < tensor.shape.rank; ++axis) {
    const bool stretched = tensor.shape.dims[axis] == 1 && target.dims[lead + axis] != 1;
    view.strides[lead + axis] = stretched ? 0 : tensor.strides[axis];
  }
  return view;
}

bool is_contiguous(const TensorRef& tensor) {
  int64_t expected = 1;
  for (int axis = static_cast<int>(tensor.shape.rank) - 1; axis >= 0; --axis) {
    if (tensor.shape.dims[axis] != 1 && tensor.strides[axis] != expected) return false;
    expected *= tensor.shape.dims[axis];
  }
  return true;
}

namespace {

template <class Element, class Convert>
void read_as(const TensorRef& tensor, Convert convert, auto* out) {
  const auto* base = reinterpret_cast<const Element*>(tensor.data);
  int64_t next = 0;
  for_each_offset(tensor.shape, tensor.strides,
                  [&](int64_t offset) { out[next++] = convert(base[offset]); });
}

template <class Element, class Convert>
void write_as(const TensorRef& tensor, Convert convert, const auto* values) {
  auto* base = reinterpret_cast<Element*>(tensor.data);
  int64_t next = 0;
  for_each_offset(tensor.shape, tensor.strides,
                  [&](int64_t offset) { base[offset] = convert(values[next++]); });
}

}  // namespace

std::vector<float> read_f32(const TensorRef& tensor) {
  std::vector<float> values(static_cast<size_t>(tensor.shape.count()));
  float* out = values.data();
  switch (tensor.dtype) {
    case SY_DTYPE_F32:
      if (is_contiguous(tensor) && !values.empty()) {
        std::memcpy(out, tensor.data, values.size() * sizeof(float));
      } else {
        read_as<float>(
            tensor, [](float v) { return v; }, out);
      }
      break;
    case SY_DTYPE_F16:
      read_as<uint16_t>(tensor, sy_support::f16_bits_to_f32, out);
      break;
    case SY_DTYPE_BF16:
      read_as<uint16_t>(tensor, sy_support::bf16_bits_to_f32, out);
      break;
    case SY_DTYPE_I32:
      read_as<int32_t>(
          tensor, [](int32_t v) { return static_cast<float>(v); }, out);
      break;
    case SY_DTYPE_I64:
      read_as<int64_t>(
          tensor, [](int64_t v) { return static_cast<float>(v); }, out);
      break;
    default:
      break;
  }
  return values;
}

void write_f32(const TensorRef& tensor, std::span<const float> values) {
  const float* in = values.data();
  switch (tensor.dtype) {
    case SY_DTYPE_F32:
      write_as<float>(
          tensor, [](float v) { return v; }, in);
      break;
    case SY_DTYPE_F16:
      write_as<uint16_t>(tensor, sy_support::f32_to_f16_bits, in);
      break;
    case SY_DTYPE_BF16:
      write_as<uint16_t>(tensor, sy_support::f32_to_bf16_bits, in);
      break;
    default:
      break;  // Integer outputs of float results go through write_i64 (see copy_fill.cpp).
  }
}

std::vector<int64_t> read_i64(const TensorRef& tensor) {
  std::vector<int64_t> values(static_cast<size_t>(tensor.shape.count()));
  if (tensor.dtype == SY_DTYPE_I32) {
    read_as<int32_t>(
        tensor, [](int32_t v) { return static_cast<int64_t>(v); }, values.data());
  } else if (tensor.dtype == SY_DTYPE_I64) {
    read_as<int64_t>(
        tensor, [](int64_t v) { return v; }, values.data());
  }
  return values;
}

void write_i64(const TensorRef& tensor, std::span<const int64_t> values) {
  if (tensor.dtype == SY_DTYPE_I32) {
    // Two's complement: keep the low 32 bits (well defined for unsigned, then reinterpreted).
    write_as<int32_t>(
        tensor,
        [](int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v & 0xFFFFFFFF)); },
        values.data());
  } else if (tensor.dtype == SY_DTYPE_I64) {
    write_as<int64_t>(
        tensor, [](int64_t v) { return v; }, values.data());
  }
}

}  // namespace sy_reference
