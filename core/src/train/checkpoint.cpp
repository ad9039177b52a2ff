// The Checkpoint record set: typed put/get over byte records.
#include <bit>
#include <cstdint>

#include "runtime/memory_budget.h"
#include "support/byte_codec.h"
#include "switchyard/checkpoint.h"
#include "switchyard/shape.h"

static_assert(std::endian::native == std::endian::little,
              "the checkpoint codec copies floats as little-endian bytes");

namespace switchyard {

void Checkpoint::put_bytes(const std::string& key, std::vector<uint8_t> value) {
  if (records_.count(key) == 0) order_.push_back(key);
  records_[key] = std::move(value);
}

void Checkpoint::put_string(const std::string& key, const std::string& value) {
  put_bytes(key, std::vector<uint8_t>(value.begin(), value.end()));
}

void Checkpoint::put_u64(const std::string& key, uint64_t value) {
  std::vector<uint8_t> bytes;
  detail::append_u64(bytes, value);
  put_bytes(key, std::move(bytes));
}

void Checkpoint::put_f64(const std::string& key, double value) {
  put_u64(key, std::bit_cast<uint64_t>(value));
}

void Checkpoint::put_floats(const std::string& key, const std::vector<float>& values) {
  put_bytes(key, detail::float_bytes(values));
}

void Checkpoint::put_tensor(const std::string& key, const TensorRecord& tensor) {
  std::vector<uint8_t> bytes;
  detail::append_u32(bytes, static_cast<uint32_t>(tensor.dtype));
  detail::append_u32(bytes, static_cast<uint32_t>(tensor.shape.size()));
  for (const int64_t extent : tensor.shape)
    detail::append_u64(bytes, static_cast<uint64_t>(extent));
  if (is_floating(tensor.dtype)) {
    detail::append_bytes(bytes, tensor.floats.data(), tensor.floats.size() * sizeof(float));
  } else {
    detail::append_bytes(bytes, tensor.integers.data(), tensor.integers.size() * sizeof(int64_t));
  }
  put_bytes(key, std::move(bytes));
}

Status Checkpoint::corrupt(const std::string& what) const {
  return data_loss("checkpoint " + (source_.empty() ? std::string("(in memory)") : source_) + ": " +
                   what);
}

Result<std::vector<uint8_t>> Checkpoint::get_bytes(const std::string& key) const {
  const auto found = records_.find(key);
  if (found == records_.end()) return corrupt("record '" + key + "' is missing");
  return found->second;
}

Result<std::string> Checkpoint::get_string(const std::string& key) const {
  SY_ASSIGN_OR_RETURN(const auto bytes, get_bytes(key));
  return std::string(bytes.begin(), bytes.end());
}

Result<uint64_t> Checkpoint::get_u64(const std::string& key) const {
  SY_ASSIGN_OR_RETURN(const auto bytes, get_bytes(key));
  detail::ByteReader reader(bytes.data(), bytes.size());
  const uint64_t value = reader.u64();
  if (reader.failed() || reader.remaining() != 0) {
    return corrupt("record '" + key + "' should hold 8 bytes, holds " +
                   std::to_string(bytes.size()));
  }
  return value;
}

Result<double> Checkpoint::get_f64(const std::string& key) const {
  SY_ASSIGN_OR_RETURN(const uint64_t bits, get_u64(key));
  return std::bit_cast<double>(bits);
}

Result<std::vector<float>> Checkpoint::get_floats(const std::string& key) const {
  SY_ASSIGN_OR_RETURN(const auto bytes, get_bytes(key));
  if (bytes.size() % sizeof(float) != 0) {
    return corrupt("record '" + key + "' has " + std::to_string(bytes.size()) +
                   " bytes, not a whole number of floats");
  }
  std::vector<float> values(bytes.size() / sizeof(float));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

Result<TensorRecord> Checkpoint::get_tensor(const std::string& key) const {
  SY_ASSIGN_OR_RETURN(const auto bytes, get_bytes(key));
  detail::ByteReader reader(bytes.data(), bytes.size());
  TensorRecord tensor;
  const uint32_t dtype = reader.u32();
  const uint32_t rank = reader.u32();
  // A damaged shape must not pass for a small one by overflowing: extents stay below 2^63 and the
  // element and byte counts are computed without wrapping.
  uint64_t count = 1;
  bool fits = true;
  for (uint32_t i = 0; i < rank && !reader.failed() && rank <= SY_MAX_RANK; ++i) {
    const uint64_t extent = reader.u64();
    fits = fits && extent <= static_cast<uint64_t>(INT64_MAX) &&
           !__builtin_mul_overflow(count, extent, &count);
    tensor.shape.push_back(static_cast<int64_t>(extent));
  }
  if (dtype >= SY_DTYPE_COUNT) {
    return corrupt("tensor record '" + key + "' has unknown dtype " + std::to_string(dtype));
  }
  tensor.dtype = static_cast<DType>(dtype);
  const uint64_t element_bytes = is_floating(tensor.dtype) ? sizeof(float) : sizeof(int64_t);
  uint64_t value_bytes = 0;
  fits = fits && !__builtin_mul_overflow(count, element_bytes, &value_bytes);
  // A record that declares more than the host holds is refused by the memory budget before its
  // values are copied, whether or not its bytes are there.
  if (fits && !reader.failed() && rank <= SY_MAX_RANK) {
    SY_RETURN_IF_ERROR(detail::check_memory_budget(
        value_bytes,
        "tensor record '" + key + "' (" + dtype_name(tensor.dtype) + " " +
            Shape(tensor.shape).to_string() + ")",
        "checkpoint " + (source_.empty() ? std::string("(in memory)") : source_)));
  }
  if (reader.failed() || rank > SY_MAX_RANK || !fits || reader.remaining() != value_bytes) {
    return corrupt("tensor record '" + key + "' is malformed (dtype " + std::to_string(dtype) +
                   ", rank " + std::to_string(rank) + ", " + std::to_string(reader.remaining()) +
                   " value bytes)");
  }
  const uint8_t* values = bytes.data() + reader.position();
  if (is_floating(tensor.dtype)) {
    tensor.floats.resize(count);
    if (count != 0) std::memcpy(tensor.floats.data(), values, count * element_bytes);
  } else {
    tensor.integers.resize(count);
    if (count != 0) std::memcpy(tensor.integers.data(), values, count * element_bytes);
  }
  return tensor;
}

std::vector<std::string> Checkpoint::keys_with_prefix(const std::string& prefix) const {
  std::vector<std::string> keys;
  for (const auto& key : order_) {
    if (key.compare(0, prefix.size(), prefix) == 0) keys.push_back(key);
  }
  return keys;
}

}  // namespace switchyard
