// ONNX ops that pick or place elements by data-dependent indices, on host values
// (formats/onnx_ops_internal.h): TopK, GatherElements, GatherND, ScatterElements, ScatterND,
// NonZero and OneHot. The op set has no op for them; a device input is read back, so they are right
// and slower (the execution summary says "host").
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "formats/onnx_ops_internal.h"

namespace switchyard::onnx_detail {

AxisLayout layout_of(const Ints& shape, int axis) {
  AxisLayout l;
  for (int a = 0; a < static_cast<int>(shape.size()); ++a) {
    const int64_t d = shape[static_cast<size_t>(a)];
    if (a < axis) l.outer *= d;
    if (a == axis) l.extent = d;
    if (a > axis) l.inner *= d;
  }
  return l;
}

AxisLayout softmax_layout(NodeContext& c, const Ints& shape) {
  if (c.version() >= 13)
    return layout_of(shape, normalize(c, c.attr_int("axis", -1), shape.size()));
  const int axis = normalize(c, c.attr_int("axis", 1), shape.size());
  const auto middle = shape.begin() + axis;
  return {numel_of(Ints(shape.begin(), middle)), numel_of(Ints(middle, shape.end())), 1};
}
namespace {

// An index along an axis of `extent`, negative counted from the end; refused out of range.
int64_t checked_index(const NodeContext& c, int64_t index, int64_t extent) {
  if (index < -extent || index >= extent) {
    c.fail("index " + std::to_string(index) + " is out of range for extent " +
           std::to_string(extent));
  }
  return index < 0 ? index + extent : index;
}

// GatherElements' and ScatterElements' indices against data: one rank, and no larger on the axes
// other than `axis`.
void check_element_indices(const NodeContext& c, const Ints& index_shape, const Ints& data_shape,
                           int axis) {
  if (index_shape.size() != data_shape.size()) c.fail("indices must have data's rank");
  for (size_t a = 0; a < data_shape.size(); ++a) {
    if (static_cast<int>(a) != axis && index_shape[a] > data_shape[a])
      c.fail("indices are larger than data on axis " + std::to_string(a));
  }
}

// Where element e of indices points in data: e's coordinates, the axis's replaced by the index it
// holds, at data's strides.
int64_t element_target(const NodeContext& c, const HostTensor& index, int64_t e,
                       const Ints& data_shape, int axis) {
  int64_t rest = e, target = 0, stride = 1;
  for (int a = static_cast<int>(index.shape.size()) - 1; a >= 0; --a) {
    const auto u = static_cast<size_t>(a);
    int64_t coord = rest % index.shape[u];
    rest /= index.shape[u];
    if (a == axis) coord = checked_index(c, index.int_at(e), data_shape[u]);
    target += coord * stride;
    stride *= data_shape[u];
  }
  return target;
}

}  // namespace

// TopK: the k largest (or smallest) along `axis`, sorted, ties in index order. NaN is refused
// (where it sorts is not agreed on).
void host_top_k(NodeContext& c) {
  const HostTensor& x = c.host_values(0);
  const Ints k_values = c.ints(1);
  if (k_values.size() != 1) c.fail("K must hold one value");
  const int axis = normalize(c, c.attr_int("axis", -1), x.shape.size());
  const bool largest = c.attr_int("largest", 1) != 0;
  const AxisLayout l = layout_of(x.shape, axis);
  const int64_t k = k_values[0];
  if (k < 0 || k > l.extent) c.fail("K " + std::to_string(k) + " is outside [0, axis extent]");
  Ints out_shape = x.shape;
  out_shape[static_cast<size_t>(axis)] = k;
  check_host_size(c, out_shape);
  HostTensor values = HostTensor::zeros(x.type, out_shape),
             indices = HostTensor::zeros(kInt64, out_shape);
  std::vector<int64_t> order(static_cast<size_t>(l.extent));
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t i = 0; i < l.inner; ++i) {
      const auto at = [&](int64_t j) { return x.at((o * l.extent + j) * l.inner + i); };
      for (int64_t j = 0; j < l.extent; ++j) {
        if (std::isnan(at(j))) c.fail("TopK of NaN is not supported");
      }
      std::iota(order.begin(), order.end(), int64_t{0});
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return largest ? at(a) > at(b) : at(a) < at(b);
      });
      for (int64_t j = 0; j < k; ++j) {
        const auto out = static_cast<size_t>((o * k + j) * l.inner + i);
        const int64_t from = order[static_cast<size_t>(j)];
        const int64_t source = (o * l.extent + from) * l.inner + i;
        if (values.is_float())
          values.f[out] = x.f[static_cast<size_t>(source)];
        else
          values.i[out] = x.i[static_cast<size_t>(source)];
        indices.i[out] = from;
      }
    }
  }
  c.set_host(0, std::move(values));
  c.set_host(1, std::move(indices));
}

