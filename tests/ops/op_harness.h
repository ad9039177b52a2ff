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

#include "device_tensor.h"
#include "support/dtype_codec.h"
#include "switchyard/buffer.h"
#include "switchyard/device.h"
#include "switchyard/queue.h"
#include "test_support.h"

namespace switchyard::op_test {

using Shape = std::vector<int64_t>;
using testing::DeviceTensor;
using testing::element_count;
using testing::zero_params;

// The reference device, created once for the whole test executable.
inline Device& reference() {
  static std::shared_ptr<Device> device = testing::reference_device();
  return *device;
}

// A contiguous tensor on the reference device holding `values` (row-major), in `dtype`.
inline DeviceTensor make_tensor(sy_dtype dtype, const Shape& shape,
                                const std::vector<double>& values) {
  return testing::upload(reference(), dtype, shape, values);
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
  return testing::download(reference(), tensor);
}

// Dispatches one op on the reference device and waits for it.
inline Status run_op(sy_op op, const std::vector<const DeviceTensor*>& inputs,
                     const std::vector<const DeviceTensor*>& outputs,
                     const sy_op_params& params = zero_params()) {
  SY_RETURN_IF_ERROR(testing::enqueue(reference(), op, inputs, outputs, params));
  return reference().default_queue().finish();
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
