// The ONNX ops the importer runs: a host implementation for what shape subgraphs compute, and a
// device implementation on switchyard's ops for everything else. Semantics are ONNX's at opsets
// 13-17 (https://onnx.ai/onnx/operators/); where an attribute value is not supported, the node
// fails with a message naming the attribute and what is supported.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "formats/onnx_graph.h"
#include "nn/recurrent_sequence.h"
#include "switchyard/device.h"
#include "switchyard/ops.h"

namespace switchyard::onnx_detail {
namespace {

using Ints = std::vector<int64_t>;

int64_t numel_of(const Ints& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>());
}

Shape to_shape(const NodeContext& context, const Ints& extents) {
  if (extents.size() > static_cast<size_t>(Shape::kMaxRank)) {
    context.fail("rank " + std::to_string(extents.size()) + " is more than switchyard's " +
                 std::to_string(Shape::kMaxRank));
  }
  return Shape(extents);
}

void check_size(const NodeContext& context, const Ints& shape) {
  Result<int64_t> numel = checked_numel(shape, "the output");
  if (!numel.ok()) context.fail(numel.status().message());
}

// Host values are for shape computations and folded constants: at most 2^26 elements each.
constexpr int64_t kMaxHostElements = int64_t{1} << 26;

void check_host_size(const NodeContext& context, const Ints& shape) {
  check_size(context, shape);
  if (numel_of(shape) > kMaxHostElements) {
    context.fail("a host result of shape " + shape_text(shape) + " is larger than 2^26 elements");
  }
}

Tensor reshaped(const NodeContext& context, const Tensor& t, const Ints& shape) {
  return t.reshape(to_shape(context, shape));
}

// ---- host helpers -------------------------------------------------------------------------------

HostTensor host_unary(const HostTensor& x, const std::function<double(double)>& f) {
  HostTensor out = x;
  if (x.is_float()) {
    for (float& v : out.f) v = static_cast<float>(f(static_cast<double>(v)));
  } else {
    for (int64_t& v : out.i) v = static_cast<int64_t>(f(static_cast<double>(v)));
  }
  return out;
}

// Elementwise with broadcasting. `result` kUndefined: a's type.
HostTensor host_binary(NodeContext& c, const HostTensor& a, const HostTensor& b,
                       const std::function<double(double, double)>& f,
                       const std::function<int64_t(int64_t, int64_t)>& fi,
                       int32_t result = kUndefined) {
  Result<Ints> shape = broadcast(a.shape, b.shape, c.node().op);
  if (!shape.ok()) c.fail(shape.status().message());
  check_host_size(c, *shape);
  HostTensor out = HostTensor::zeros(result == kUndefined ? a.type : result, *shape);
  const BroadcastIndex ia(a.shape, *shape), ib(b.shape, *shape);
  const bool floats = a.is_float() || b.is_float();
  for (int64_t k = 0; k < out.numel(); ++k) {
    double v = 0;
    if (floats || !fi)
      v = f(a.at(ia(k)), b.at(ib(k)));
    else
      v = static_cast<double>(fi(a.int_at(ia(k)), b.int_at(ib(k))));
    if (out.is_float())
      out.f[static_cast<size_t>(k)] = static_cast<float>(v);
    else
      out.i[static_cast<size_t>(k)] = static_cast<int64_t>(v);
  }
  return out;
}

// Moves the axes of a host tensor (a general transpose).
HostTensor host_transpose(const HostTensor& x, const Ints& perm) {
  Ints shape(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) shape[k] = x.shape[static_cast<size_t>(perm[k])];
  HostTensor out = HostTensor::zeros(x.type, shape);
  Ints in_strides(x.shape.size(), 1);
  for (size_t k = x.shape.size(); k-- > 1;) in_strides[k - 1] = in_strides[k] * x.shape[k];
  Ints index(perm.size(), 0);
  for (int64_t k = 0; k < out.numel(); ++k) {
    int64_t source = 0;
    for (size_t a = 0; a < perm.size(); ++a)
      source += index[a] * in_strides[static_cast<size_t>(perm[a])];
    if (x.is_float())
      out.f[static_cast<size_t>(k)] = x.f[static_cast<size_t>(source)];
    else
      out.i[static_cast<size_t>(k)] = x.i[static_cast<size_t>(source)];
    for (size_t a = perm.size(); a-- > 0;) {
      if (++index[a] < shape[a]) break;
      index[a] = 0;
    }
  }
  return out;
}

// Copies a block [outer, count * inner] picking rows along one axis, for Gather, Slice, Concat.
HostTensor host_take(const HostTensor& x, int axis, const Ints& picks, Ints shape) {
  int64_t outer = 1, inner = 1;
  for (int a = 0; a < axis; ++a) outer *= x.shape[static_cast<size_t>(a)];
  for (size_t a = static_cast<size_t>(axis) + 1; a < x.shape.size(); ++a) inner *= x.shape[a];
  const int64_t extent = x.shape[static_cast<size_t>(axis)];
  HostTensor out = HostTensor::zeros(x.type, std::move(shape));
  size_t k = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (const int64_t p : picks) {
      const int64_t base = (o * extent + p) * inner;
      for (int64_t i = 0; i < inner; ++i, ++k) {
        if (x.is_float())
          out.f[k] = x.f[static_cast<size_t>(base + i)];
        else
          out.i[k] = x.i[static_cast<size_t>(base + i)];
      }
    }
  }
  return out;
}

// ONNX Reshape's target: 0 copies the input's extent (unless allowzero), one -1 is inferred.
Ints reshape_target(const NodeContext& c, const Ints& input, Ints target, bool allow_zero) {
  int infer = -1;
  int64_t known = 1;
  for (size_t k = 0; k < target.size(); ++k) {
    if (target[k] == 0 && !allow_zero) {
      if (k >= input.size())
        c.fail("shape " + shape_text(target) + " copies an axis the input " + shape_text(input) +
               " lacks");
      target[k] = input[k];
    }
    if (target[k] == -1) {
      if (infer >= 0) c.fail("shape " + shape_text(target) + " has more than one -1");
      infer = static_cast<int>(k);
    } else if (target[k] < 0) {
      c.fail("shape " + shape_text(target) + " has a negative extent");
    } else {
      if (target[k] != 0 && known > kMaxElements / target[k])
        c.fail("shape " + shape_text(target) + " is too large");
      known *= target[k];
    }
  }
  const int64_t total = numel_of(input);
  if (infer >= 0) {
    if (known == 0 || total % known != 0)
      c.fail("cannot reshape " + shape_text(input) + " to " + shape_text(target));
    target[static_cast<size_t>(infer)] = total / known;
  } else if (known != total) {
    c.fail("cannot reshape " + shape_text(input) + " to " + shape_text(target));
  }
  return target;
}

// The axes input (opset 13 Squeeze, Unsqueeze, ReduceSum) or attribute (ReduceMean, ReduceMax).
Ints axes_of(NodeContext& c, size_t input_index) {
  if (c.has(input_index)) return c.ints(input_index);
  return c.attr_ints("axes");
}

Ints unsqueezed_shape(NodeContext& c, const Ints& shape, Ints axes) {
  const size_t rank = shape.size() + axes.size();
  for (int64_t& a : axes) a = normalize(c, a, rank);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) c.fail("repeated axes");
  Ints out;
  size_t next = 0, a = 0;
  for (size_t k = 0; k < rank; ++k) {
    if (a < axes.size() && axes[a] == static_cast<int64_t>(k)) {
      out.push_back(1);
      ++a;
    } else {
      out.push_back(shape[next++]);
    }
  }
  return out;
}

Ints squeezed_shape(NodeContext& c, const Ints& shape, Ints axes) {
  std::vector<bool> drop(shape.size(), false);
  if (axes.empty()) {
    for (size_t k = 0; k < shape.size(); ++k) drop[k] = shape[k] == 1;
  }
  for (const int64_t a : axes) {
    const int axis = normalize(c, a, shape.size());
    if (shape[static_cast<size_t>(axis)] != 1)
      c.fail("cannot squeeze axis " + std::to_string(a) + " of " + shape_text(shape));
    drop[static_cast<size_t>(axis)] = true;
  }
  Ints out;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (!drop[k]) out.push_back(shape[k]);
  }
  return out;
}

// Slice's per-axis start, step and count after ONNX's clamping rules.
struct SliceAxis {
  int axis;
  int64_t start, step, count;
};

