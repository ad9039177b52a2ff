// ONNX QuantizeLinear and DequantizeLinear (opsets 10 to 25; formats/onnx_ops_internal.h): the
// QDQ form that ONNX Runtime's quantization tools and quantization-aware training export; and
// DynamicQuantizeLinear with MatMulInteger, what ONNX Runtime's quantize_dynamic writes. The
// model runs in f32 between them, each quantization computed exactly as the integer type holds it
// (fake quantization): DequantizeLinear of a constant weight folds at load into an f32 weight.
// Scales and zero points per tensor, per axis (version 13) or per block (version 21); the integer
// types int8, uint8, int16 and uint16 (and int32 to dequantize); float8 and int4 types are refused
// as types.
#include <algorithm>
#include <cmath>
#include <limits>

#include "formats/onnx_ops_internal.h"
#include "switchyard/device.h"
#include "switchyard/ops.h"

namespace switchyard::onnx_detail {

namespace {

// An integer type QuantizeLinear writes, and its range.
struct Quantized {
  int32_t type;
  double low, high;
};
constexpr Quantized kQuantizedTypes[] = {
    {kInt8, -128, 127}, {kUint8, 0, 255}, {kInt16, -32768, 32767}, {kUint16, 0, 65535}};

// How scale and zero point spread over x: one value (per tensor), one per index of `axis` (per
// axis), or one per block of `block` indices along `axis` with the other axes as x's.
struct Granularity {
  int axis = -1;  // -1: per tensor
  int64_t block = 0;
};

Granularity granularity_of(NodeContext& c, const Ints& x_shape) {
  const Ints& s = c.shape(1);
  const int64_t count = numel_of(s);
  const int64_t block = c.attr_int("block_size", 0);
  // The zero point has the scale's shape (one value each may be [] or [1]).
  if (c.has(2) && c.shape(2) != s && !(count == 1 && numel_of(c.shape(2)) == 1))
    c.fail("the zero point must have the scale's shape");
  if (block == 0 && count == 1 && s.size() <= 1) return {};
  if (x_shape.empty()) c.fail("a scale of more than one value needs an input of rank 1 or more");
  const int axis = normalize(c, c.attr_int("axis", 1), x_shape.size());
  const auto a = static_cast<size_t>(axis);
  if (block == 0) {
    if (s.size() != 1 || s[0] != x_shape[a])
      c.fail("a per-axis scale must be [" + std::to_string(x_shape[a]) + "] (axis " +
             std::to_string(axis) + "), got " + shape_text(s));
    return {axis, 0};
  }
  if (block < 0) c.fail("block_size must not be negative");
  Ints expected = x_shape;
  expected[a] = (x_shape[a] + block - 1) / block;
  if (s != expected)
    c.fail("a blocked scale must be " + shape_text(expected) + " (block_size " +
           std::to_string(block) + " along axis " + std::to_string(axis) + "), got " +
           shape_text(s));
  return {axis, block};
}

// A scale or zero point (input k) made to broadcast against x: as it is per tensor, [C] reshaped
// to [1, .., C, .., 1] per axis, or each block repeated along the axis (INDEX_SELECT) per block.
Tensor spread(NodeContext& c, size_t k, const Granularity& g, const Ints& x_shape) {
  Tensor t = dev_float(c, k);
  if (g.axis < 0) return t.reshape(Shape{});
  const auto a = static_cast<size_t>(g.axis);
  if (g.block == 0) {
    Ints shape(x_shape.size(), 1);
    shape[a] = x_shape[a];
    return reshaped(c, t, shape);
  }
  std::vector<int64_t> picks(static_cast<size_t>(x_shape[a]));
  for (size_t i = 0; i < picks.size(); ++i) picks[i] = static_cast<int64_t>(i) / g.block;
  return index_select(
      t, g.axis,
      Tensor::from_host(picks, Shape{static_cast<int64_t>(picks.size())}, c.model().device));
}

// The same on the host: the index into scale / zero point of x's element e.
int64_t parameter_index(const Granularity& g, const Ints& x_shape, int64_t e) {
  if (g.axis < 0) return 0;
  const auto a = static_cast<size_t>(g.axis);
  int64_t inner = 1;
  for (size_t d = a + 1; d < x_shape.size(); ++d) inner *= x_shape[d];
  const int64_t index = e / inner % x_shape[a];
  if (g.block == 0) return index;
  const int64_t blocks = (x_shape[a] + g.block - 1) / g.block;
  const int64_t outer = e / (inner * x_shape[a]);
  return (outer * blocks + index / g.block) * inner + e % inner;
}

// QuantizeLinear's output type (the zero point's, else output_dtype (version 21), else uint8)
// and its range.
Quantized quantized_type(NodeContext& c) {
  int32_t type = kUint8;
  if (c.has(2))
    type = c.type(2);
  else if (c.attr_int("output_dtype", 0) != 0)
    type = static_cast<int32_t>(c.attr_int("output_dtype", 0));
  for (const Quantized& q : kQuantizedTypes) {
    if (q.type == type) return q;
  }
  c.fail("quantizing to " + elem_type_name(type) +
         " is not supported (int8, uint8, int16, uint16)");
}

// The rounding of q to the nearest integer, ties to even, in f32 by adding and subtracting
// 1.5 * 2^23 (exact for |q| below 2^22, which the clamp to the type's range ensures).
constexpr double kRoundingShift = 12582912.0;

// DequantizeLinear's output type: output_dtype (version 23), else the scale's.
int32_t dequantized_type(NodeContext& c) {
  const auto type = c.attr_int("output_dtype", 0) != 0
                        ? static_cast<int32_t>(c.attr_int("output_dtype", 0))
                        : c.type(1);
  if (!is_float_type(type)) c.fail("output_dtype must be a float type");
  return type;
}

// f(e, scale, zero point) for each element e of the host input x (input 0), with its own scale
// and zero point (0 without one).
template <typename F>
void each_element(NodeContext& c, F f) {
  const HostTensor& x = c.host_values(0);
  const Granularity g = granularity_of(c, x.shape);
  const HostTensor& scale = c.host_values(1);
  const HostTensor* zero = c.has(2) ? &c.host_values(2) : nullptr;
  check_host_size(c, x.shape);
  for (int64_t e = 0; e < x.numel(); ++e) {
    const int64_t p = parameter_index(g, x.shape, e);
    f(e, static_cast<float>(scale.at(p)), zero != nullptr ? zero->int_at(p) : 0);
  }
}

}  // namespace

// y = (x - zero_point) * scale, in f32.
void host_dequantize(NodeContext& c) {
  const HostTensor& x = c.host_values(0);
  HostTensor y = HostTensor::zeros(dequantized_type(c), x.shape);
  each_element(c, [&](int64_t e, float scale, int64_t zero) {
    y.f[static_cast<size_t>(e)] = static_cast<float>(x.int_at(e) - zero) * scale;
  });
  c.set_host(0, std::move(y));
}

void device_dequantize(NodeContext& c) {
  const Ints& shape = c.shape(0);
  const Granularity g = granularity_of(c, shape);
  Tensor x = dev_float(c, 0);
  if (c.has(2)) x = x - spread(c, 2, g, shape);
  c.set_device(0, x * spread(c, 1, g, shape), dequantized_type(c));
}

// y = clamp(round(x / scale) + zero_point) with ties to even; NaN gives the zero point.
void host_quantize(NodeContext& c) {
  const HostTensor& x = c.host_values(0);
  const Quantized range = quantized_type(c);  // (not a structured binding: the lambda reads it)
  HostTensor y = HostTensor::zeros(range.type, x.shape);
  each_element(c, [&](int64_t e, float scale, int64_t zero) {
    const float q = static_cast<float>(x.at(e)) / scale;
    const double rounded = std::isnan(q) ? 0.0 : std::nearbyint(static_cast<double>(q));
    const double level = rounded + static_cast<double>(zero);
    y.i[static_cast<size_t>(e)] = static_cast<int64_t>(std::clamp(level, range.low, range.high));
  });
  c.set_host(0, std::move(y));
}

void device_quantize(NodeContext& c) {
  const Ints& shape = c.shape(0);
  const Granularity g = granularity_of(c, shape);
  const auto [type, low, high] = quantized_type(c);
  Tensor q = dev_float(c, 0) / spread(c, 1, g, shape);
  // Clamped first to the type's range around the zero point (so within 2^22), rounded, shifted.
  const Tensor zero = c.has(2) ? spread(c, 2, g, shape) : Tensor();
  q = zero.defined() ? minimum(maximum(q, low - zero), high - zero)
                     : minimum(maximum(q, low), high);
  q = (q + kRoundingShift) - kRoundingShift;
  if (zero.defined()) q = q + zero;
  c.set_device(0, minimum(maximum(q, low), high), type);
}

}  // namespace switchyard::onnx_detail

