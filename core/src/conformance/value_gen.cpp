#include "conformance/value_gen.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "support/dtype_codec.h"
#include "support/random_bits.h"
#include "switchyard/checkpoint.h"  // fnv1a64

namespace switchyard::conformance {
namespace {

uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

}  // namespace

Generator::Generator(uint64_t seed) {
  uint64_t x = seed;
  for (uint64_t& word : state_) word = detail::splitmix64_next(x);
}

uint64_t Generator::seed_for_case(uint64_t suite_seed, const std::string& case_name) {
  // FNV-1a from 1469598103934665603, not the usual offset basis (14695981039346656037): the
  // suite's first seeds began there, and keeping it keeps every case's values, so that a failure
  // reported with its seed reproduces on any version.
  const uint64_t hash = fnv1a64(case_name.data(), case_name.size(), 1469598103934665603ull);
  return detail::mix64(suite_seed ^ hash);
}

uint64_t Generator::next_u64() {  // xoshiro256**
  const uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

double Generator::uniform(double low, double high) {
  const double unit = detail::unit_double(next_u64());
  return low + (high - low) * unit;
}

int64_t Generator::integer(int64_t low, int64_t high) {
  const auto span = static_cast<uint64_t>(high - low) + 1;
  return low + static_cast<int64_t>(next_u64() % span);
}

HostTensor random_tensor(Generator& gen, sy_dtype dtype, std::vector<int64_t> shape, double low,
                         double high) {
  std::vector<double> values(static_cast<size_t>(shape_element_count(shape)));
  for (double& value : values) value = gen.uniform(low, high);
  return tensor_from_values(dtype, std::move(shape), values);
}

HostTensor random_tensor_away_from_zero(Generator& gen, sy_dtype dtype, std::vector<int64_t> shape,
                                        double min_magnitude, double max_magnitude) {
  std::vector<double> values(static_cast<size_t>(shape_element_count(shape)));
  for (double& value : values) {
    const double magnitude = gen.uniform(min_magnitude, max_magnitude);
    value = (gen.next_u64() & 1u) ? magnitude : -magnitude;
  }
  return tensor_from_values(dtype, std::move(shape), values);
}

HostTensor random_integers(Generator& gen, sy_dtype dtype, std::vector<int64_t> shape, int64_t low,
                           int64_t high) {
  std::vector<double> values(static_cast<size_t>(shape_element_count(shape)));
  for (double& value : values) value = static_cast<double>(gen.integer(low, high));
  return tensor_from_values(dtype, std::move(shape), values);
}

HostTensor distinct_tensor(Generator& gen, sy_dtype dtype, std::vector<int64_t> shape,
                           double step) {
  const auto count = static_cast<size_t>(shape_element_count(shape));
  std::vector<double> values(count);
  // Centred ramp; with step a power of two and count <= 256 every value is exact even in bf16.
  for (size_t i = 0; i < count; ++i) {
    values[i] = (static_cast<double>(i) - static_cast<double>(count / 2)) * step;
  }
  for (size_t i = count; i > 1; --i) {
    std::swap(values[i - 1],
              values[static_cast<size_t>(gen.integer(0, static_cast<int64_t>(i) - 1))]);
  }
  return tensor_from_values(dtype, std::move(shape), values);
}

HostTensor permuted_layout(const HostTensor& dense, const std::vector<int>& storage_order) {
  if (storage_order.size() != dense.shape.size()) {
    throw std::logic_error("permuted_layout: order rank does not match the tensor");
  }
  std::vector<int64_t> storage_shape;
  for (int dim : storage_order) storage_shape.push_back(dense.shape[static_cast<size_t>(dim)]);
  const std::vector<int64_t> storage_strides = contiguous_strides(storage_shape);
  HostTensor view;
  view.dtype = dense.dtype;
  view.shape = dense.shape;
  view.strides.assign(dense.shape.size(), 0);
  for (size_t i = 0; i < storage_order.size(); ++i) {
    view.strides[static_cast<size_t>(storage_order[i])] = storage_strides[i];
  }
  view.storage.assign(static_cast<size_t>(dense.element_count()), 0.0);
  const std::vector<double> values = dense.logical_values();
  const std::vector<int64_t> offsets = view.logical_offsets();
  for (size_t i = 0; i < values.size(); ++i)
    view.storage[static_cast<size_t>(offsets[i])] = values[i];
  return view;
}

HostTensor strided_layout(const HostTensor& dense, std::vector<int64_t> strides,
                          int64_t offset_elements, int64_t storage_elements, Generator& gen) {
  HostTensor view;
  view.dtype = dense.dtype;
  view.shape = dense.shape;
  view.strides = std::move(strides);
  view.offset_elements = offset_elements;
  view.storage.resize(static_cast<size_t>(storage_elements));
  for (double& value : view.storage) value = round_to_dtype(gen.uniform(-50.0, 50.0), dense.dtype);
  const std::vector<double> values = dense.logical_values();
  const std::vector<int64_t> offsets = view.logical_offsets();
  for (size_t i = 0; i < values.size(); ++i)
    view.storage[static_cast<size_t>(offsets[i])] = values[i];
  return view;
}

HostTensor sliced_layout(const HostTensor& dense, int64_t pad, Generator& gen) {
  std::vector<int64_t> padded_shape;
  for (int64_t extent : dense.shape) padded_shape.push_back(extent + 2 * pad);
  std::vector<int64_t> strides = contiguous_strides(padded_shape);
  int64_t offset = 0;
  for (int64_t stride : strides) offset += pad * stride;
  return strided_layout(dense, std::move(strides), offset, shape_element_count(padded_shape), gen);
}

HostTensor broadcast_layout(const HostTensor& source, const std::vector<int64_t>& shape) {
  // Numpy alignment: source dims align with the trailing dims of `shape`; a size-1 (or missing)
  // source dim becomes stride 0.
  if (source.shape.size() > shape.size()) {
    throw std::logic_error("broadcast_layout: source has more dims than the target shape");
  }
  HostTensor view = source;
  view.shape = shape;
  view.strides.assign(shape.size(), 0);
  const size_t lead = shape.size() - source.shape.size();
  for (size_t d = 0; d < source.shape.size(); ++d) {
    if (source.shape[d] != 1) view.strides[lead + d] = source.strides[d];
  }
  return view;
}

}  // namespace switchyard::conformance