std::vector<SliceAxis> slice_plan(NodeContext& c, const Ints& shape) {
  const Ints starts = c.ints(1), ends = c.ints(2);
  Ints axes = c.has(3) ? c.ints(3) : Ints{};
  Ints steps = c.has(4) ? c.ints(4) : Ints{};
  if (axes.empty()) {
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    c.fail("starts, ends, axes and steps must have one length");
  }
  std::vector<SliceAxis> plan;
  for (size_t k = 0; k < starts.size(); ++k) {
    const int axis = normalize(c, axes[k], shape.size());
    const int64_t extent = shape[static_cast<size_t>(axis)];
    const int64_t step = steps[k];
    if (step == 0) c.fail("a step of 0");
    const auto clamp = [&](int64_t v, int64_t low, int64_t high) {
      if (v < 0) v = v < -extent ? -1 : v + extent;  // avoids overflow for INT64_MIN
      return std::clamp(v, low, high);
    };
    int64_t start = 0, end = 0;
    if (step > 0) {
      start = clamp(starts[k], 0, extent);
      end = clamp(ends[k], 0, extent);
    } else {
      start = clamp(starts[k], -1, extent - 1);
      end = clamp(ends[k], -1, extent - 1);
      if (starts[k] < -extent) start = -1;
      if (ends[k] < -extent) end = -1;
    }
    int64_t count = 0;
    if (step > 0 && end > start) count = (end - start - 1) / step + 1;
    if (step < 0 && start > end) count = (start - end - 1) / -std::max(step, -kMaxElements) + 1;
    plan.push_back({axis, start, step, count});
  }
  return plan;
}

// ---- host ops -----------------------------------------------------------------------------------

void host_shape(NodeContext& c) {
  const Ints& shape = c.shape(0);
  const auto rank = static_cast<int64_t>(shape.size());
  int64_t start = c.attr_int("start", 0), end = c.attr_int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  Ints values(shape.begin() + start, shape.begin() + end);
  c.set_host(0, HostTensor::ints(values, {static_cast<int64_t>(values.size())}), true);
}

void host_size(NodeContext& c) {
  c.set_host(0, HostTensor::scalar_int(numel_of(c.shape(0))), true);
}

void identity(NodeContext& c) {
  if (c.host(0) != nullptr)
    c.set_host(0, *c.host(0));
  else
    c.set_device(0, c.dev(0), c.type(0));
}

void host_gather(NodeContext& c) {
  const HostTensor& x = c.host_values(0);
  const HostTensor& idx = c.host_values(1);
  const int axis = normalize(c, c.attr_int("axis", 0), x.shape.size());
  const int64_t extent = x.shape[static_cast<size_t>(axis)];
  Ints picks(static_cast<size_t>(idx.numel()));
  for (int64_t k = 0; k < idx.numel(); ++k) {
    int64_t p = idx.int_at(k);
    if (p < -extent || p >= extent)
      c.fail("index " + std::to_string(p) + " is out of range for extent " +
             std::to_string(extent));
    picks[static_cast<size_t>(k)] = p < 0 ? p + extent : p;
  }
  Ints shape(x.shape.begin(), x.shape.begin() + axis);
  shape.insert(shape.end(), idx.shape.begin(), idx.shape.end());
  shape.insert(shape.end(), x.shape.begin() + axis + 1, x.shape.end());
  check_host_size(c, shape);
  c.set_host(0, host_take(x, axis, picks, shape));
}

void host_concat(NodeContext& c) {
  const HostTensor& first = c.host_values(0);
  const int axis = normalize(c, c.attr_int("axis", 0), first.shape.size());
  Ints shape = first.shape;
  shape[static_cast<size_t>(axis)] = 0;
  for (size_t k = 0; k < c.input_count(); ++k) {
    const HostTensor& t = c.host_values(k);
    if (t.shape.size() != shape.size()) c.fail("inputs of different ranks");
    for (size_t a = 0; a < shape.size(); ++a) {
      if (static_cast<int>(a) != axis && t.shape[a] != shape[a])
        c.fail("shapes " + shape_text(first.shape) + " and " + shape_text(t.shape) +
               " do not join");
    }
    shape[static_cast<size_t>(axis)] += t.shape[static_cast<size_t>(axis)];
  }
  check_host_size(c, shape);
  int64_t outer = 1;
  for (int a = 0; a < axis; ++a) outer *= shape[static_cast<size_t>(a)];
  HostTensor out = HostTensor::zeros(first.type, shape);
  size_t k = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t in = 0; in < c.input_count(); ++in) {
      const HostTensor& t = c.host_values(in);
      const int64_t block = t.numel() / std::max<int64_t>(outer, 1);
      for (int64_t i = 0; i < block; ++i, ++k) {
        if (out.is_float())
          out.f[k] = static_cast<float>(t.at(o * block + i));
        else
          out.i[k] = t.int_at(o * block + i);
      }
    }
  }
  c.set_host(0, std::move(out));
}

void host_reshape_like(NodeContext& c, const Ints& shape) {
  HostTensor out = c.host_values(0);
  out.shape = shape;
  c.set_host(0, std::move(out));
}

Ints flatten_shape(NodeContext& c, const Ints& shape) {
  const int axis = c.attr_int("axis", 1) == static_cast<int64_t>(shape.size())
                       ? static_cast<int>(shape.size())
                       : normalize(c, c.attr_int("axis", 1), shape.size());
  int64_t outer = 1;
  for (int a = 0; a < axis; ++a) outer *= shape[static_cast<size_t>(a)];
  return {outer, numel_of(shape) / std::max<int64_t>(outer, 1)};
}

Ints transpose_perm(NodeContext& c, size_t rank) {
  Ints perm = c.attr_ints("perm");
  if (perm.empty()) {
    for (size_t k = rank; k-- > 0;) perm.push_back(static_cast<int64_t>(k));
  }
  if (perm.size() != rank)
    c.fail("perm has " + std::to_string(perm.size()) + " axes for rank " + std::to_string(rank));
  std::vector<bool> seen(rank, false);
  for (int64_t& p : perm) {
    p = normalize(c, p, rank);
    if (seen[static_cast<size_t>(p)]) c.fail("perm repeats an axis");
    seen[static_cast<size_t>(p)] = true;
  }
  return perm;
}

void host_slice(NodeContext& c) {
  HostTensor x = c.host_values(0);
  for (const SliceAxis& s : slice_plan(c, x.shape)) {
    Ints picks;
    for (int64_t k = 0; k < s.count; ++k) picks.push_back(s.start + k * s.step);
    Ints shape = x.shape;
    shape[static_cast<size_t>(s.axis)] = s.count;
    x = host_take(x, s.axis, picks, shape);
  }
  c.set_host(0, std::move(x));
}

// Split's axis and one size per output: the split input, or equal parts. Each size >= 0, adding up
// to the axis extent.
struct SplitPlan {
  int axis;
  Ints sizes;
};

SplitPlan split_plan(NodeContext& c, const Ints& shape) {
  SplitPlan plan{normalize(c, c.attr_int("axis", 0), shape.size()), {}};
  const int64_t extent = shape[static_cast<size_t>(plan.axis)];
  if (c.output_count() == 0) c.fail("no outputs");
  plan.sizes = c.has(1) ? c.ints(1) : Ints{};
  if (plan.sizes.empty()) {
    const auto n = static_cast<int64_t>(c.output_count());
    if (extent % n != 0)
      c.fail("axis extent " + std::to_string(extent) + " does not split into " + std::to_string(n));
    plan.sizes.assign(static_cast<size_t>(n), extent / n);
  }
  const bool negative =
      std::any_of(plan.sizes.begin(), plan.sizes.end(), [](int64_t s) { return s < 0; });
  if (negative || plan.sizes.size() != c.output_count() ||
      std::accumulate(plan.sizes.begin(), plan.sizes.end(), int64_t{0}) != extent) {
    c.fail("split sizes " + shape_text(plan.sizes) + " are not " +
           std::to_string(c.output_count()) + " sizes >= 0 adding up to the axis extent " +
           std::to_string(extent));
  }
  return plan;
}

void host_split(NodeContext& c) {
  const HostTensor& x = c.host_values(0);
  const auto [axis, sizes] = split_plan(c, x.shape);
  int64_t start = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    Ints picks(static_cast<size_t>(sizes[k]));
    std::iota(picks.begin(), picks.end(), start);
    Ints shape = x.shape;
    shape[static_cast<size_t>(axis)] = sizes[k];
    c.set_host(k, host_take(x, axis, picks, shape));
    start += sizes[k];
  }
}