// GatherElements: out[..., j, ...] = data[..., indices[..., j, ...], ...] along `axis`, indices
// of the output's shape.
void host_gather_elements(NodeContext& c) {
  const HostTensor& data = c.host_values(0);
  const HostTensor& index = c.host_values(1);
  const int axis = normalize(c, c.attr_int("axis", 0), data.shape.size());
  check_element_indices(c, index.shape, data.shape, axis);
  HostTensor out = HostTensor::zeros(data.type, index.shape);
  for (int64_t e = 0; e < index.numel(); ++e) {
    const int64_t source = element_target(c, index, e, data.shape, axis);
    const auto ue = static_cast<size_t>(e);
    if (out.is_float())
      out.f[ue] = data.f[static_cast<size_t>(source)];
    else
      out.i[ue] = data.i[static_cast<size_t>(source)];
  }
  c.set_host(0, std::move(out));
}

// GatherND: for each index tuple of the last axis of indices (k values, negative counted from the
// end), the slice of data it names; the first batch_dims axes of data and indices pair up.
void host_gather_nd(NodeContext& c) {
  const HostTensor& data = c.host_values(0);
  const HostTensor& index = c.host_values(1);
  const int64_t batch_dims = c.attr_int("batch_dims", 0);
  const auto b = static_cast<size_t>(std::max<int64_t>(batch_dims, 0));
  if (batch_dims < 0 || index.shape.empty() || b >= index.shape.size() || b >= data.shape.size())
    c.fail("batch_dims must be 0 to min(rank(data), rank(indices)) - 1");
  for (size_t a = 0; a < b; ++a) {
    if (data.shape[a] != index.shape[a]) c.fail("the batch axes of data and indices differ");
  }
  const auto k = static_cast<size_t>(index.shape.back());
  if (k < 1 || b + k > data.shape.size())
    c.fail("indices' last extent must be 1 to rank(data) - batch_dims");
  Ints out_shape(index.shape.begin(), index.shape.end() - 1);
  out_shape.insert(out_shape.end(), data.shape.begin() + static_cast<int64_t>(b + k),
                   data.shape.end());
  check_host_size(c, out_shape);
  HostTensor out = HostTensor::zeros(data.type, out_shape);
  const Ints batch(data.shape.begin(), data.shape.begin() + static_cast<int64_t>(b));
  const Ints tail(data.shape.begin() + static_cast<int64_t>(b + k), data.shape.end());
  const int64_t slice = numel_of(tail);
  const int64_t batches = numel_of(batch);
  const int64_t per_batch_data =
      numel_of(Ints(data.shape.begin() + static_cast<int64_t>(b), data.shape.end()));
  const int64_t tuples = batches == 0 ? 0 : index.numel() / static_cast<int64_t>(k) / batches;
  int64_t written = 0;
  for (int64_t g = 0; g < batches; ++g) {
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t offset = g * per_batch_data, stride = per_batch_data;
      for (size_t j = 0; j < k; ++j) {
        const int64_t extent = data.shape[b + j];
        int64_t at =
            index.int_at((g * tuples + t) * static_cast<int64_t>(k) + static_cast<int64_t>(j));
        if (at < -extent || at >= extent)
          c.fail("index " + std::to_string(at) + " is outside [" + std::to_string(-extent) + ", " +
                 std::to_string(extent) + ")");
        if (at < 0) at += extent;
        stride /= extent;
        offset += at * stride;
      }
      for (int64_t e = 0; e < slice; ++e, ++written) {
        const auto to = static_cast<size_t>(written), from = static_cast<size_t>(offset + e);
        if (out.is_float())
          out.f[to] = data.f[from];
        else
          out.i[to] = data.i[from];
      }
    }
  }
  c.set_host(0, std::move(out));
}

