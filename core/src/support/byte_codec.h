// Little-endian encoding of integers and floats into byte vectors, for the checkpoint format.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace switchyard::detail {

inline void append_u32(std::vector<uint8_t>& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

inline void append_u64(std::vector<uint8_t>& out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

inline void append_bytes(std::vector<uint8_t>& out, const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  out.insert(out.end(), bytes, bytes + size);
}

// Reads from a byte range and remembers whether it ran past the end (no exceptions, no UB).
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool failed() const { return failed_; }
  size_t remaining() const { return size_ - position_; }
  size_t position() const { return position_; }

  uint32_t u32() {
    uint32_t value = 0;
    if (!take(4)) return 0;
    for (int i = 0; i < 4; ++i) value |= static_cast<uint32_t>(data_[position_ - 4 + i]) << (8 * i);
    return value;
  }

  uint64_t u64() {
    uint64_t value = 0;
    if (!take(8)) return 0;
    for (int i = 0; i < 8; ++i) value |= static_cast<uint64_t>(data_[position_ - 8 + i]) << (8 * i);
    return value;
  }

  // `size` bytes, or empty (and failed()) if fewer remain.
  std::vector<uint8_t> bytes(uint64_t size) {
    if (size > remaining() || !take(static_cast<size_t>(size))) {
      failed_ = true;
      return {};
    }
    return std::vector<uint8_t>(data_ + position_ - size, data_ + position_);
  }

 private:
  bool take(size_t count) {
    if (failed_ || count > size_ - position_) {
      failed_ = true;
      return false;
    }
    position_ += count;
    return true;
  }

  const uint8_t* data_;
  size_t size_;
  size_t position_ = 0;
  bool failed_ = false;
};

// The host is little-endian (checked at compile time in checkpoint.cpp), so float arrays are
// copied as bytes.
inline std::vector<uint8_t> float_bytes(const std::vector<float>& values) {
  std::vector<uint8_t> out(values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

}  // namespace switchyard::detail