void host_constant_of_shape(NodeContext& c) {
  const Ints shape = c.ints(0);
  check_host_size(c, shape);
  HostTensor value = HostTensor::zeros(kFloat, {});
  if (const auto* a = c.attr("value")) {
    Result<HostTensor> decoded = decode_tensor(a->t(), "attribute value", {});
    if (!decoded.ok()) c.fail(decoded.status().message());
    if (decoded->numel() != 1) c.fail("attribute value must have one element");
    value = std::move(decoded).value();
  }
  HostTensor out = HostTensor::zeros(value.type, shape);
  if (out.is_float())
    std::fill(out.f.begin(), out.f.end(), value.f[0]);
  else
    std::fill(out.i.begin(), out.i.end(), value.i[0]);
  c.set_host(0, std::move(out));
}

void host_range(NodeContext& c) {
  const HostTensor& start = c.host_values(0);
  const double s = start.at(0), limit = c.host_values(1).at(0), delta = c.host_values(2).at(0);
  if (delta == 0 || !std::isfinite(s) || !std::isfinite(limit) || !std::isfinite(delta))
    c.fail("start, limit and delta must be finite, delta not 0");
  const double count = std::max(std::ceil((limit - s) / delta), 0.0);
  if (count > static_cast<double>(kMaxHostElements))
    c.fail("the range has more than 2^26 elements");
  HostTensor out = HostTensor::zeros(start.type, {static_cast<int64_t>(count)});
  for (int64_t k = 0; k < out.numel(); ++k) {
    if (out.is_float())
      out.f[static_cast<size_t>(k)] = static_cast<float>(s + static_cast<double>(k) * delta);
    else
      out.i[static_cast<size_t>(k)] = start.int_at(0) + k * c.host_values(2).int_at(0);
  }
  c.set_host(0, std::move(out));
}

Ints expand_shape(NodeContext& c) {
  Result<Ints> shape = broadcast(c.shape(0), c.ints(1), "Expand");
  if (!shape.ok()) c.fail(shape.status().message());
  check_size(c, *shape);
  return *shape;
}

void host_expand(NodeContext& c) {
  const HostTensor& x = c.host_values(0);
  const Ints shape = expand_shape(c);
  check_host_size(c, shape);
  HostTensor out = HostTensor::zeros(x.type, shape);
  const BroadcastIndex index(x.shape, shape);
  for (int64_t k = 0; k < out.numel(); ++k) {
    if (out.is_float())
      out.f[static_cast<size_t>(k)] = x.f[static_cast<size_t>(index(k))];
    else
      out.i[static_cast<size_t>(k)] = x.i[static_cast<size_t>(index(k))];
  }
  c.set_host(0, std::move(out));
}

void host_where(NodeContext& c) {
  const HostTensor& cond = c.host_values(0);
  const HostTensor& x = c.host_values(1);
  const HostTensor& y = c.host_values(2);
  Result<Ints> shape = broadcast(cond.shape, x.shape, "Where");
  if (shape.ok()) shape = broadcast(*shape, y.shape, "Where");
  if (!shape.ok()) c.fail(shape.status().message());
  check_host_size(c, *shape);
  HostTensor out = HostTensor::zeros(x.type, *shape);
  const BroadcastIndex ic(cond.shape, *shape), ix(x.shape, *shape), iy(y.shape, *shape);
  for (int64_t k = 0; k < out.numel(); ++k) {
    const bool pick = cond.at(ic(k)) != 0;
    if (out.is_float())
      out.f[static_cast<size_t>(k)] = static_cast<float>(pick ? x.at(ix(k)) : y.at(iy(k)));
    else
      out.i[static_cast<size_t>(k)] = pick ? x.int_at(ix(k)) : y.int_at(iy(k));
  }
  c.set_host(0, std::move(out));
}

int32_t cast_target(NodeContext& c) {
  const auto to = static_cast<int32_t>(c.attr_int("to", kUndefined));
  if (!is_supported_type(to)) c.fail("cast to " + elem_type_name(to) + " is not supported");
  return to;
}

void host_cast(NodeContext& c) {
  const HostTensor& x = c.host_values(0);
  const int32_t to = cast_target(c);
  HostTensor out = HostTensor::zeros(to, x.shape);
  for (int64_t k = 0; k < x.numel(); ++k) {
    const double v = x.at(k);
    if (out.is_float())
      out.f[static_cast<size_t>(k)] = static_cast<float>(v);
    else if (to == kBool)
      out.i[static_cast<size_t>(k)] = v != 0 ? 1 : 0;
    else if (!x.is_float())
      out.i[static_cast<size_t>(k)] = x.i[static_cast<size_t>(k)];
    else
      out.i[static_cast<size_t>(k)] =
          std::isfinite(v) && std::fabs(v) < 9.0e18 ? static_cast<int64_t>(v) : 0;
  }
  c.set_host(0, std::move(out));
}

void host_trilu(NodeContext& c) {
  HostTensor x = c.host_values(0);
  if (x.shape.size() < 2) c.fail("the input needs rank 2 or more");
  const int64_t k = c.has(1) ? c.ints(1).at(0) : 0;
  const bool upper = c.attr_int("upper", 1) != 0;
  const int64_t rows = x.shape[x.shape.size() - 2], cols = x.shape.back();
  for (int64_t e = 0; e < x.numel(); ++e) {
    const int64_t j = e % cols, i = (e / cols) % rows;
    const bool keep = upper ? j - i >= k : j - i <= k;
    if (keep) continue;
    if (x.is_float())
      x.f[static_cast<size_t>(e)] = 0;
    else
      x.i[static_cast<size_t>(e)] = 0;
  }
  c.set_host(0, std::move(x));
}

// ---- device helpers -----------------------------------------------------------------------------

// Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7), composed of the op set.
Tensor erf_composed(const Tensor& x) {
  const Tensor ax = abs(x);
  const Tensor t = pow(1.0 + ax * 0.3275911, -1.0);
  Tensor poly = t * 1.061405429 + -1.453152027;
  poly = poly * t + 1.421413741;
  poly = poly * t + -0.284496736;
  poly = poly * t + 0.254829592;
  poly = poly * t;
  const Tensor y = 1.0 - poly * exp(neg(x * x));
  return sign(x) * y;
}

// A binary op where one side may be a host scalar (applied as a scalar op, no upload).
void device_binary(NodeContext& c, Tensor (*both)(const Tensor&, const Tensor&),
                   Tensor (*scalar)(const Tensor&, double), bool commutes) {
  double s = 0;
  if (scalar != nullptr && c.host(0) == nullptr && c.host_scalar(1, s) &&
      c.shape(1).size() <= c.shape(0).size()) {
    c.set_device(0, scalar(c.dev(0), s), c.type(0));
    return;
  }
  if (scalar != nullptr && commutes && c.host(1) == nullptr && c.host_scalar(0, s) &&
      c.shape(0).size() <= c.shape(1).size()) {
    c.set_device(0, scalar(c.dev(1), s), c.type(1));
    return;
  }
  c.set_device(0, both(c.dev(0), c.dev(1)), c.type(0) == kBool ? c.type(1) : c.type(0));
}

Tensor t_add(const Tensor& a, const Tensor& b) {
  return add(a, b);
}
Tensor t_sub(const Tensor& a, const Tensor& b) {
  return sub(a, b);
}
Tensor t_mul(const Tensor& a, const Tensor& b) {
  return mul(a, b);
}
Tensor t_div(const Tensor& a, const Tensor& b) {
  return div(a, b);
}
Tensor t_pow(const Tensor& a, const Tensor& b) {
  return pow(a, b);
}
Tensor t_max(const Tensor& a, const Tensor& b) {
  return maximum(a, b);
}
Tensor t_min(const Tensor& a, const Tensor& b) {
  return minimum(a, b);
}
Tensor s_add(const Tensor& a, double b) {
  return add(a, b);
}
Tensor s_sub(const Tensor& a, double b) {
  return sub(a, b);
}
Tensor s_mul(const Tensor& a, double b) {
  return mul(a, b);
}
Tensor s_div(const Tensor& a, double b) {
  return div(a, b);
}
Tensor s_pow(const Tensor& a, double b) {
  return pow(a, b);
}
Tensor s_max(const Tensor& a, double b) {
  return maximum(a, b);
}
Tensor s_min(const Tensor& a, double b) {
  return minimum(a, b);
}

