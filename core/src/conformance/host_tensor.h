// HostTensor: a tensor described on the host, with its storage values, for conformance cases.
//
// A case describes each input and output once; the runner copies it to the target and to the
// reference device byte for byte, so both devices see identical bits, identical strides and
// identical offsets.
#pragma once

#include <cstdint>
#include <vector>

#include "switchyard/plugin_abi.h"

namespace switchyard::conformance {

struct HostTensor {
  sy_dtype dtype = SY_DTYPE_F32;
  std::vector<int64_t> shape;    // empty = scalar
  std::vector<int64_t> strides;  // in elements, one per dim; non-negative
  int64_t offset_elements = 0;   // of element [0,...,0] in the storage
  std::vector<double> storage;   // one value per storage element, representable in dtype

  int64_t element_count() const;
  // Elements the storage must hold to address every element of the view.
  int64_t storage_extent() const;
  uint64_t storage_bytes() const;

  // The storage as the device sees it.
  std::vector<unsigned char> encode() const;
  // Replaces `storage` with the device's bytes (as many bytes as storage_bytes()).
  void decode(const std::vector<unsigned char>& bytes);

  // The view's elements in row-major order of `shape`.
  std::vector<double> logical_values() const;
  // Offsets into `storage` of the view's elements, in row-major order of `shape`.
  std::vector<int64_t> logical_offsets() const;
};

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape);
int64_t shape_element_count(const std::vector<int64_t>& shape);

// A contiguous tensor of `dtype` holding `values` (rounded to the dtype) in row-major order.
HostTensor tensor_from_values(sy_dtype dtype, std::vector<int64_t> shape,
                              const std::vector<double>& values);
// A contiguous tensor of zeros.
HostTensor zeros(sy_dtype dtype, std::vector<int64_t> shape);

// The ABI descriptor for `tensor` placed at the start of `buffer`.
sy_tensor_desc make_desc(const HostTensor& tensor, sy_buffer buffer);

}  // namespace switchyard::conformance