namespace switchyard::onnx_detail {

// DynamicQuantizeLinear (opset 11), as ONNX says and ONNX Runtime computes it, in f32: x's range
// widened to hold 0 (NaN left out), scale = (max - min) / 255 (1 where the range is empty), zero
// point round(-min / scale) within [0, 255], y = clamp(round(x / scale) + zero point) in uint8,
// ties to even. A NaN element quantizes to the zero point (0.0), as QuantizeLinear's; ONNX
// Runtime gives 0 there.
void device_dynamic_quantize(NodeContext& c) {
  const Tensor x = dev_float(c, 0);
  if (x.numel() == 0) c.fail("x has no elements, so no range to take the scale from");
  const Tensor flat = x.reshape(Shape{x.numel()});
  const Tensor number = picked(c, equal(flat, flat), flat, zeros_like(flat));  // NaN -> 0
  const Tensor high = maximum(amax(number), 0.0), low = minimum(neg(amax(neg(number))), 0.0);
  Tensor scale = (high - low) / 255.0;
  scale = scale + equal(scale, zeros_like(scale));  // 0 (x all zeros) -> 1
  Tensor zero = minimum(maximum(neg(low) / scale, 0.0), 255.0);
  zero = (zero + kRoundingShift) - kRoundingShift;
  // Clamped first around the zero point (so within 2^22), rounded, shifted, clamped again.
  Tensor q = minimum(maximum(number / scale, neg(zero)), 255.0 - zero);
  q = (q + kRoundingShift) - kRoundingShift + zero;
  c.set_device(0, minimum(maximum(q, 0.0), 255.0).reshape(x.shape()), kUint8);
  c.set_device(1, scale, kFloat);
  c.set_device(2, zero, kUint8);
}

namespace {

// An 8-bit integer operand of MatMulInteger as f32 minus its zero point: one value, or one per
// row of A ([M], as [M, 1]) or per column of B ([N]).
Tensor centred(NodeContext& c, size_t k, size_t zero_k, bool rows) {
  const int32_t type = c.type(k);
  if (type != kInt8 && type != kUint8)
    c.fail(std::string(k == 0 ? "A" : "B") + " must be int8 or uint8, got " + elem_type_name(type));
  const Tensor v = dev_float(c, k);
  if (v.rank() < 1) c.fail(std::string(k == 0 ? "A" : "B") + " must have rank 1 or more");
  if (!c.has(zero_k)) return v;
  if (c.type(zero_k) != type) c.fail("a zero point must have its operand's type");
  const Ints& zs = c.shape(zero_k);
  const int64_t count = numel_of(zs);
  const int64_t extent = v.rank() == 1 ? 1 : v.dim(rows ? v.rank() - 2 : v.rank() - 1);
  Tensor zero = dev_float(c, zero_k);
  if (count == 1) return v - zero.reshape(Shape{});
  if (zs.size() != 1 || count != extent) {
    c.fail(std::string(rows ? "a_zero_point" : "b_zero_point") + " " + shape_text(zs) +
           " must be one value or one per " + (rows ? "row of A" : "column of B") + " (" +
           std::to_string(extent) + ")");
  }
  return v - (rows ? zero.reshape(Shape{count, 1}) : zero);
}

// The most terms of a product whose partial sums stay exact in f32: |a| <= 255 and |b| <= 16 give
// terms of at most 4080, and 4112 of them stay below 2^24.
constexpr int64_t kExactTerms = 4096;

}  // namespace

// MatMulInteger (opset 10): (A - a_zero_point) @ (B - b_zero_point) in int32. Products of 8-bit
// values are summed in f32, exactly: B is split as 16 h + l (h = round(B / 16), |h| <= 16 and
// |l| <= 8), so each product's partial sums stay below 2^24 for up to 4096 terms, and the result is
// 16 (A @ h) + A @ l, rounded once: exact below 2^24 in magnitude, and beyond it the nearest f32
// (what a Cast to float, as ONNX Runtime's quantized graphs follow it with, gives). With more
// than 4096 terms the inner axis is summed in parts of 4096, one rounding each.
void device_matmul_integer(NodeContext& c) {
  const Tensor a = centred(c, 0, 2, true), b = centred(c, 1, 3, false);
  const int64_t terms = a.dim(a.rank() - 1);
  const Tensor high = (b / 16.0 + kRoundingShift) - kRoundingShift;
  const Tensor low = b - high * 16.0;
  Tensor y;
  for (int64_t start = 0; start < std::max<int64_t>(terms, 1); start += kExactTerms) {
    const int64_t len = std::min(kExactTerms, terms - start);
    const int axis_b = b.rank() == 1 ? 0 : b.rank() - 2;
    const Tensor ap = terms > kExactTerms ? a.narrow(a.rank() - 1, start, len) : a;
    const Tensor hp = terms > kExactTerms ? high.narrow(axis_b, start, len) : high;
    const Tensor lp = terms > kExactTerms ? low.narrow(axis_b, start, len) : low;
    const Tensor part = onnx_matmul(c, ap, hp) * 16.0 + onnx_matmul(c, ap, lp);
    y = y.defined() ? y + part : part;
  }
  c.set_device(0, y, kInt32);
}

}  // namespace switchyard::onnx_detail