// A float device tensor of a value (integers cast), for ops that compute in f32.
Tensor dev_float(NodeContext& c, size_t k) {
  Tensor t = c.dev(k);
  return is_floating(t.dtype()) ? t : t.to(DType::kF32);
}

// Host values with +-inf replaced by +-FLT_MAX: Where composes c * x + (1 - c) * y, where an
// infinite branch would give NaN (0 * inf); softmax treats -FLT_MAX as it treats -inf.
Tensor finite_branch(NodeContext& c, size_t k) {
  const HostTensor* h = c.host(k);
  if (h == nullptr || !h->is_float()) return dev_float(c, k);
  bool infinite = false;
  for (const float v : h->f) infinite = infinite || std::isinf(v);
  if (!infinite) return dev_float(c, k);
  std::vector<float> values = h->f;
  for (float& v : values) {
    if (std::isinf(v))
      v = v > 0 ? std::numeric_limits<float>::max() : -std::numeric_limits<float>::max();
  }
  return Tensor::from_host(values, to_shape(c, h->shape), c.model().device);
}

// ---- device ops ---------------------------------------------------------------------------------

void device_matmul(NodeContext& c) {
  Tensor a = dev_float(c, 0), b = dev_float(c, 1);
  if (a.rank() > 2 && b.rank() == 2) {  // a shared matrix: fold a's leading axes into rows
    Ints shape = a.shape().to_vector();
    const Tensor y = matmul(a.reshape(Shape{-1, shape.back()}), b);
    shape.back() = b.dim(1);
    c.set_device(0, reshaped(c, y, shape), kFloat);
    return;
  }
  const bool vec_a = a.rank() == 1, vec_b = b.rank() == 1;
  if (vec_a) a = a.unsqueeze(0);
  if (vec_b) b = b.unsqueeze(1);
  Tensor y = matmul(a, b);
  if (vec_a) y = y.squeeze(-2);
  if (vec_b) y = y.squeeze(-1);
  c.set_device(0, y, kFloat);
}

struct LinearWeights {
  Tensor weight, bias;
};

// x @ weight^T + bias with x's leading axes folded into rows: one [rows, K] product, whatever
// x's strides (a [T, B, E] view of a transposed sequence would otherwise be T products of B rows).
Tensor folded_linear(const NodeContext& c, const Tensor& x, const Tensor& weight,
                     const Tensor& bias) {
  if (x.rank() <= 2) return linear(x, weight, bias);
  Ints shape = x.shape().to_vector();
  const Tensor y = linear(x.reshape(Shape{-1, shape.back()}), weight, bias);
  shape.back() = weight.dim(0);
  return reshaped(c, y, shape);
}

// MatMul + Add fused at load: x @ W + b with W [K, N] kept transposed as [N, K].
void device_linear(NodeContext& c) {
  auto w = c.cached<LinearWeights>("linear", [&] {
    const HostTensor& weight = *c.host(1);
    auto out = std::make_shared<LinearWeights>();
    const HostTensor t = host_transpose(weight, {1, 0});
    out->weight = Tensor::from_host(t.f, to_shape(c, t.shape), c.model().device);
    out->bias = c.dev(2);
    return out;
  });
  c.set_device(0, folded_linear(c, dev_float(c, 0), w->weight, w->bias), kFloat);
}

void device_gemm(NodeContext& c) {
  const float alpha = c.attr_float("alpha", 1.0F), beta = c.attr_float("beta", 1.0F);
  const bool ta = c.attr_int("transA", 0) != 0, tb = c.attr_int("transB", 0) != 0;
  const Tensor a = dev_float(c, 0), b = dev_float(c, 1);
  if (a.rank() != 2 || b.rank() != 2) c.fail("A and B must be matrices");
  const bool bias_vector = c.has(2) && c.shape(2).size() == 1;
  if (alpha == 1.0F && beta == 1.0F && !ta && tb && (!c.has(2) || bias_vector)) {
    c.set_device(0, linear(a, b, c.has(2) ? dev_float(c, 2) : Tensor()), kFloat);
    return;
  }
  Tensor y = matmul(a, b, ta, tb);
  if (alpha != 1.0F) y = y * static_cast<double>(alpha);
  if (c.has(2)) {
    Tensor bias = dev_float(c, 2);
    if (beta != 1.0F) bias = bias * static_cast<double>(beta);
    y = y + bias;
  }
  c.set_device(0, y, kFloat);
}

// Spatial attributes of Conv and the pools, for 1-D or 2-D windows.
struct Window {
  int kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  bool one_d = false;
};

Window window_of(NodeContext& c, const Ints& x_shape, Ints kernel) {
  Window w;
  const size_t spatial = x_shape.size() - 2;
  if (spatial != 1 && spatial != 2)
    c.fail("only 1-D and 2-D windows are supported, got input " + shape_text(x_shape));
  w.one_d = spatial == 1;
  if (kernel.empty()) kernel = c.attr_ints("kernel_shape");
  if (kernel.size() != spatial)
    c.fail("kernel_shape must have " + std::to_string(spatial) + " values");
  Ints strides = c.attr_ints("strides"), dilations = c.attr_ints("dilations"),
       pads = c.attr_ints("pads");
  if (strides.empty()) strides.assign(spatial, 1);
  if (dilations.empty()) dilations.assign(spatial, 1);
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "VALID" || (auto_pad == "NOTSET" && pads.empty())) {
    pads.assign(spatial * 2, 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    pads.assign(spatial * 2, 0);
    for (size_t k = 0; k < spatial; ++k) {
      const int64_t in = x_shape[2 + k], out = (in + strides[k] - 1) / strides[k];
      const int64_t total =
          std::max<int64_t>((out - 1) * strides[k] + (kernel[k] - 1) * dilations[k] + 1 - in, 0);
      if (total % 2 != 0)
        c.fail("auto_pad " + auto_pad + " needs uneven padding here, which is not supported");
      pads[k] = pads[k + spatial] = total / 2;
    }
  } else if (auto_pad != "NOTSET") {
    c.fail("auto_pad " + auto_pad + " is not supported");
  }
  if (strides.size() != spatial || dilations.size() != spatial || pads.size() != spatial * 2) {
    c.fail("strides, dilations and pads do not fit the kernel");
  }
  for (size_t k = 0; k < spatial; ++k) {
    if (pads[k] != pads[k + spatial])
      c.fail("asymmetric pads " + shape_text(pads) + " are not supported");
    for (const int64_t v : {kernel[k], strides[k], dilations[k]}) {
      if (v < 1 || v > 1 << 20)
        c.fail("kernel_shape, strides and dilations must be between 1 and 2^20");
    }
    if (pads[k] < 0 || pads[k] > 1 << 20) c.fail("pads must be between 0 and 2^20");
  }
  const auto at = [&](const Ints& v, size_t k) { return static_cast<int>(v[k]); };
  if (w.one_d) {
    w.kw = at(kernel, 0), w.sw = at(strides, 0), w.pw = at(pads, 0), w.dw = at(dilations, 0);
  } else {
    w.kh = at(kernel, 0), w.kw = at(kernel, 1), w.sh = at(strides, 0), w.sw = at(strides, 1);
    w.ph = at(pads, 0), w.pw = at(pads, 1), w.dh = at(dilations, 0), w.dw = at(dilations, 1);
  }
  return w;
}

Tensor as_2d(const Tensor& x, bool one_d) {
  return one_d ? x.unsqueeze(2) : x;
}
Tensor from_2d(const Tensor& y, bool one_d) {
  return one_d ? y.squeeze(2) : y;
}

