#include "conformance/host_tensor.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "support/dtype_codec.h"

namespace switchyard::conformance {

int64_t shape_element_count(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t extent : shape) count *= extent;
  return count;
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= std::max<int64_t>(shape[i], 1);
  }
  return strides;
}

int64_t HostTensor::element_count() const {
  return shape_element_count(shape);
}

int64_t HostTensor::storage_extent() const {
  int64_t last = offset_elements;
  for (size_t i = 0; i < shape.size(); ++i) last += (shape[i] - 1) * strides[i];
  return last + 1;
}

uint64_t HostTensor::storage_bytes() const {
  return static_cast<uint64_t>(storage.size()) * dtype_size_bytes(dtype);
}

std::vector<unsigned char> HostTensor::encode() const {
  const size_t element_bytes = dtype_size_bytes(dtype);
  std::vector<unsigned char> bytes(storage.size() * element_bytes);
  for (size_t i = 0; i < storage.size(); ++i) {
    encode_element(storage[i], dtype, bytes.data() + i * element_bytes);
  }
  return bytes;
}

void HostTensor::decode(const std::vector<unsigned char>& bytes) {
  const size_t element_bytes = dtype_size_bytes(dtype);
  if (bytes.size() != storage.size() * element_bytes) {
    throw std::logic_error("HostTensor::decode: byte count does not match the storage");
  }
  for (size_t i = 0; i < storage.size(); ++i) {
    storage[i] = decode_element(dtype, bytes.data() + i * element_bytes);
  }
}

std::vector<int64_t> HostTensor::logical_offsets() const {
  const int64_t count = element_count();
  std::vector<int64_t> offsets;
  offsets.reserve(static_cast<size_t>(count));
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t n = 0; n < count; ++n) {
    int64_t offset = offset_elements;
    for (size_t d = 0; d < shape.size(); ++d) offset += index[d] * strides[d];
    offsets.push_back(offset);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return offsets;
}

std::vector<double> HostTensor::logical_values() const {
  std::vector<double> values;
  for (int64_t offset : logical_offsets()) values.push_back(storage[static_cast<size_t>(offset)]);
  return values;
}

HostTensor tensor_from_values(sy_dtype dtype, std::vector<int64_t> shape,
                              const std::vector<double>& values) {
  HostTensor tensor;
  tensor.dtype = dtype;
  tensor.strides = contiguous_strides(shape);
  tensor.shape = std::move(shape);
  if (static_cast<int64_t>(values.size()) != tensor.element_count()) {
    throw std::logic_error("tensor_from_values: value count does not match the shape");
  }
  tensor.storage.reserve(values.size());
  for (double value : values) tensor.storage.push_back(round_to_dtype(value, dtype));
  return tensor;
}

HostTensor zeros(sy_dtype dtype, std::vector<int64_t> shape) {
  const auto count = static_cast<size_t>(shape_element_count(shape));
  return tensor_from_values(dtype, std::move(shape), std::vector<double>(count, 0.0));
}

sy_tensor_desc make_desc(const HostTensor& tensor, sy_buffer buffer) {
  sy_tensor_desc desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.buffer = buffer;
  desc.offset_bytes =
      static_cast<uint64_t>(tensor.offset_elements) * dtype_size_bytes(tensor.dtype);
  desc.dtype = static_cast<uint32_t>(tensor.dtype);
  desc.rank = static_cast<uint32_t>(tensor.shape.size());
  for (size_t d = 0; d < tensor.shape.size(); ++d) {
    desc.shape[d] = tensor.shape[d];
    desc.strides[d] = tensor.strides[d];
  }
  return desc;
}

}  // namespace switchyard::conformance