namespace switchyard::onnx_detail {

// ConvInteger (opset 10): conv(x - x_zero_point, w - w_zero_point) in int32 with Conv's attributes
// (1-D and 2-D); the padding counts as x's zero point (0 once centred), as in ONNX's reference and
// ONNX Runtime. Summed in f32 exactly as MatMulInteger's products: w split as 16 h + l, and each
// group's input channels in parts of at most 4096 terms (channels times kernel taps), each part
// rounded once.
void device_conv_integer(NodeContext& c) {
  for (const size_t k : {size_t{0}, size_t{1}}) {
    const int32_t type = c.type(k);
    if (type != kInt8 && type != kUint8)
      c.fail(std::string(k == 0 ? "x" : "w") + " must be int8 or uint8, got " +
             elem_type_name(type));
    if (c.has(k + 2) && c.type(k + 2) != type) c.fail("a zero point must have its operand's type");
  }
  const Ints& ws = c.shape(1);
  if (ws.size() != 3 && ws.size() != 4)
    c.fail("only 1-D and 2-D windows are supported, got weight " + shape_text(ws));
  Tensor x = dev_float(c, 0), w = dev_float(c, 1);
  if (c.has(2)) {
    if (numel_of(c.shape(2)) != 1)
      c.fail("x_zero_point " + shape_text(c.shape(2)) + " must be one value");
    x = x - dev_float(c, 2).reshape(Shape{});
  }
  if (c.has(3)) {
    const Ints& zs = c.shape(3);
    const int64_t count = numel_of(zs);
    const Tensor zero = dev_float(c, 3);
    if (count == 1) {
      w = w - zero.reshape(Shape{});
    } else if (zs.size() == 1 && count == ws[0]) {
      std::vector<int64_t> per_channel(ws.size(), 1);
      per_channel[0] = count;
      w = w - zero.reshape(Shape(per_channel));
    } else {
      c.fail("w_zero_point " + shape_text(zs) + " must be one value or one per output channel (" +
             std::to_string(ws[0]) + ")");
    }
  }
  const int64_t groups = c.attr_int("group", 1);
  if (x.rank() != static_cast<int>(ws.size()) || groups < 1 || ws[0] % groups != 0 ||
      ws[1] * groups != x.dim(1)) {
    c.fail("group " + std::to_string(groups) + " does not fit input " + shape_text(c.shape(0)) +
           " and weight " + shape_text(ws));
  }
  const int64_t taps = numel_of(Ints(ws.begin() + 2, ws.end()));
  if (taps > kExactTerms) {
    c.fail("a kernel of " + std::to_string(taps) + " taps is more than the " +
           std::to_string(kExactTerms) + " whose sums stay exact in f32");
  }
  const Tensor high = (w / 16.0 + kRoundingShift) - kRoundingShift;
  const Tensor low = w - high * 16.0;
  const auto exact = [&](const Tensor& xp, const Tensor& hp, const Tensor& lp, int64_t g) {
    return onnx_conv(c, xp, hp, Tensor(), g) * 16.0 + onnx_conv(c, xp, lp, Tensor(), g);
  };
  const int64_t per_part = kExactTerms / taps, channels = ws[1], outputs = ws[0] / groups;
  if (channels <= per_part) {
    c.set_device(0, exact(x, high, low, groups), kInt32);
    return;
  }
  // Too many terms for one exact sum: each group alone, its channels in parts.
  std::vector<Tensor> groups_out;
  for (int64_t g = 0; g < groups; ++g) {
    const Tensor xg = x.narrow(1, g * channels, channels);
    const Tensor hg = high.narrow(0, g * outputs, outputs),
                 lg = low.narrow(0, g * outputs, outputs);
    Tensor sum;
    for (int64_t start = 0; start < channels; start += per_part) {
      const int64_t len = std::min(per_part, channels - start);
      const Tensor part =
          exact(xg.narrow(1, start, len), hg.narrow(1, start, len), lg.narrow(1, start, len), 1);
      sum = sum.defined() ? sum + part : part;
    }
    groups_out.push_back(sum);
  }
  c.set_device(0, groups == 1 ? groups_out[0] : concat(groups_out, 1), kInt32);
}

}  // namespace switchyard::onnx_detail