// Conv, and switchyard.Conv (fuse_conv): the same convolution with the fused node's epilogue.
void device_conv(NodeContext& c) {
  const Tensor x = dev_float(c, 0), weight = dev_float(c, 1);
  const Tensor bias = c.has(2) ? dev_float(c, 2) : Tensor();
  const Ints& ws = c.shape(1);
  if (ws.size() < 3 || x.rank() != static_cast<int>(ws.size()))
    c.fail("input and weight ranks differ or are below 3");
  const Window w = window_of(c, x.shape().to_vector(), Ints(ws.begin() + 2, ws.end()));
  const int64_t groups = c.attr_int("group", 1);
  const int64_t channels = x.dim(1), out_channels = ws[0];
  if (groups < 1 || channels % groups != 0 || out_channels % groups != 0 ||
      ws[1] * groups != channels) {
    c.fail("group " + std::to_string(groups) + " does not fit " + std::to_string(channels) +
           " input channels and weight " + shape_text(ws));
  }
  Conv2dOptions options;
  options.stride_h = w.sh, options.stride_w = w.sw, options.pad_h = w.ph, options.pad_w = w.pw;
  options.dilation_h = w.dh, options.dilation_w = w.dw;
  options.groups = static_cast<int>(groups);
  // An initializer's device copy belongs to the model and nothing writes it.
  options.constant_weight = c.host(1) != nullptr && c.host(1)->is_float();
  // 1-D: [N, C, L] runs as [N, C, 1, L] with a 1 x K kernel.
  const Node& node = c.node();
  if (node.op != "switchyard.Conv") {
    const Tensor y = conv2d(as_2d(x, w.one_d), as_2d(weight, w.one_d), bias, options);
    c.set_device(0, from_2d(y, w.one_d), kFloat);
    return;
  }
  ConvEpilogue epilogue;
  epilogue.activation = node.activation;
  epilogue.low = node.low;
  epilogue.high = node.high;
  Tensor residual = node.residual ? dev_float(c, 3) : Tensor();
  if (residual.defined() && residual.rank() > x.rank()) {
    // The Add broadcasts the convolution's output up to a higher rank: the ops one by one.
    epilogue.residual = residual;
    const Tensor y =
        from_2d(conv2d(as_2d(x, w.one_d), as_2d(weight, w.one_d), bias, options), w.one_d);
    c.set_device(0, conv_epilogue(y, epilogue), kFloat);
    return;
  }
  // [N, C, L] (or any shape that broadcasts to it) gets the 2-D form's H axis before L.
  if (residual.defined() && w.one_d && residual.rank() >= 1) {
    residual = residual.unsqueeze(residual.rank() - 1);
  }
  epilogue.residual = residual;
  const Tensor y = conv2d_fused(as_2d(x, w.one_d), as_2d(weight, w.one_d), bias, options, epilogue);
  c.set_device(0, from_2d(y, w.one_d), kFloat);
}

void device_pool(NodeContext& c, bool max) {
  if (c.output_used(1)) c.fail("the Indices output is not supported");
  const Tensor x = dev_float(c, 0);
  const Window w = window_of(c, x.shape().to_vector(), {});
  if (w.dh != 1 || w.dw != 1) c.fail("dilations other than 1 are not supported");
  Pool2dOptions options;
  options.kernel_h = w.kh, options.kernel_w = w.kw, options.stride_h = w.sh,
  options.stride_w = w.sw;
  options.pad_h = w.ph, options.pad_w = w.pw;
  options.count_include_pad = c.attr_int("count_include_pad", 0) != 0;
  if (c.attr_int("ceil_mode", 0) != 0) {
    // Ceil mode changes the output only where a last partial window would start inside the input.
    const Ints& s = c.shape(0);
    const auto differs = [](int64_t in, int k, int st, int p) {
      const int64_t span = in + 2 * p - k;
      return span >= 0 && span % st != 0;
    };
    if ((!w.one_d && differs(s[2], w.kh, w.sh, w.ph)) || differs(s.back(), w.kw, w.sw, w.pw)) {
      c.fail("ceil_mode 1 with a partial last window is not supported");
    }
  }
  if (!max && w.ph + w.pw > 0 && !options.count_include_pad) {
    c.fail("padding with count_include_pad 0 is not supported");
  }
  const Tensor x2 = as_2d(x, w.one_d);
  const Tensor y = max ? max_pool2d(x2, options) : avg_pool2d(x2, options);
  c.set_device(0, from_2d(y, w.one_d), kFloat);
}

void device_global_pool(NodeContext& c, bool max) {
  const Tensor x = dev_float(c, 0);
  std::vector<int> axes;
  for (int a = 2; a < x.rank(); ++a) axes.push_back(a);
  c.set_device(0, max ? amax(x, axes, true) : mean(x, axes, true), kFloat);
}

void device_pad(NodeContext& c) {
  const std::string mode = c.attr_string("mode", "constant");
  if (mode != "constant") c.fail("mode " + mode + " is not supported (constant)");
  const Tensor x = dev_float(c, 0);
  const Ints pads = c.ints(1);
  double value = 0;
  if (c.has(2) && !c.host_scalar(2, value)) c.fail("constant_value must be a constant");
  Ints axes = c.has(3) ? c.ints(3) : Ints{};
  if (axes.empty()) {
    for (int a = 0; a < x.rank(); ++a) axes.push_back(a);
  }
  if (pads.size() != axes.size() * 2) c.fail("pads must have two values per axis");
  Tensor y = x;
  for (size_t k = 0; k < axes.size(); ++k) {
    const int axis = normalize(c, axes[k], static_cast<size_t>(x.rank()));
    const int64_t before = pads[k], after = pads[k + axes.size()];
    if (before < 0 || after < 0) c.fail("negative pads are not supported");
    if (before == 0 && after == 0) continue;
    std::vector<Tensor> parts;
    const auto block = [&](int64_t n) {
      Ints shape = y.shape().to_vector();
      shape[static_cast<size_t>(axis)] = n;
      check_size(c, shape);
      return full(to_shape(c, shape), value, c.model().device);
    };
    if (before > 0) parts.push_back(block(before));
    parts.push_back(y);
    if (after > 0) parts.push_back(block(after));
    y = concat(parts, axis);
  }
  c.set_device(0, y, kFloat);
}

struct AffineWeights {
  Tensor scale, shift;
};

void device_batch_norm(NodeContext& c) {
  if (c.attr_int("training_mode", 0) != 0)
    c.fail("training_mode 1 is not supported (inference only)");
  for (size_t k = 1; k < 5; ++k) {
    if (c.host(k) == nullptr) c.fail("scale, bias, mean and variance must be constants");
  }
  const Ints& xs = c.shape(0);
  if (xs.size() < 2) c.fail("the input needs a channel axis");
  const float epsilon = c.attr_float("epsilon", 1e-5F);
  auto w = c.cached<AffineWeights>("batchnorm" + std::to_string(xs.size()), [&] {
    const HostTensor &scale = *c.host(1), &bias = *c.host(2), &mean_t = *c.host(3),
                     &var = *c.host(4);
    const int64_t channels = xs[1];
    for (const HostTensor* t : {&scale, &bias, &mean_t, &var}) {
      if (t->numel() != channels)
        c.fail("parameters must have one value per channel (" + std::to_string(channels) + ")");
    }
    std::vector<float> a(static_cast<size_t>(channels)), b(static_cast<size_t>(channels));
    for (int64_t k = 0; k < channels; ++k) {
      const double s = scale.at(k) / std::sqrt(var.at(k) + static_cast<double>(epsilon));
      a[static_cast<size_t>(k)] = static_cast<float>(s);
      b[static_cast<size_t>(k)] = static_cast<float>(bias.at(k) - mean_t.at(k) * s);
    }
    Ints shape(xs.size() - 1, 1);
    shape[0] = channels;
    auto out = std::make_shared<AffineWeights>();
    out->scale = Tensor::from_host(a, to_shape(c, shape), c.model().device);
    out->shift = Tensor::from_host(b, to_shape(c, shape), c.model().device);
    return out;
  });
  c.set_device(0, dev_float(c, 0) * w->scale + w->shift, kFloat);
}

void device_layer_norm(NodeContext& c) {
  if (c.output_used(1) || c.output_used(2))
    c.fail("the Mean and InvStdDev outputs are not supported");
  const Tensor x = dev_float(c, 0);
  const int axis = normalize(c, c.attr_int("axis", -1), static_cast<size_t>(x.rank()));
  const Ints normalized(c.shape(0).begin() + axis, c.shape(0).end());
  if (c.shape(1) != normalized) {
    c.fail("Scale " + shape_text(c.shape(1)) + " must have the normalized shape " +
           shape_text(normalized));
  }
  Tensor beta = c.has(2) ? dev_float(c, 2) : zeros(to_shape(c, normalized), c.model().device);
  if (beta.shape().to_vector() != normalized)
    c.fail("B must have the normalized shape " + shape_text(normalized));
  c.set_device(0,
               layer_norm(x, dev_float(c, 1), beta, x.rank() - axis,
                          static_cast<double>(c.attr_float("epsilon", 1e-5F))),
               kFloat);
}

