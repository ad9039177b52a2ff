// Helpers for the onednn plugin's tests: the onednn and reference devices, tensors in unusual
// layouts, and one call that runs an op on both devices and compares every result.
//
// Cases are conformance::OpCase values, so inputs reach both devices byte for byte identical
// (same strides, same offsets) and results are judged with the conformance suite's NMSE.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "conformance/cases.h"
#include "conformance/compare.h"
#include "conformance/execute.h"
#include "conformance/host_tensor.h"
#include "conformance/value_gen.h"
#include "device_tensor.h"
#include "support/dtype_codec.h"
#include "switchyard/device.h"
#include "switchyard/plugin.h"
#include "switchyard/tensor.h"
#include "test_support.h"

namespace switchyard::onednn_test {

using conformance::HostTensor;
using conformance::OpCase;
using Shape = std::vector<int64_t>;
using testing::zero_params;

inline std::shared_ptr<const Plugin> onednn_plugin() {
  static std::shared_ptr<const Plugin> plugin =
      value_or_throw(Plugin::load(testing::plugin_file("onednn")));
  return plugin;
}

// A fresh onednn device with the given options.
inline Result<std::shared_ptr<Device>> make_onednn(const OptionList& options) {
  return Device::create(onednn_plugin(), 0, options);
}

// The shared onednn device (2 threads, so that the threaded paths run) and reference device.
inline Device& onednn() {
  static std::shared_ptr<Device> device = value_or_throw(make_onednn({{"threads", "2"}}));
  return *device;
}
inline Device& reference() {
  static std::shared_ptr<Device> device = testing::reference_device();
  return *device;
}

// Deterministic uniform values in [low, high), rounded to the dtype.
inline HostTensor random(sy_dtype dtype, const Shape& shape, uint64_t seed, double low = -1.0,
                         double high = 1.0) {
  conformance::Generator gen(seed);
  return conformance::random_tensor(gen, dtype, shape, low, high);
}

// The same logical values stored every other element with a leading gap: a strided view whose
// storage also holds values the op must neither read nor overwrite.
inline HostTensor spread(const HostTensor& dense) {
  HostTensor spread = dense;
  spread.offset_elements = 3;
  spread.strides.assign(dense.shape.size(), 0);
  int64_t stride = 2;
  for (size_t d = dense.shape.size(); d-- > 0;) {
    spread.strides[d] = stride;
    stride *= std::max<int64_t>(dense.shape[d], 1) + 1;
  }
  // A filler the dtype represents exactly, so that an untouched gap reads back unchanged.
  const double filler = conformance::round_to_dtype(7.375, dense.dtype);
  spread.storage.assign(static_cast<size_t>(std::max<int64_t>(spread.storage_extent(), 1)), filler);
  const std::vector<double> values = dense.logical_values();
  const std::vector<int64_t> offsets = spread.logical_offsets();
  for (size_t i = 0; i < offsets.size(); ++i)
    spread.storage[static_cast<size_t>(offsets[i])] = values[i];
  return spread;
}

// The transpose of the last two axes of `dense`, as a view over storage laid out for the
// original: values are those of the transposed matrix, strides are swapped.
inline HostTensor transposed_view(const HostTensor& dense) {
  HostTensor view = dense;
  const size_t r = dense.shape.size();
  std::swap(view.shape[r - 1], view.shape[r - 2]);
  std::swap(view.strides[r - 1], view.strides[r - 2]);
  return view;
}

// `tensor` read with stride 0 along `axis` (whose size becomes `size`).
inline HostTensor expanded(HostTensor tensor, size_t axis, int64_t size) {
  tensor.shape[axis] = size;
  tensor.strides[axis] = 0;
  return tensor;
}

// Runs `op_case` on both devices and checks each output (and updated input) within `tolerance`
// (negative: the op's tolerance from docs/ops.md for `dtype`).
inline void check_against_reference(const OpCase& op_case, sy_dtype dtype,
                                    double tolerance = -1.0) {
  const double limit =
      tolerance >= 0.0 ? tolerance : conformance::default_tolerance(op_case.op, dtype);
  auto target = conformance::execute_case(onednn(), op_case);
  auto expected = conformance::execute_case(reference(), op_case);
  INFO("onednn: " << target.status().to_string());
  REQUIRE(target.ok());
  INFO("reference: " << expected.status().to_string());
  REQUIRE(expected.ok());
  REQUIRE(target->size() == expected->size());
  for (size_t i = 0; i < target->size(); ++i) {
    conformance::Comparison comparison =
        conformance::compare_tensors((*target)[i], (*expected)[i], limit);
    INFO("result " << i << ": nmse " << comparison.nmse << " (limit " << limit << ") "
                   << comparison.problem);
    CHECK(comparison.within_tolerance);
    const HostTensor& before =
        i < op_case.outputs.size()
            ? op_case.outputs[i]
            : op_case.inputs[op_case.updated_inputs[i - op_case.outputs.size()]];
    conformance::Comparison outside =
        conformance::check_outside_view_unchanged(before, (*target)[i]);
    INFO("outside the view: " << outside.problem);
    CHECK(outside.within_tolerance);
  }
}

// Runs `op_case` on the onednn device only and returns the status.
inline Status run_onednn(const OpCase& op_case) {
  return conformance::execute_case(onednn(), op_case).status();
}

inline const char* dtype_name(sy_dtype dtype) {
  return sy_dtype_name(dtype);
}

inline constexpr sy_dtype kFloatDtypes[] = {SY_DTYPE_F32, SY_DTYPE_BF16, SY_DTYPE_F16};

// Kept weight conversions (SY_CALL_CONSTANT_WEIGHTS): results and memory.
// Every element equal: a kept conversion is the same bytes a fresh one makes.
inline bool same_values(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.to_host_float() == b.to_host_float();
}

// Within float rounding: a packed operand may be summed in another order than one read in place.
inline bool close_values(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return false;
  const std::vector<float> x = a.to_host_float(), y = b.to_host_float();
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::abs(x[i] - y[i]) > 1e-5f * (1.0f + std::abs(y[i]))) return false;
  }
  return true;
}

// The device pool's live bytes, which kept conversions count in.
inline uint64_t allocated_bytes(const Device& device) {
  return value_or_throw(device.memory_stats()).allocated_bytes;
}

}  // namespace switchyard::onednn_test
