// Shape: the extents (or strides) of a tensor, at most SY_MAX_RANK of them, stored inline.
//
// Shapes are built and copied for every op, so they live on the stack rather than in a
// std::vector: creating a tensor must not allocate for its shape.
//
// Threads: a plain value.
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "switchyard/plugin_abi.h"

namespace switchyard {

class Shape {
 public:
  static constexpr int kMaxRank = SY_MAX_RANK;

  Shape() = default;
  // Throws switchyard::Error when more than kMaxRank extents are given.
  Shape(std::initializer_list<int64_t> extents);
  explicit Shape(const std::vector<int64_t>& extents);

  int rank() const { return rank_; }
  size_t size() const { return static_cast<size_t>(rank_); }
  bool empty() const { return rank_ == 0; }
  int64_t operator[](int axis) const { return extents_[static_cast<size_t>(axis)]; }
  int64_t& operator[](int axis) { return extents_[static_cast<size_t>(axis)]; }
  const int64_t* begin() const { return extents_.data(); }
  const int64_t* end() const { return extents_.data() + rank_; }
  int64_t* begin() { return extents_.data(); }
  int64_t* end() { return extents_.data() + rank_; }
  int64_t back() const { return extents_[static_cast<size_t>(rank_ - 1)]; }

  // Throws switchyard::Error when the shape is already at kMaxRank.
  void push_back(int64_t extent);
  void insert(int axis, int64_t extent);
  void erase(int axis);

  // Product of the extents; 1 for rank 0.
  int64_t numel() const;
  std::vector<int64_t> to_vector() const { return {begin(), end()}; }
  // "[64, 256]".
  std::string to_string() const;

  friend bool operator==(const Shape& a, const Shape& b);
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }

 private:
  std::array<int64_t, kMaxRank> extents_{};
  int rank_ = 0;
};

// Row-major strides, in elements, of a contiguous tensor of this shape.
Shape contiguous_strides(const Shape& shape);
// The numpy broadcast of two shapes; throws switchyard::Error naming both when incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b);
// A negative axis counts from the end. Throws switchyard::Error when out of range.
int normalize_axis(int axis, int rank);

}  // namespace switchyard

#pragma GCC visibility pop