void device_reduce(NodeContext& c, int kind) {  // 0 mean, 1 sum, 2 max
  const Tensor x = dev_float(c, 0);
  Ints axes = kind == 1 ? axes_of(c, 1) : axes_of(c, 99);
  const bool keep = c.attr_int("keepdims", 1) != 0;
  if (axes.empty() && kind == 1 && c.attr_int("noop_with_empty_axes", 0) != 0) {
    c.set_device(0, x, kFloat);
    return;
  }
  std::vector<int> list;
  for (const int64_t a : axes) list.push_back(normalize(c, a, static_cast<size_t>(x.rank())));
  const Tensor y = kind == 0   ? mean(x, list, keep)
                   : kind == 1 ? sum(x, list, keep)
                               : amax(x, list, keep);
  c.set_device(0, y, kFloat);
}

void device_gather(NodeContext& c) {
  const Tensor data = c.dev(0);
  const int axis = normalize(c, c.attr_int("axis", 0), static_cast<size_t>(data.rank()));
  const int64_t extent = data.dim(axis);
  Tensor indices;
  Ints index_shape = c.shape(1);
  if (const HostTensor* h = c.host(1)) {
    std::vector<int64_t> picks(static_cast<size_t>(h->numel()));
    for (int64_t k = 0; k < h->numel(); ++k) {
      int64_t p = h->int_at(k);
      if (p < -extent || p >= extent)
        c.fail("index " + std::to_string(p) + " is out of range for extent " +
               std::to_string(extent));
      picks[static_cast<size_t>(k)] = p < 0 ? p + extent : p;
    }
    indices = Tensor::from_host(picks, Shape{static_cast<int64_t>(picks.size())}, c.model().device);
  } else {
    indices = c.dev(1);
    if (is_floating(indices.dtype())) c.fail("indices must be integers");
    indices = indices.reshape(Shape{indices.numel()});
  }
  Tensor y = index_select(data, axis, indices);
  Ints shape(c.shape(0).begin(), c.shape(0).begin() + axis);
  shape.insert(shape.end(), index_shape.begin(), index_shape.end());
  shape.insert(shape.end(), c.shape(0).begin() + axis + 1, c.shape(0).end());
  c.set_device(0, reshaped(c, y, shape), c.type(0));
}

void device_slice(NodeContext& c) {
  Tensor x = c.dev(0);
  for (const SliceAxis& s : slice_plan(c, c.shape(0))) {
    if (s.step == 1) {
      x = x.narrow(s.axis, s.start, s.count);
    } else {
      std::vector<int64_t> picks;
      for (int64_t k = 0; k < s.count; ++k) picks.push_back(s.start + k * s.step);
      x = index_select(x, s.axis, Tensor::from_host(picks, Shape{s.count}, c.model().device));
    }
  }
  c.set_device(0, x, c.type(0));
}

void device_split(NodeContext& c) {
  const Tensor x = c.dev(0);
  const auto [axis, sizes] = split_plan(c, c.shape(0));
  int64_t start = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    c.set_device(k, x.narrow(axis, start, sizes[k]), c.type(0));
    start += sizes[k];
  }
}

void device_concat(NodeContext& c) {
  std::vector<Tensor> parts;
  for (size_t k = 0; k < c.input_count(); ++k) parts.push_back(c.dev(k));
  if (parts.empty()) c.fail("no inputs");
  const int axis = normalize(c, c.attr_int("axis", 0), static_cast<size_t>(parts[0].rank()));
  c.set_device(0, concat(parts, axis), c.type(0));
}

void device_where(NodeContext& c) {
  const Tensor cond = dev_float(c, 0);
  const Tensor x = finite_branch(c, 1), y = finite_branch(c, 2);
  c.set_device(0, cond * x + (1.0 - cond) * y, c.type(1));
}

void device_cast(NodeContext& c) {
  const int32_t to = cast_target(c);
  const Tensor x = c.dev(0);
  if (to == kBool) {
    const Tensor f = is_floating(x.dtype()) ? x : x.to(DType::kF32);
    c.set_device(0, 1.0 - equal(f, zeros_like(f)), kBool);
  } else if (is_float_type(to)) {
    c.set_device(0, is_floating(x.dtype()) ? x : x.to(DType::kF32), kFloat);
  } else {
    c.set_device(0, x.dtype() == DType::kI64 ? x : x.to(DType::kI64), to);
  }
}

void device_trilu(NodeContext& c) {
  const Tensor x = dev_float(c, 0);
  if (x.rank() < 2) c.fail("the input needs rank 2 or more");
  const int64_t k = c.has(1) ? c.ints(1).at(0) : 0;
  const bool upper = c.attr_int("upper", 1) != 0;
  const int64_t rows = x.dim(-2), cols = x.dim(-1);
  std::vector<float> mask(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j)
      mask[static_cast<size_t>(i * cols + j)] = (upper ? j - i >= k : j - i <= k) ? 1.0F : 0.0F;
  }
  c.set_device(0, x * Tensor::from_host(mask, Shape{rows, cols}, c.model().device), kFloat);
}

// ---- recurrent ops ------------------------------------------------------------------------------

struct RecurrentPack {
  std::vector<detail::RecurrentWeights> directions;
};

// ONNX gate blocks reordered to PyTorch's (LSTM iofc -> ifco, GRU zrh -> rzh) for one direction.
std::vector<float> reorder_gates(const HostTensor& t, int64_t direction, int64_t rows_per_gate,
                                 int64_t row_width, const std::vector<int>& order) {
  const int64_t gates = static_cast<int64_t>(order.size());
  const int64_t block = rows_per_gate * row_width;
  std::vector<float> out(static_cast<size_t>(gates * block));
  const int64_t base = direction * gates * block;
  for (int64_t g = 0; g < gates; ++g) {
    const int64_t from = base + order[static_cast<size_t>(g)] * block;
    std::copy(t.f.begin() + from, t.f.begin() + from + block, out.begin() + g * block);
  }
  return out;
}

