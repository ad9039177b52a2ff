// ONNX reductions along axes, ArgMax / ArgMin and CumSum, composed of switchyard's op set
// (formats/onnx_ops_internal.h), at every version of opsets 7 to 27.
#include <algorithm>
#include <cmath>
#include <limits>

#include "formats/onnx_ops_internal.h"
#include "switchyard/device.h"
#include "switchyard/ops.h"

namespace switchyard::onnx_detail {

// ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum
// and ReduceLogSumExp. Integers compute in f32 (exact below 2^24) and come back i64.
void device_reduce(NodeContext& c, Reduction kind) {
  const Tensor x = dev_float(c, 0);
  // The axes are an attribute before version 13 (ReduceSum) or 18 (the others), an input since.
  Ints axes = axes_of(c, 1);
  const bool keep = c.attr_int("keepdims", 1) != 0;
  if (axes.empty() && c.attr_int("noop_with_empty_axes", 0) != 0) {
    // Nothing reduced; the elementwise part still applies (ReduceSumSquare squares).
    Tensor y = x;
    if (kind == Reduction::kL1 || kind == Reduction::kL2) y = abs(x);
    if (kind == Reduction::kSumSquare) y = x * x;
    if (kind == Reduction::kLogSum) y = log(x);
    c.set_device(0, y, c.type(0));
    return;
  }
  std::vector<int> list;
  for (const int64_t a : axes) list.push_back(normalize(c, a, static_cast<size_t>(x.rank())));
  if (x.numel() == 0 &&
      (kind == Reduction::kMax || kind == Reduction::kMin || kind == Reduction::kLogSumExp)) {
    // ONNX's values for an empty set: the maximum and LogSumExp -inf, the minimum +inf.
    if (!is_float_type(c.type(0))) c.fail("an integer maximum or minimum of no elements");
    const double inf = std::numeric_limits<double>::infinity();
    c.set_device(0, full_like(sum(x, list, keep), kind == Reduction::kMin ? inf : -inf), c.type(0));
    return;
  }
  Tensor y;
  switch (kind) {
    case Reduction::kMean:
      y = mean(x, list, keep);
      break;
    case Reduction::kSum:
      y = sum(x, list, keep);
      break;
    case Reduction::kMax:
      y = amax(x, list, keep);
      break;
    case Reduction::kMin:
      y = neg(amax(neg(x), list, keep));
      break;
    case Reduction::kL1:
      y = sum(abs(x), list, keep);
      break;
    case Reduction::kL2:
      y = sqrt(sum(x * x, list, keep));
      break;
    case Reduction::kSumSquare:
      y = sum(x * x, list, keep);
      break;
    case Reduction::kLogSum:
      y = log(sum(x, list, keep));
      break;
    case Reduction::kLogSumExp: {
      // Shifted by the largest element, kept finite so that a row of -inf gives -inf and one
      // holding +inf gives +inf (not inf - inf).
      const double big = std::numeric_limits<float>::max();
      const Tensor shift = minimum(maximum(amax(x, list, true), -big), big);
      y = log(sum(exp(x - shift), list, keep));
      y = y + shift.reshape(y.shape());
      break;
    }
  }
  c.set_device(0, y, c.type(0));
}

namespace {

// n - 1, n - 2, ..., 0 on the model's device: an axis reversed by INDEX_SELECT.
Tensor reversed_positions(NodeContext& c, int64_t n) {
  std::vector<int64_t> reversed(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) reversed[static_cast<size_t>(i)] = n - 1 - i;
  return Tensor::from_host(reversed, Shape{n}, c.model().device);
}

}  // namespace

// ArgMax and ArgMin along `axis`: ties give the first index, or the last with select_last_index
// (the axis reversed, then n - 1 - index).
void device_arg(NodeContext& c, bool max) {
  Tensor x = dev_float(c, 0);
  const int axis = normalize(c, c.attr_int("axis", 0), static_cast<size_t>(x.rank()));
  const bool keep = c.attr_int("keepdims", 1) != 0, last = c.attr_int("select_last_index", 0) != 0;
  const int64_t n = x.dim(axis);
  if (n == 0) c.fail("the axis is empty");
  if (!max) x = neg(x);
  if (last) x = index_select(x, axis, reversed_positions(c, n));
  Tensor index = argmax(x, axis, keep);
  if (last) index = (static_cast<double>(n - 1) - index.to(DType::kF32)).to(DType::kI64);
  c.set_device(0, index, kInt64);
}

namespace {

// CumSum's axis (input 1, a scalar), exclusive and reverse.
struct Scan {
  int axis;
  bool exclusive, reverse;
};

Scan scan_of(NodeContext& c, size_t rank) {
  const Ints axis = c.ints(1);
  if (axis.size() != 1) c.fail("axis must be a scalar");
  return {normalize(c, axis[0], rank), c.attr_int("exclusive", 0) != 0,
          c.attr_int("reverse", 0) != 0};
}

}  // namespace

// CumSum on host values: sequential sums (integers exact, wrapping in 64 bits).
void host_cumsum(NodeContext& c) {
  HostTensor x = c.host_values(0);
  const Scan s = scan_of(c, x.shape.size());
  const int64_t n = x.shape.empty() ? 1 : x.shape[static_cast<size_t>(s.axis)];
  int64_t inner = 1;
  for (size_t a = static_cast<size_t>(s.axis) + 1; a < x.shape.size(); ++a) inner *= x.shape[a];
  const int64_t outer = n * inner == 0 ? 0 : x.numel() / (n * inner);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double f = 0;
      uint64_t u = 0;
      for (int64_t step = 0; step < n; ++step) {
        const int64_t k = s.reverse ? n - 1 - step : step;
        const auto at = static_cast<size_t>((o * n + k) * inner + i);
        if (x.is_float()) {
          const double v = x.f[at];
          x.f[at] = static_cast<float>(s.exclusive ? f : f + v);
          f += v;
        } else {
          const auto v = static_cast<uint64_t>(x.i[at]);
          x.i[at] = static_cast<int64_t>(s.exclusive ? u : u + v);
          u += v;
        }
      }
    }
  }
  c.set_host(0, std::move(x));
}

// CumSum on the device: log2(n) rounds of adding the tensor shifted by 1, 2, 4, ... along the
// axis (Hillis and Steele), so the sums are grouped otherwise than sequentially.
void device_cumsum(NodeContext& c) {
  Tensor x = dev_float(c, 0);
  const Scan s = scan_of(c, static_cast<size_t>(x.rank()));
  const int64_t n = x.dim(s.axis);
  const auto& device = c.model().device;
  const Tensor flip = s.reverse ? reversed_positions(c, n) : Tensor();
  if (s.reverse) x = index_select(x, s.axis, flip);
  const auto shifted = [&](const Tensor& t, int64_t by) {
    Ints shape = t.shape().to_vector();
    shape[static_cast<size_t>(s.axis)] = by;
    return concat({zeros(to_shape(c, shape), device), t.narrow(s.axis, 0, n - by)}, s.axis);
  };
  for (int64_t by = 1; by < n; by *= 2) x = x + shifted(x, by);
  if (s.exclusive && n > 0) x = shifted(x, 1);
  if (s.reverse) x = index_select(x, s.axis, flip);
  c.set_device(0, x, c.type(0));
}

}  // namespace switchyard::onnx_detail
