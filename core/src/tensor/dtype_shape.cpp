// DType helpers and Shape.
#include <algorithm>

#include "switchyard/dtype.h"
#include "switchyard/shape.h"
#include "switchyard/status.h"

namespace switchyard {

const char* dtype_name(DType dtype) {
  return sy_dtype_name(static_cast<uint32_t>(dtype));
}

uint64_t dtype_size_bytes(DType dtype) {
  return sy_dtype_size(static_cast<uint32_t>(dtype));
}

bool is_floating(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16;
}

namespace {

[[noreturn]] void throw_rank_overflow(size_t rank) {
  throw_error(invalid_argument("a shape of rank " + std::to_string(rank) + " exceeds the maximum " +
                               std::to_string(Shape::kMaxRank)));
}

}  // namespace

Shape::Shape(std::initializer_list<int64_t> extents) {
  if (extents.size() > static_cast<size_t>(kMaxRank)) throw_rank_overflow(extents.size());
  std::copy(extents.begin(), extents.end(), extents_.begin());
  rank_ = static_cast<int>(extents.size());
}

Shape::Shape(const std::vector<int64_t>& extents) {
  if (extents.size() > static_cast<size_t>(kMaxRank)) throw_rank_overflow(extents.size());
  std::copy(extents.begin(), extents.end(), extents_.begin());
  rank_ = static_cast<int>(extents.size());
}

void Shape::push_back(int64_t extent) {
  if (rank_ == kMaxRank) throw_rank_overflow(static_cast<size_t>(rank_) + 1);
  extents_[static_cast<size_t>(rank_++)] = extent;
}

void Shape::insert(int axis, int64_t extent) {
  if (rank_ == kMaxRank) throw_rank_overflow(static_cast<size_t>(rank_) + 1);
  for (int i = rank_; i > axis; --i)
    extents_[static_cast<size_t>(i)] = extents_[static_cast<size_t>(i - 1)];
  extents_[static_cast<size_t>(axis)] = extent;
  ++rank_;
}

void Shape::erase(int axis) {
  for (int i = axis; i + 1 < rank_; ++i)
    extents_[static_cast<size_t>(i)] = extents_[static_cast<size_t>(i + 1)];
  --rank_;
  extents_[static_cast<size_t>(rank_)] = 0;
}

int64_t Shape::numel() const {
  int64_t count = 1;
  for (int64_t extent : *this) count *= extent;
  return count;
}

std::string Shape::to_string() const {
  std::string text = "[";
  for (int i = 0; i < rank_; ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(extents_[static_cast<size_t>(i)]);
  }
  return text + "]";
}

bool operator==(const Shape& a, const Shape& b) {
  return a.rank_ == b.rank_ && std::equal(a.begin(), a.end(), b.begin());
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides = shape;
  int64_t stride = 1;
  for (int i = shape.rank() - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= std::max<int64_t>(shape[i], 1);
  }
  return strides;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const int rank = std::max(a.rank(), b.rank());
  Shape out;
  for (int i = 0; i < rank; ++i) {
    const int ia = a.rank() - rank + i;
    const int ib = b.rank() - rank + i;
    const int64_t ea = ia >= 0 ? a[ia] : 1;
    const int64_t eb = ib >= 0 ? b[ib] : 1;
    if (ea != eb && ea != 1 && eb != 1) {
      throw_error(invalid_argument("shapes " + a.to_string() + " and " + b.to_string() +
                                   " do not broadcast (axis " + std::to_string(i) + ": " +
                                   std::to_string(ea) + " vs " + std::to_string(eb) + ")"));
    }
    out.push_back(ea == 1 ? eb : ea);
  }
  return out;
}

int normalize_axis(int axis, int rank) {
  const int normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= std::max(rank, 1)) {
    throw_error(invalid_argument("axis " + std::to_string(axis) + " is out of range for rank " +
                                 std::to_string(rank)));
  }
  return normalized;
}

}  // namespace switchyard