void device_recurrent(NodeContext& c, bool lstm) {
  const int64_t gates = lstm ? 4 : 3;
  const std::string direction = c.attr_string("direction", "forward");
  if (direction != "forward" && direction != "bidirectional" && direction != "reverse")
    c.fail("direction " + direction + " is not known");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  if (c.attr_int("layout", 0) != 0)
    c.fail("layout 1 is not supported (layout 0: [seq, batch, features])");
  if (c.attr("clip") != nullptr) c.fail("clip is not supported");
  if (lstm && c.attr_int("input_forget", 0) != 0) c.fail("input_forget 1 is not supported");
  if (!lstm && c.attr_int("linear_before_reset", 0) != 1) {
    c.fail("linear_before_reset 0 is not supported (PyTorch's GRU exports 1)");
  }
  const std::vector<std::string> activations = c.attr_strings("activations");
  const std::vector<std::string> standard =
      lstm ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
           : std::vector<std::string>{"Sigmoid", "Tanh"};
  for (size_t k = 0; k < activations.size(); ++k) {
    if (activations[k] != standard[k % standard.size()])
      c.fail("activation " + activations[k] + " is not supported");
  }
  if (!c.attr_floats("activation_alpha").empty() || !c.attr_floats("activation_beta").empty()) {
    c.fail("activation_alpha and activation_beta are not supported");
  }
  if (lstm && c.has(7)) c.fail("peephole weights (P) are not supported");
  if (c.host(1) == nullptr || c.host(2) == nullptr || (c.has(3) && c.host(3) == nullptr)) {
    c.fail("W, R and B must be constants");
  }
  const Tensor x = dev_float(c, 0).contiguous();  // [T, B, I]
  if (x.rank() != 3) c.fail("X must be [seq, batch, input], got " + x.shape().to_string());
  const int64_t steps = x.dim(0), batch = x.dim(1), input = x.dim(2);
  if (steps < 1 || batch < 1) {
    c.fail("X " + x.shape().to_string() + " has no steps or no sequences: " +
           (lstm ? "LSTM" : "GRU") + " needs a sequence of length >= 1 and batch >= 1");
  }
  const int64_t hidden = c.attr_int("hidden_size", c.shape(2).empty() ? 0 : c.shape(2).back());
  if (c.shape(1) != Ints{dirs, gates * hidden, input}) {
    c.fail("W " + shape_text(c.shape(1)) + " must be " + shape_text({dirs, gates * hidden, input}));
  }
  if (c.shape(2) != Ints{dirs, gates * hidden, hidden}) {
    c.fail("R " + shape_text(c.shape(2)) + " must be " +
           shape_text({dirs, gates * hidden, hidden}));
  }
  if (c.has(3) && c.shape(3) != Ints{dirs, 2 * gates * hidden}) {
    c.fail("B " + shape_text(c.shape(3)) + " must be " + shape_text({dirs, 2 * gates * hidden}));
  }
  if (c.has(4)) {
    const Ints lens = c.ints(4);
    for (const int64_t len : lens) {
      if (len != steps) c.fail("sequence_lens other than the full length are not supported");
    }
  }
  auto pack = c.cached<RecurrentPack>("rnn", [&] {
    const std::vector<int> order = lstm ? std::vector<int>{0, 2, 3, 1} : std::vector<int>{1, 0, 2};
    auto out = std::make_shared<RecurrentPack>();
    const auto& device = c.model().device;
    for (int64_t d = 0; d < dirs; ++d) {
      detail::RecurrentWeights w;
      w.w_ih = Tensor::from_host(reorder_gates(*c.host(1), d, hidden, input, order),
                                 Shape{gates * hidden, input}, device);
      w.w_hh = Tensor::from_host(reorder_gates(*c.host(2), d, hidden, hidden, order),
                                 Shape{gates * hidden, hidden}, device);
      if (c.has(3)) {
        const HostTensor& b = *c.host(3);
        HostTensor wb = HostTensor::zeros(kFloat, {dirs, gates * hidden, 1});
        HostTensor rb = wb;
        for (int64_t dd = 0; dd < dirs; ++dd) {
          for (int64_t k = 0; k < gates * hidden; ++k) {
            wb.f[static_cast<size_t>(dd * gates * hidden + k)] =
                b.f[static_cast<size_t>(dd * 2 * gates * hidden + k)];
            rb.f[static_cast<size_t>(dd * gates * hidden + k)] =
                b.f[static_cast<size_t>(dd * 2 * gates * hidden + gates * hidden + k)];
          }
        }
        w.b_ih = Tensor::from_host(reorder_gates(wb, d, hidden, 1, order), Shape{gates * hidden},
                                   device);
        w.b_hh = Tensor::from_host(reorder_gates(rb, d, hidden, 1, order), Shape{gates * hidden},
                                   device);
      }
      out->directions.push_back(std::move(w));
    }
    return out;
  });
  const auto initial = [&](size_t k, int64_t d) {
    if (!c.has(k)) return zeros(Shape{batch, hidden}, c.model().device);
    const Tensor s = dev_float(c, k);
    if (s.shape() != Shape{dirs, batch, hidden})
      c.fail("initial state " + s.shape().to_string() + " must be " +
             Shape{dirs, batch, hidden}.to_string());
    return s.narrow(0, d, 1).reshape(Shape{batch, hidden}).contiguous();
  };
  std::vector<Tensor> ys, hs, cs;
  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const detail::RecurrentWeights& w = pack->directions[static_cast<size_t>(d)];
    Tensor y;
    if (lstm) {
      const Tensor packed = detail::lstm_sequence(x, initial(5, d), initial(6, d), w, reverse);
      y = packed.narrow(0, 0, steps);
      cs.push_back(packed.narrow(0, steps, 1));
    } else {
      y = detail::gru_sequence(x, initial(5, d), w, reverse);
    }
    ys.push_back(y.unsqueeze(1));                           // [T, 1, B, H]
    hs.push_back(y.narrow(0, reverse ? 0 : steps - 1, 1));  // [1, B, H]
  }
  c.set_device(0, dirs == 1 ? ys[0] : concat(ys, 1), kFloat);
  c.set_device(1, dirs == 1 ? hs[0] : concat(hs, 0), kFloat);
  if (lstm) c.set_device(2, dirs == 1 ? cs[0] : concat(cs, 0), kFloat);
}

// ---- the table ----------------------------------------------------------------------------------

using Fn = std::function<void(NodeContext&)>;

Fn unary_host(double (*f)(double)) {
  return [f](NodeContext& c) { c.set_host(0, host_unary(c.host_values(0), f)); };
}
Fn unary_device(Tensor (*f)(const Tensor&), int32_t type = kFloat) {
  return [f, type](NodeContext& c) { c.set_device(0, f(dev_float(c, 0)), type); };
}

Fn binary_host(double (*f)(double, double), int64_t (*fi)(int64_t, int64_t),
               int32_t result = kUndefined) {
  return [f, fi, result](NodeContext& c) {
    std::function<int64_t(int64_t, int64_t)> integer;
    if (fi != nullptr) integer = fi;
    c.set_host(0, host_binary(c, c.host_values(0), c.host_values(1), f, integer, result));
  };
}

double d_sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
double d_relu(double x) {
  return x > 0 ? x : 0.0;
}
double d_gelu(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}
double d_not(double x) {
  return x != 0 ? 0.0 : 1.0;
}
double d_neg(double x) {
  return -x;
}
double d_reciprocal(double x) {
  return 1.0 / x;
}
double d_sqrt(double x) {
  return std::sqrt(x);
}
double d_exp(double x) {
  return std::exp(x);
}
double d_log(double x) {
  return std::log(x);
}
double d_abs(double x) {
  return std::fabs(x);
}
double d_tanh(double x) {
  return std::tanh(x);
}
double d_erf(double x) {
  return std::erf(x);
}
double d_floor(double x) {
  return std::floor(x);
}
double d_ceil(double x) {
  return std::ceil(x);
}
double d_add(double a, double b) {
  return a + b;
}
double d_sub(double a, double b) {
  return a - b;
}
double d_mul(double a, double b) {
  return a * b;
}
double d_div(double a, double b) {
  return a / b;
}
double d_pow(double a, double b) {
  return std::pow(a, b);
}
double d_max(double a, double b) {
  return std::max(a, b);
}
double d_min(double a, double b) {
  return std::min(a, b);
}
double d_eq(double a, double b) {
  return a == b ? 1 : 0;
}
double d_gt(double a, double b) {
  return a > b ? 1 : 0;
}
double d_lt(double a, double b) {
  return a < b ? 1 : 0;
}
double d_ge(double a, double b) {
  return a >= b ? 1 : 0;
}
double d_le(double a, double b) {
  return a <= b ? 1 : 0;
}
double d_and(double a, double b) {
  return a != 0 && b != 0 ? 1 : 0;
}
double d_or(double a, double b) {
  return a != 0 || b != 0 ? 1 : 0;
}
int64_t i_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t i_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t i_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
int64_t i_div(int64_t a, int64_t b) {
  if (b == 0) throw_error(invalid_argument("integer division by zero"));
  if (a == std::numeric_limits<int64_t>::min() && b == -1) return a;
  return a / b;
}
int64_t i_max(int64_t a, int64_t b) {
  return std::max(a, b);
}
int64_t i_min(int64_t a, int64_t b) {
  return std::min(a, b);
}

Tensor t_not(const Tensor& x) {
  return 1.0 - x;
}
Tensor t_reciprocal(const Tensor& x) {
  return pow(x, -1.0);
}

Fn device_binary_fn(Tensor (*both)(const Tensor&, const Tensor&),
                    Tensor (*scalar)(const Tensor&, double), bool commutes) {
  return [both, scalar, commutes](NodeContext& c) { device_binary(c, both, scalar, commutes); };
}

Fn compare_device(int kind) {  // 0 eq, 1 gt, 2 lt, 3 ge, 4 le
  return [kind](NodeContext& c) {
    const Tensor a = dev_float(c, 0), b = dev_float(c, 1);
    Tensor y;
    switch (kind) {
      case 0:
        y = equal(a, b);
        break;
      case 1:
        y = greater(a, b);
        break;
      case 2:
        y = greater(b, a);
        break;
      case 3:
        y = 1.0 - greater(b, a);
        break;
      default:
        y = 1.0 - greater(a, b);
        break;
    }
    c.set_device(0, y, kBool);
  };
}

