// Helpers for the Vulkan plugin's tests: the Vulkan device (with validation layers), and tensors
// that are written to and read from any device, so that one op can be run on Vulkan and on the
// reference plugin and compared.
//
// With validation on, the plugin fails any call during which the validation layer reported an
// error or a warning, so every OK status in these tests also asserts "no validation message".
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "conformance/dtype_codec.h"
#include "switchyard/buffer.h"
#include "switchyard/device.h"
#include "switchyard/plugin.h"
#include "switchyard/queue.h"
#include "test_support.h"

namespace switchyard::vulkan_test {

using Shape = std::vector<int64_t>;

inline const OptionList& validation_on() {
  static const OptionList options = {{"validation", "true"}};
  return options;
}

// The Vulkan plugin, or null with the reason (not built, no loader, no device).
inline std::shared_ptr<Plugin> vulkan_plugin(std::string* reason) {
  Result<std::shared_ptr<Plugin>> plugin = Plugin::load(testing::plugin_file("vulkan"));
  if (!plugin.ok()) {
    *reason = plugin.status().to_string();
    return nullptr;
  }
  Result<uint32_t> count = (*plugin)->device_count();
  if (!count.ok() || *count == 0) {
    *reason = count.ok() ? "no Vulkan device" : count.status().to_string();
    return nullptr;
  }
  return *plugin;
}

// Device 0 of the Vulkan plugin with `options`, or null (and a WARN with the reason): tests then
// stop early, as Catch2 2 has no SKIP.
inline std::shared_ptr<Device> vulkan_device(const OptionList& options = validation_on()) {
  std::string reason;
  std::shared_ptr<Plugin> plugin = vulkan_plugin(&reason);
  if (plugin == nullptr) {
    WARN("vulkan test skipped: " << reason);
    return nullptr;
  }
  return value_or_throw(Device::create(plugin, 0, options));
}

inline int64_t element_count(const Shape& shape) {
  int64_t count = 1;
  for (int64_t extent : shape) count *= extent;
  return count;
}

// A tensor on one device; contiguous unless a test rewrites its descriptor.
struct DeviceTensor {
  std::shared_ptr<Buffer> buffer;
  sy_tensor_desc desc{};
};

inline DeviceTensor upload(Device& device, sy_dtype dtype, const Shape& shape,
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

inline DeviceTensor zeros(Device& device, sy_dtype dtype, const Shape& shape) {
  return upload(device, dtype, shape, std::vector<double>(element_count(shape), 0.0));
}

// Elements in row-major order of the descriptor's shape, honouring its strides.
inline std::vector<double> download(Device& device, const DeviceTensor& tensor) {
  const auto dtype = static_cast<sy_dtype>(tensor.desc.dtype);
  const size_t element_bytes = conformance::dtype_size_bytes(dtype);
  std::vector<unsigned char> bytes(tensor.buffer->size_bytes());
  throw_if_error(device.default_queue().read(*tensor.buffer, 0, bytes.data(), bytes.size()));
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

inline sy_op_params no_params() {
  sy_op_params params;
  std::memset(&params, 0, sizeof(params));
  return params;
}

// Enqueues one op on the device's default queue (no wait).
inline Status enqueue(Device& device, sy_op op, const std::vector<const DeviceTensor*>& inputs,
                      const std::vector<const DeviceTensor*>& outputs,
                      const sy_op_params& params = no_params()) {
  sy_op_call call;
  std::memset(&call, 0, sizeof(call));
  call.op = static_cast<uint32_t>(op);
  call.num_inputs = static_cast<uint32_t>(inputs.size());
  call.num_outputs = static_cast<uint32_t>(outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) call.inputs[i] = inputs[i]->desc;
  for (size_t i = 0; i < outputs.size(); ++i) call.outputs[i] = outputs[i]->desc;
  call.params = params;
  return device.default_queue().dispatch(call);
}

// Deterministic values in [-scale, scale) that differ from element to element.
inline std::vector<double> wavy_values(int64_t count, double phase, double scale = 1.0) {
  std::vector<double> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    values[i] = scale * std::sin(0.731 * static_cast<double>(i) + phase);
  }
  return values;
}

// Every element agrees within `tolerance` relative to max(1, |expected|).
inline void require_close(const std::vector<double>& actual, const std::vector<double>& expected,
                          double tolerance) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("element " << i << ": " << actual[i] << " vs " << expected[i]);
    REQUIRE(std::fabs(actual[i] - expected[i]) <=
            tolerance * std::max(1.0, std::fabs(expected[i])));
  }
}

}  // namespace switchyard::vulkan_test
