// Helpers for the op golden-value tests: the reference device, tensors made from literal values,
// and one call to run an op and read its result.
//
// Values are written and read through the conformance suite's dtype codec, so a test states
// values as plain numbers whatever the storage dtype.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "conformance/dtype_codec.h"
#include "switchyard/buffer.h"
#include "switchyard/device.h"
#include "switchyard/queue.h"
#include "test_support.h"

namespace switchyard::op_test {

using Shape = std::vector<int64_t>;

// One tensor on the device: its buffer and its descriptor (contiguous unless a test changes it).
struct DeviceTensor {
  std::shared_ptr<Buffer> buffer;
  sy_tensor_desc desc{};
};

// The reference device, created once for the whole test executable.
inline Device& reference() {
  static std::shared_ptr<Device> device = testing::reference_device();
  return *device;
}

inline sy_op_params zero_params() {
  sy_op_params params;
  std::memset(&params, 0, sizeof(params));
  return params;
}

inline int64_t element_count(const Shape& shape) {
  int64_t count = 1;
  for (int64_t extent : shape) count *= extent;
  return count;
}

// A contiguous tensor holding `values` (row-major), converted to `dtype`.
inline DeviceTensor make_tensor(sy_dtype dtype, const Shape& shape,
                                const std::vector<double>& values) {
  REQUIRE(static_cast<int64_t>(values.size()) == element_count(shape));
  const size_t element_bytes = conformance::dtype_size_bytes(dtype);
  std::vector<unsigned char> bytes(std::max<size_t>(values.size(), 1) * element_bytes, 0);
  for (size_t i = 0; i < values.size(); ++i) {
    conformance::encode_element(values[i], dtype, bytes.data() + i * element_bytes);
  }
  DeviceTensor tensor;
  tensor.buffer = value_or_throw(reference().allocate(bytes.size()));
  throw_if_error(reference().default_queue().write(*tensor.buffer, 0, bytes.data(), bytes.size()));
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

inline DeviceTensor make_f32(const Shape& shape, const std::vector<double>& values) {
  return make_tensor(SY_DTYPE_F32, shape, values);
}

// A contiguous tensor of zeros.
inline DeviceTensor make_zeros(sy_dtype dtype, const Shape& shape) {
  return make_tensor(dtype, shape,
                     std::vector<double>(static_cast<size_t>(element_count(shape)), 0.0));
}

// The tensor's elements in row-major order of its shape (its strides are honoured).
inline std::vector<double> read_values(const DeviceTensor& tensor) {
  const auto dtype = static_cast<sy_dtype>(tensor.desc.dtype);
  const size_t element_bytes = conformance::dtype_size_bytes(dtype);
  std::vector<unsigned char> bytes(tensor.buffer->size_bytes());
  throw_if_error(reference().default_queue().read(*tensor.buffer, 0, bytes.data(), bytes.size()));
  const Shape shape(tensor.desc.shape, tensor.desc.shape + tensor.desc.rank);
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

// Dispatches one op on the reference device and waits for it.
inline Status run_op(sy_op op, const std::vector<const DeviceTensor*>& inputs,
                     const std::vector<const DeviceTensor*>& outputs,
                     const sy_op_params& params = zero_params()) {
  sy_op_call call;
  std::memset(&call, 0, sizeof(call));
  call.op = static_cast<uint32_t>(op);
  call.num_inputs = static_cast<uint32_t>(inputs.size());
  call.num_outputs = static_cast<uint32_t>(outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) call.inputs[i] = inputs[i]->desc;
  for (size_t i = 0; i < outputs.size(); ++i) call.outputs[i] = outputs[i]->desc;
  call.params = params;
  Queue& queue = reference().default_queue();
  SY_RETURN_IF_ERROR(queue.dispatch(call));
  return queue.finish();
}

// Checks every value against its expectation within a relative `epsilon` (values near zero get
// an absolute margin of epsilon / 1000).
inline void require_values(const std::vector<double>& actual, const std::vector<double>& expected,
                           double epsilon = 1e-6) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("element " << i);
    CHECK(actual[i] == Approx(expected[i]).epsilon(epsilon).margin(epsilon * 1e-3));
  }
}

}  // namespace switchyard::op_test