std::map<std::string, OpDef> make_table() {
  std::map<std::string, OpDef> t;
  const auto both = [&](const std::string& name, Fn host, Fn device, bool ints_on_host = false) {
    t[name] = OpDef{std::move(host), std::move(device), ints_on_host};
  };
  // Shape-like ops: host when their inputs are known there, views on the device otherwise.
  both("Shape", host_shape, nullptr);
  both("Size", host_size, nullptr);
  both("Identity", identity, identity);
  both("Dropout", identity, identity);
  both("Gather", host_gather, device_gather);
  both("Concat", host_concat, device_concat);
  both(
      "Unsqueeze",
      [](NodeContext& c) { host_reshape_like(c, unsqueezed_shape(c, c.shape(0), axes_of(c, 1))); },
      [](NodeContext& c) {
        c.set_device(0, reshaped(c, c.dev(0), unsqueezed_shape(c, c.shape(0), axes_of(c, 1))),
                     c.type(0));
      });
  both(
      "Squeeze",
      [](NodeContext& c) { host_reshape_like(c, squeezed_shape(c, c.shape(0), axes_of(c, 1))); },
      [](NodeContext& c) {
        c.set_device(0, reshaped(c, c.dev(0), squeezed_shape(c, c.shape(0), axes_of(c, 1))),
                     c.type(0));
      });
  both(
      "Reshape",
      [](NodeContext& c) {
        host_reshape_like(
            c, reshape_target(c, c.shape(0), c.ints(1), c.attr_int("allowzero", 0) != 0));
      },
      [](NodeContext& c) {
        c.set_device(
            0,
            reshaped(c, c.dev(0),
                     reshape_target(c, c.shape(0), c.ints(1), c.attr_int("allowzero", 0) != 0)),
            c.type(0));
      });
  both(
      "Flatten", [](NodeContext& c) { host_reshape_like(c, flatten_shape(c, c.shape(0))); },
      [](NodeContext& c) {
        c.set_device(0, reshaped(c, c.dev(0), flatten_shape(c, c.shape(0))), c.type(0));
      });
  both(
      "Transpose",
      [](NodeContext& c) {
        c.set_host(0, host_transpose(c.host_values(0), transpose_perm(c, c.shape(0).size())));
      },
      [](NodeContext& c) {
        const Ints perm = transpose_perm(c, c.shape(0).size());
        c.set_device(0, c.dev(0).permute(std::vector<int>(perm.begin(), perm.end())), c.type(0));
      });
  both("Slice", host_slice, device_slice);
  both("Split", host_split, device_split);
  both("ConstantOfShape", host_constant_of_shape, nullptr);
  both("Range", host_range, nullptr);
  both("Expand", host_expand, [](NodeContext& c) {
    c.set_device(0, c.dev(0).expand(to_shape(c, expand_shape(c))), c.type(0));
  });
  both("Where", host_where, device_where);
  both("Cast", host_cast, device_cast);
  both("Trilu", host_trilu, device_trilu);
  // Elementwise.
  both("Add", binary_host(d_add, i_add), device_binary_fn(t_add, s_add, true), true);
  both("Sub", binary_host(d_sub, i_sub), device_binary_fn(t_sub, s_sub, false), true);
  both("Mul", binary_host(d_mul, i_mul), device_binary_fn(t_mul, s_mul, true), true);
  both("Div", binary_host(d_div, i_div), device_binary_fn(t_div, s_div, false), true);
  both("Pow", binary_host(d_pow, nullptr), device_binary_fn(t_pow, s_pow, false), true);
  both("Max", binary_host(d_max, i_max), device_binary_fn(t_max, s_max, true), true);
  both("Min", binary_host(d_min, i_min), device_binary_fn(t_min, s_min, true), true);
  both("Equal", binary_host(d_eq, nullptr, kBool), compare_device(0), true);
  both("Greater", binary_host(d_gt, nullptr, kBool), compare_device(1), true);
  both("Less", binary_host(d_lt, nullptr, kBool), compare_device(2), true);
  both("GreaterOrEqual", binary_host(d_ge, nullptr, kBool), compare_device(3), true);
  both("LessOrEqual", binary_host(d_le, nullptr, kBool), compare_device(4), true);
  both(
      "And", binary_host(d_and, nullptr, kBool),
      [](NodeContext& c) { c.set_device(0, mul(dev_float(c, 0), dev_float(c, 1)), kBool); }, true);
  both(
      "Or", binary_host(d_or, nullptr, kBool),
      [](NodeContext& c) { c.set_device(0, maximum(dev_float(c, 0), dev_float(c, 1)), kBool); },
      true);
  both("Not", unary_host(d_not), unary_device(t_not, kBool), true);
  both("Neg", unary_host(d_neg), unary_device(&switchyard::neg), true);
  both("Abs", unary_host(d_abs), unary_device(&switchyard::abs), true);
  both("Sqrt", unary_host(d_sqrt), unary_device(&switchyard::sqrt));
  both("Reciprocal", unary_host(d_reciprocal), unary_device(t_reciprocal));
  both("Exp", unary_host(d_exp), unary_device(&switchyard::exp));
  both("Log", unary_host(d_log), unary_device(&switchyard::log));
  both("Relu", unary_host(d_relu), unary_device(&switchyard::relu));
  both("Sigmoid", unary_host(d_sigmoid), unary_device(&switchyard::sigmoid));
  both("Tanh", unary_host(d_tanh), unary_device(&switchyard::tanh));
  both("Erf", unary_host(d_erf), unary_device(erf_composed));
  both("switchyard.Gelu", unary_host(d_gelu), unary_device(&switchyard::gelu));
  both("Floor", unary_host(d_floor), nullptr, true);
  both("Ceil", unary_host(d_ceil), nullptr, true);
  both("LeakyRelu", nullptr, [](NodeContext& c) {
    const Tensor x = dev_float(c, 0);
    c.set_device(
        0, maximum(x, 0.0) + minimum(x, 0.0) * static_cast<double>(c.attr_float("alpha", 0.01F)),
        kFloat);
  });
  both("Clip", nullptr, [](NodeContext& c) {
    Tensor x = dev_float(c, 0);
    double v = 0;
    if (c.has(1)) x = c.host_scalar(1, v) ? maximum(x, v) : maximum(x, dev_float(c, 1));
    if (c.has(2)) x = c.host_scalar(2, v) ? minimum(x, v) : minimum(x, dev_float(c, 2));
    c.set_device(0, x, kFloat);
  });
  // Neural-network ops, on the device.
  both("MatMul", nullptr, device_matmul);
  both("switchyard.Linear", nullptr, device_linear);
  both("Gemm", nullptr, device_gemm);
  both("Softmax", nullptr, [](NodeContext& c) {
    const Tensor x = dev_float(c, 0);
    c.set_device(0, softmax(x, normalize(c, c.attr_int("axis", -1), static_cast<size_t>(x.rank()))),
                 kFloat);
  });
  both("LogSoftmax", nullptr, [](NodeContext& c) {
    const Tensor x = dev_float(c, 0);
    c.set_device(
        0, log_softmax(x, normalize(c, c.attr_int("axis", -1), static_cast<size_t>(x.rank()))),
        kFloat);
  });
  both("Conv", nullptr, device_conv);
  both("switchyard.Conv", nullptr, device_conv);
  both("MaxPool", nullptr, [](NodeContext& c) { device_pool(c, true); });
  both("AveragePool", nullptr, [](NodeContext& c) { device_pool(c, false); });
  both("GlobalAveragePool", nullptr, [](NodeContext& c) { device_global_pool(c, false); });
  both("GlobalMaxPool", nullptr, [](NodeContext& c) { device_global_pool(c, true); });
  both("Pad", nullptr, device_pad);
  both("BatchNormalization", nullptr, device_batch_norm);
  both("LayerNormalization", nullptr, device_layer_norm);
  both("ReduceMean", nullptr, [](NodeContext& c) { device_reduce(c, 0); });
  both("ReduceSum", nullptr, [](NodeContext& c) { device_reduce(c, 1); });
  both("ReduceMax", nullptr, [](NodeContext& c) { device_reduce(c, 2); });
  both("LSTM", nullptr, [](NodeContext& c) { device_recurrent(c, true); });
  both("GRU", nullptr, [](NodeContext& c) { device_recurrent(c, false); });
  return t;
}

}  // namespace

const std::map<std::string, OpDef>& op_table() {
  static const std::map<std::string, OpDef> table = make_table();
  return table;
}

}  // namespace switchyard::onnx_detail

namespace switchyard {

const std::vector<std::string>& onnx_supported_ops() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> out{"Constant"};
    for (const auto& [name, def] : onnx_detail::op_table()) {
      if (name.rfind("switchyard.", 0) != 0) out.push_back(name);
    }
    std::sort(out.begin(), out.end());
    return out;
  }();
  return ops;
}

}  // namespace switchyard
