// Tensors written to and read from any device through the plugin ABI, for tests that call ops
// directly (tests/ops on the reference, tests/vulkan on Vulkan and the reference). Values are
// plain numbers; the conformance suite's dtype codec stores them in any dtype.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "support/dtype_codec.h"
#include "switchyard/buffer.h"
#include "switchyard/device.h"
#include "switchyard/queue.h"

namespace switchyard::testing {

// One tensor on a device: its buffer and its descriptor (contiguous unless a test rewrites it).
struct DeviceTensor {
  std::shared_ptr<Buffer> buffer;
  sy_tensor_desc desc{};
};

inline int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t extent : shape) count *= extent;
  return count;
}

// A contiguous tensor on `device` holding `values` (row-major), converted to `dtype`.
inline DeviceTensor upload(Device& device, sy_dtype dtype, const std::vector<int64_t>& shape,
                           const std::vector<double>& values) {
  REQUIRE(static_cast<int64_t>(values.size()) == element_count(shape));
  const size_t element_bytes = conformance::dtype_size_bytes(dtype);
  std::vector<unsigned char> bytes(std::max<size_t>(values.size(), 1) * element_bytes, 0);
  for (size_t i = 0; i < values.size(); ++i) {
    conformance::encode_element(values[i], dtype, bytes.data() + i * element_bytes);
  }
  DeviceTensor tensor;
  tensor.buffer = value_or_throw(device.allocate(bytes.size()));
  throw_if_error(device.default_queue().write(*tensor.buffer, 0, bytes.data(), bytes.size()));
  tensor.desc.buffer = tensor.buffer->handle();
  tensor.desc.dtype = static_cast<uint32_t>(dtype);
  tensor.desc.rank = static_cast<uint32_t>(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    tensor.desc.shape[d] = shape[d];
    tensor.desc.strides[d] = stride;
    stride *= shape[d];
  }
  return tensor;
}

// The tensor's elements in row-major order of its shape (its strides are honoured).
inline std::vector<double> download(Device& device, const DeviceTensor& tensor) {
  const auto dtype = static_cast<sy_dtype>(tensor.desc.dtype);
  const size_t element_bytes = conformance::dtype_size_bytes(dtype);
  std::vector<unsigned char> bytes(tensor.buffer->size_bytes());
  throw_if_error(device.default_queue().read(*tensor.buffer, 0, bytes.data(), bytes.size()));
  const std::vector<int64_t> shape(tensor.desc.shape, tensor.desc.shape + tensor.desc.rank);
  std::vector<double> values;
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t n = 0; n < element_count(shape); ++n) {
    uint64_t offset = tensor.desc.offset_bytes;
    for (size_t d = 0; d < shape.size(); ++d) {
      offset += static_cast<uint64_t>(index[d] * tensor.desc.strides[d]) * element_bytes;
    }
    values.push_back(conformance::decode_element(dtype, bytes.data() + offset));
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return values;
}

inline sy_op_params zero_params() {
  sy_op_params params;
  std::memset(&params, 0, sizeof(params));
  return params;
}

// A dense rank-1 descriptor of `count` elements over the whole of `buffer`.
inline sy_tensor_desc vector_desc(const Buffer& buffer, sy_dtype dtype, int64_t count) {
  sy_tensor_desc desc{};
  desc.buffer = buffer.handle();
  desc.dtype = static_cast<uint32_t>(dtype);
  desc.rank = 1;
  desc.shape[0] = count;
  desc.strides[0] = 1;
  return desc;
}

// One op call (unused descriptors and reserved bytes zero).
inline sy_op_call op_call(sy_op op, const std::vector<sy_tensor_desc>& inputs,
                          const std::vector<sy_tensor_desc>& outputs,
                          const sy_op_params& params = zero_params()) {
  sy_op_call call;
  std::memset(&call, 0, sizeof(call));
  call.op = static_cast<uint32_t>(op);
  call.num_inputs = static_cast<uint32_t>(inputs.size());
  call.num_outputs = static_cast<uint32_t>(outputs.size());
  std::copy(inputs.begin(), inputs.end(), call.inputs);
  std::copy(outputs.begin(), outputs.end(), call.outputs);
  call.params = params;
  return call;
}

// Enqueues one op on the device's default queue (no wait).
inline Status enqueue(Device& device, sy_op op, const std::vector<const DeviceTensor*>& inputs,
                      const std::vector<const DeviceTensor*>& outputs,
                      const sy_op_params& params = zero_params()) {
  std::vector<sy_tensor_desc> in, out;
  for (const DeviceTensor* tensor : inputs) in.push_back(tensor->desc);
  for (const DeviceTensor* tensor : outputs) out.push_back(tensor->desc);
  return device.default_queue().dispatch(op_call(op, in, out, params));
}

}  // namespace switchyard::testing
