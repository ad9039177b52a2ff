// ONNX ops on host values: what shape subgraphs compute, and constants folded at load
// (formats/onnx_ops_internal.h). Semantics are ONNX's at the op's version
// (onnx_opset.h).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>

#include "formats/onnx_ops_internal.h"
#include "support/dtype_codec.h"  // f16 / bf16 rounding of Cast

namespace switchyard::onnx_detail {

namespace {
std::atomic<int64_t> host_element_limit{int64_t{1} << 26};
}  // namespace

int64_t max_host_elements() {
  return host_element_limit.load(std::memory_order_relaxed);
}
void set_max_host_elements(int64_t limit) {
  host_element_limit.store(limit, std::memory_order_relaxed);
}

HostTensor host_unary(const HostTensor& x, const std::function<double(double)>& f) {
  HostTensor out = x;
  if (x.is_float()) {
    for (float& v : out.f) v = static_cast<float>(f(static_cast<double>(v)));
  } else {
    for (int64_t& v : out.i) v = whole_or_zero(f(static_cast<double>(v)));
  }
  return out;
}

// Elementwise with broadcasting. `result` kUndefined: a's type.
HostTensor host_binary(NodeContext& c, const HostTensor& a, const HostTensor& b,
                       const std::function<double(double, double)>& f,
                       const std::function<int64_t(int64_t, int64_t)>& fi, int32_t result) {
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
      out.i[static_cast<size_t>(k)] = whole_or_zero(v);
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

// Copies a block [outer, count * inner] picking rows along one axis.
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
      // INT_MAX as the end of a backward slice is read two ways: ONNX's clamping (and its
      // reference evaluator) takes nothing, ONNX Runtime reads it as numpy's None and slices to
      // the start. Neither is followed without a word.
      const bool max_end = ends[k] == std::numeric_limits<int64_t>::max() ||
                           ends[k] == std::numeric_limits<int32_t>::max();
      if (max_end && extent > 0) {
        c.fail("end " + std::to_string(ends[k]) + " with step " + std::to_string(step) +
               " on axis " + std::to_string(axis) +
               " is ambiguous: ONNX's clamping takes no element, ONNX Runtime slices to the "
               "start; to slice to the start write INT64_MIN as the end");
      }
      // ONNX clamps a backward start to [0, extent - 1] (a start before the first element takes
      // it, as ONNX Runtime does; numpy would take nothing) and the end to [-1, extent - 1].
      start = extent == 0 ? -1 : clamp(starts[k], 0, extent - 1);
      end = clamp(ends[k], -1, extent - 1);
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
  if (c.value(0).is_sequence())  // a sequence passes as it is (Identity-14)
    c.set_value(0, c.value(0));
  else if (c.host(0) != nullptr)
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
  // Each side its own product: [0, 1, 4] flattened at 1 is [0, 4] (numel / outer would say 0).
  int64_t outer = 1, inner = 1;
  for (size_t a = 0; a < shape.size(); ++a)
    (static_cast<int>(a) < axis ? outer : inner) *= shape[a];
  return {outer, inner};
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

SplitPlan split_plan(NodeContext& c, const Ints& shape) {
  SplitPlan plan{normalize(c, c.attr_int("axis", 0), shape.size()), {}};
  const int64_t extent = shape[static_cast<size_t>(plan.axis)];
  if (c.output_count() == 0) c.fail("no outputs");
  plan.sizes = c.has(1) ? c.ints(1) : Ints{};
  const int64_t num_outputs = c.attr_int("num_outputs", 0);
  if (c.version() >= 18 && !c.has(1)) {
    // Version 18: num_outputs parts of ceil(extent / n), the last one smaller.
    if (num_outputs != static_cast<int64_t>(c.output_count()))
      c.fail("num_outputs " + std::to_string(num_outputs) + " must be the number of outputs (" +
             std::to_string(c.output_count()) + ") when split is not given");
    const int64_t part = (extent + num_outputs - 1) / num_outputs;
    for (int64_t k = 0; k < num_outputs; ++k)
      plan.sizes.push_back(std::max<int64_t>(0, std::min(part, extent - k * part)));
  } else if (plan.sizes.empty()) {
    const auto n = static_cast<int64_t>(c.output_count());
    if (extent % n != 0)
      c.fail("axis extent " + std::to_string(extent) + " does not split into " + std::to_string(n));
    plan.sizes.assign(static_cast<size_t>(n), extent / n);
  }
  if (c.has(1) && c.attr("num_outputs") != nullptr)
    c.fail("split and num_outputs must not both be given");
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
  // Each one value (a hostile file gave an empty tensor, read past its end).
  const HostTensor& start = c.one_value(0, "start");
  const double s = start.at(0), limit = c.one_value(1, "limit").at(0),
               delta = c.one_value(2, "delta").at(0);
  if (delta == 0 || !std::isfinite(s) || !std::isfinite(limit) || !std::isfinite(delta))
    c.fail("start, limit and delta must be finite, delta not 0");
  const double count = std::max(std::ceil((limit - s) / delta), 0.0);
  if (count > static_cast<double>(max_host_elements()))
    c.fail("the range has more than " + std::to_string(max_host_elements()) + " elements");
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
  // CastLike (opset 15) takes the type of its second input.
  const auto to =
      c.node().op == "CastLike" ? c.type(1) : static_cast<int32_t>(c.attr_int("to", kUndefined));
  if (!is_supported_type(to)) c.fail("cast to " + elem_type_name(to) + " is not supported");
  return to;
}

namespace {

// An integer as ONNX's Cast leaves it in a narrower integer type: its low bits, two's complement
// (numpy's astype). int64 and uint64 keep the value (uint64 is held as int64).
int64_t wrap_integer(int64_t v, int32_t to) {
  const auto u = static_cast<uint64_t>(v);
  switch (to) {
    case kInt8:
      return static_cast<int8_t>(static_cast<uint8_t>(u));
    case kUint8:
      return static_cast<uint8_t>(u);
    case kInt16:
      return static_cast<int16_t>(static_cast<uint16_t>(u));
    case kUint16:
      return static_cast<uint16_t>(u);
    case kInt32:
      return static_cast<int32_t>(static_cast<uint32_t>(u));
    case kUint32:
      return static_cast<uint32_t>(u);
    default:
      return v;
  }
}

// A value as the float type `to` holds it: float16 and bfloat16 round to nearest even (then
// widen back to the f32 the importer computes in), float and double keep f32's rounding.
float round_to_float_type(double v, int32_t to) {
  const auto f = static_cast<float>(v);
  if (to == kFloat16) return sy_support::f16_bits_to_f32(sy_support::f32_to_f16_bits(f));
  if (to == kBfloat16) return sy_support::bf16_bits_to_f32(sy_support::f32_to_bf16_bits(f));
  return f;
}

}  // namespace

void host_cast(NodeContext& c) {
  const HostTensor& x = c.host_values(0);
  const int32_t to = cast_target(c);
  HostTensor out = HostTensor::zeros(to, x.shape);
  for (int64_t k = 0; k < x.numel(); ++k) {
    const double v = x.at(k);
    const auto u = static_cast<size_t>(k);
    if (out.is_float())
      out.f[u] = round_to_float_type(x.is_float() ? v : static_cast<double>(x.i[u]), to);
    else if (to == kBool)
      out.i[u] = v != 0 ? 1 : 0;
    else if (!x.is_float())
      out.i[u] = wrap_integer(x.i[u], to);
    else  // float to integer: toward zero; NaN, infinities and out-of-range values give 0
      out.i[u] = wrap_integer(whole_or_zero(v), to);
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

}  // namespace switchyard::onnx_detail