namespace {

// ScatterND's and ScatterElements' reduction: none (the update replaces, the last of repeated
// indices winning, as ONNX's reference does), add or mul (version 16), max or min (version 18).
enum class Combine { kNone, kAdd, kMul, kMax, kMin };

Combine combine_of(const NodeContext& c) {
  const std::string reduction = c.attr_string("reduction", "none");
  if (reduction == "none") return Combine::kNone;
  if (reduction == "add") return Combine::kAdd;
  if (reduction == "mul") return Combine::kMul;
  if (reduction == "max") return Combine::kMax;
  if (reduction == "min") return Combine::kMin;
  c.fail("reduction " + reduction + " is not supported (none, add, mul, max, min)");
}

template <typename T>
T combined(T old, T v, Combine how) {
  switch (how) {
    case Combine::kNone:
      return v;
    case Combine::kAdd:
      return old + v;
    case Combine::kMul:
      return old * v;
    case Combine::kMax:
      return std::max(old, v);
    case Combine::kMin:
      return std::min(old, v);
  }
  return v;
}

void combine_into(HostTensor& out, int64_t at, const HostTensor& updates, int64_t from,
                  Combine how) {
  const auto o = static_cast<size_t>(at), u = static_cast<size_t>(from);
  if (out.is_float()) {
    const float v = updates.is_float() ? updates.f[u] : static_cast<float>(updates.i[u]);
    const bool nan = std::isnan(out.f[o]) || std::isnan(v);  // max and min keep a NaN (numpy's)
    out.f[o] = nan && (how == Combine::kMax || how == Combine::kMin)
                   ? std::numeric_limits<float>::quiet_NaN()
                   : combined(out.f[o], v, how);
  } else if (how == Combine::kAdd || how == Combine::kMul) {  // wrapping, as the integers do
    out.i[o] = static_cast<int64_t>(combined(static_cast<uint64_t>(out.i[o]),
                                             static_cast<uint64_t>(updates.int_at(from)), how));
  } else {
    out.i[o] = combined(out.i[o], updates.int_at(from), how);
  }
}

}  // namespace

// ScatterND: a copy of data with the slices that indices [..., k] name (negative counted from the
// end) replaced by (or combined with) updates.
void host_scatter_nd(NodeContext& c) {
  HostTensor out = c.host_values(0);
  const HostTensor& index = c.host_values(1);
  const HostTensor& updates = c.host_values(2);
  const Combine how = combine_of(c);
  if (index.shape.empty()) c.fail("indices must have rank 1 or more");
  const auto k = static_cast<size_t>(index.shape.back());
  if (k < 1 || k > out.shape.size()) c.fail("indices' last extent must be 1 to data's rank");
  int64_t slice = 1;
  for (size_t a = k; a < out.shape.size(); ++a) slice *= out.shape[a];
  const int64_t tuples = index.numel() / static_cast<int64_t>(k);
  Ints want(index.shape.begin(), index.shape.end() - 1);
  want.insert(want.end(), out.shape.begin() + static_cast<std::ptrdiff_t>(k), out.shape.end());
  if (updates.shape != want) c.fail("updates must have shape " + shape_text(want));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t base = 0;
    for (size_t a = 0; a < k; ++a) {
      const int64_t position = checked_index(
          c, index.int_at(t * static_cast<int64_t>(k) + static_cast<int64_t>(a)), out.shape[a]);
      base = base * out.shape[a] + position;
    }
    for (int64_t e = 0; e < slice; ++e)
      combine_into(out, base * slice + e, updates, t * slice + e, how);
  }
  c.set_host(0, std::move(out));
}

// ScatterElements: out[..., indices[..., j, ...], ...] = updates[..., j, ...] along `axis`.
void host_scatter_elements(NodeContext& c) {
  HostTensor out = c.host_values(0);
  const HostTensor& index = c.host_values(1);
  const HostTensor& updates = c.host_values(2);
  const Combine how = combine_of(c);
  const int axis = normalize(c, c.attr_int("axis", 0), out.shape.size());
  if (index.shape != updates.shape) c.fail("indices and updates must have one shape");
  check_element_indices(c, index.shape, out.shape, axis);
  for (int64_t e = 0; e < index.numel(); ++e)
    combine_into(out, element_target(c, index, e, out.shape, axis), updates, e, how);
  c.set_host(0, std::move(out));
}

// NonZero: the coordinates of the nonzero elements, [rank, count], in row-major order.
void host_non_zero(NodeContext& c) {
  const HostTensor& x = c.host_values(0);
  std::vector<int64_t> hits;
  for (int64_t e = 0; e < x.numel(); ++e) {
    if (x.at(e) != 0) hits.push_back(e);
  }
  const auto rank = static_cast<int64_t>(x.shape.size());
  const auto count = static_cast<int64_t>(hits.size());
  HostTensor out = HostTensor::zeros(kInt64, {rank, count});
  for (int64_t h = 0; h < count; ++h) {
    int64_t rest = hits[static_cast<size_t>(h)];
    for (int64_t a = rank - 1; a >= 0; --a) {
      const int64_t extent = x.shape[static_cast<size_t>(a)];
      out.i[static_cast<size_t>(a * count + h)] = rest % extent;
      rest /= extent;
    }
  }
  c.set_host(0, std::move(out));
}

// OneHot(indices, depth, values [off, on]): a new axis of `depth` holding on at each index
// (negative counted from the end) and off elsewhere; an index outside [-depth, depth) gives a row
// of off, as ONNX says.
void host_one_hot(NodeContext& c) {
  const HostTensor& index = c.host_values(0);
  const Ints depth_values = c.ints(1);
  const HostTensor& on_off = c.host_values(2);
  if (depth_values.size() != 1 || depth_values[0] < 1) c.fail("depth must be one value >= 1");
  if (on_off.numel() != 2) c.fail("values must hold [off, on]");
  const int64_t depth = depth_values[0];
  const int axis = normalize(c, c.attr_int("axis", -1), index.shape.size() + 1);
  Ints shape = index.shape;
  shape.insert(shape.begin() + axis, depth);
  check_host_size(c, shape);
  HostTensor out = HostTensor::zeros(on_off.type, shape);
  const AxisLayout l = layout_of(shape, axis);
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t i = 0; i < l.inner; ++i) {
      int64_t hot = index.int_at(o * l.inner + i);
      if (hot < 0) hot += depth;
      for (int64_t j = 0; j < depth; ++j) {
        const auto u = static_cast<size_t>((o * depth + j) * l.inner + i);
        const int64_t pick = j == hot ? 1 : 0;
        if (out.is_float())
          out.f[u] = on_off.f[static_cast<size_t>(pick)];
        else
          out.i[u] = on_off.i[static_cast<size_t>(pick)];
      }
    }
  }
  c.set_host(0, std::move(out));
}

}  // namespace switchyard::onnx_detail
