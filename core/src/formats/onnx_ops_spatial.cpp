// ONNX ops that move or resample image-like tensors, composed of switchyard's op set
// (formats/onnx_ops_internal.h): Pad in every mode, Tile, Resize (nearest, linear, cubic),
// DepthToSpace and SpaceToDepth, InstanceNormalization, ConvTranspose and PRelu. Semantics are
// ONNX's at the op's version (onnx_opset.h); what is not supported fails the node with a message
// naming it.
#include <algorithm>
#include <cmath>
#include <limits>

#include "formats/onnx_ops_internal.h"
#include "switchyard/device.h"
#include "switchyard/ops.h"
#include "tensor/dispatch_internal.h"
#include "tensor/op_helpers.h"

namespace switchyard::onnx_detail {
namespace {

// The longest axis whose source positions Pad and Resize list on the host (128 MiB of them).
constexpr int64_t kMaxListedAxis = int64_t{1} << 24;

Tensor host_indices(NodeContext& c, const std::vector<int64_t>& picks) {
  return Tensor::from_host(picks, Shape{static_cast<int64_t>(picks.size())}, c.model().device);
}

// `t` with its axis `axis` made n long and the others kept: the shape a padding block has.
Shape with_extent(const NodeContext& c, const Tensor& t, int axis, int64_t n) {
  Ints shape = t.shape().to_vector();
  shape[static_cast<size_t>(axis)] = n;
  check_size(c, shape);
  return to_shape(c, shape);
}

// Where padded element i (0 <= i < before + n + after) of an axis of n comes from: the nearest edge
// ("edge"), the input mirrored about its first and last elements ("reflect") or repeated
// ("wrap", version 19).
int64_t padded_source(int64_t i, int64_t before, int64_t n, const std::string& mode) {
  int64_t j = i - before;
  if (mode == "wrap") return ((j % n) + n) % n;
  if (mode != "reflect" || n == 1) return std::clamp<int64_t>(j, 0, n - 1);
  const int64_t period = 2 * (n - 1);
  j %= period;
  if (j < 0) j += period;
  return j < n ? j : period - j;
}

}  // namespace

Tensor padded_axis(NodeContext& c, const Tensor& t, int axis, int64_t before, int64_t after,
                   double value) {
  std::vector<Tensor> parts;
  const auto& device = c.model().device;
  if (before > 0) parts.push_back(full(with_extent(c, t, axis, before), value, device, t.dtype()));
  parts.push_back(after < 0 ? t.narrow(axis, 0, t.dim(axis) + after) : t);
  if (after > 0) parts.push_back(full(with_extent(c, t, axis, after), value, device, t.dtype()));
  return parts.size() > 1 ? concat(parts, axis) : parts[0];
}

Tensor unevenly_padded(NodeContext& c, const Tensor& t, int axis, int64_t before, int64_t after,
                       int64_t& even) {
  even = std::min(before, after);
  return before == after ? t : padded_axis(c, t, axis, before - even, after - even, 0.0);
}

namespace {

// An axis padded with a value computed in the graph (one element on the device, of t's dtype):
// the element expanded over each pad's block, so any value, infinities and NaN among them, is
// copied as it is.
Tensor padded_axis_by(NodeContext& c, const Tensor& t, int axis, int64_t before, int64_t after,
                      const Tensor& value) {
  std::vector<Tensor> parts;
  const Tensor one = value.reshape(Shape(std::vector<int64_t>(static_cast<size_t>(t.rank()), 1)));
  const auto block = [&](int64_t extent) {
    return one.expand(with_extent(c, t, axis, extent)).contiguous();
  };
  if (before > 0) parts.push_back(block(before));
  parts.push_back(t);
  if (after > 0) parts.push_back(block(after));
  return parts.size() > 1 ? concat(parts, axis) : parts[0];
}

}  // namespace

// Pad: constant (a constant value, or one computed in the graph), edge, reflect and wrap; a
// negative pad crops.
void device_pad(NodeContext& c) {
  const std::string mode = c.attr_string("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap")
    c.fail("mode " + mode + " is not supported (constant, edge, reflect, wrap)");
  const Tensor x = c.dev(0);  // integers stay i64: only copies, fills and gathers
  const Ints pads = c.ints(1);
  double value = 0;
  Tensor computed;  // a constant_value known only at run time
  if (c.has(2) && !c.host_scalar(2, value)) {
    if (numel_of(c.shape(2)) != 1)
      c.fail("constant_value " + shape_text(c.shape(2)) + " must be one value");
    if (c.type(2) != c.type(0)) c.fail("constant_value must have the input's type");
    computed = c.dev(2);
    if (computed.dtype() != x.dtype()) computed = computed.to(x.dtype());
  }
  Ints axes = c.has(3) ? c.ints(3) : Ints{};
  if (axes.empty()) {
    for (int a = 0; a < x.rank(); ++a) axes.push_back(a);
  }
  if (pads.size() != axes.size() * 2) c.fail("pads must have two values per axis");
  Tensor y = x;
  for (size_t k = 0; k < axes.size(); ++k) {
    const int axis = normalize(c, axes[k], static_cast<size_t>(x.rank()));
    int64_t before = pads[k], after = pads[k + axes.size()];
    const int64_t n = y.dim(axis);
    if (before < -n || after < -n || before + after < -n)
      c.fail("the pads crop more than the axis");
    if (before < 0) y = y.narrow(axis, -before, n + before), before = 0;
    if (after < 0) y = y.narrow(axis, 0, y.dim(axis) + after), after = 0;
    if (before == 0 && after == 0) continue;
    const int64_t length = y.dim(axis);
    if (mode != "constant") {
      if (length == 0) c.fail("mode " + mode + " cannot pad an empty axis");
      if (mode == "reflect" && (before >= length || after >= length) && length > 1) {
        // numpy repeats the reflection; ONNX Runtime refuses: neither is assumed.
        c.fail("reflect pads must be shorter than the axis (" + std::to_string(length) + ")");
      }
      if (before + length + after > kMaxListedAxis)
        c.fail("a padded axis longer than 2^24 elements is not supported");
      std::vector<int64_t> picks(static_cast<size_t>(before + length + after));
      for (size_t i = 0; i < picks.size(); ++i)
        picks[i] = padded_source(static_cast<int64_t>(i), before, length, mode);
      with_extent(c, y, axis, static_cast<int64_t>(picks.size()));  // checks the padded size
      y = index_select(y, axis, host_indices(c, picks));
      continue;
    }
    y = computed.defined() ? padded_axis_by(c, y, axis, before, after, computed)
                           : padded_axis(c, y, axis, before, after, value);
  }
  c.set_device(0, y, c.type(0));
}

// Tile: [a, b] repeated [r, s] is [1, a, 1, b] expanded to [r, a, s, b], copied, reshaped [r a, s
// b].
void device_tile(NodeContext& c) {
  const Tensor x = c.dev(0);
  const Ints repeats = c.ints(1);
  if (repeats.size() != static_cast<size_t>(x.rank())) c.fail("repeats must have one per axis");
  Ints spread, expanded, out;
  for (int a = 0; a < x.rank(); ++a) {
    const int64_t r = repeats[static_cast<size_t>(a)];
    if (r < 0) c.fail("repeats must not be negative");
    spread.insert(spread.end(), {1, x.dim(a)});
    expanded.insert(expanded.end(), {r, x.dim(a)});
    out.push_back(r * x.dim(a));
  }
  check_size(c, out);
  c.set_device(0,
               reshaped(c, reshaped(c, x, spread).expand(to_shape(c, expanded)).contiguous(), out),
               c.type(0));
}

// DepthToSpace (DCR or CRD) and SpaceToDepth on [N, C, H, W]: a reshape, a permutation and a copy.
void device_depth_to_space(NodeContext& c, bool to_space) {
  const Tensor x = c.dev(0);
  if (x.rank() != 4) c.fail("the input must have rank 4");
  const int64_t b = c.attr_int("blocksize", 0);
  if (b < 1 || b > 1 << 16) c.fail("blocksize must be between 1 and 2^16");
  const int64_t n = x.dim(0), ch = x.dim(1), h = x.dim(2), w = x.dim(3);
  Tensor y;
  if (to_space) {
    if (ch % (b * b) != 0) c.fail("blocksize^2 does not divide the channels");
    const bool crd = c.attr_string("mode", "DCR") == "CRD";
    if (!crd && c.attr_string("mode", "DCR") != "DCR") c.fail("mode must be DCR or CRD");
    const int64_t out_c = ch / (b * b);
    y = crd ? reshaped(c, x, {n, out_c, b, b, h, w}).permute({0, 1, 4, 2, 5, 3})
            : reshaped(c, x, {n, b, b, out_c, h, w}).permute({0, 3, 4, 1, 5, 2});
    y = reshaped(c, y.contiguous(), {n, out_c, h * b, w * b});
  } else {
    if (h % b != 0 || w % b != 0) c.fail("blocksize does not divide the height and width");
    y = reshaped(c, x, {n, ch, h / b, b, w / b, b}).permute({0, 3, 5, 1, 2, 4});
    y = reshaped(c, y.contiguous(), {n, ch * b * b, h / b, w / b});
  }
  c.set_device(0, y, c.type(0));
}

namespace {

// x [N, C, ...] normalised over each of `rows` equal runs of its elements (LAYER_NORM over the
// last axis of a [rows, numel / rows] view), then scaled and shifted per channel (scale and bias
// [C]): InstanceNormalization's and GroupNormalization's common part.
Tensor normalized_affine(NodeContext& c, const Tensor& x, int64_t rows, const Tensor& scale,
                         const Tensor& bias) {
  const int64_t span = x.numel() / std::max<int64_t>(rows, 1);
  const auto& device = c.model().device;
  const Tensor normed = layer_norm(x.contiguous().reshape(Shape{rows, span}),
                                   ones(Shape{span}, device), zeros(Shape{span}, device), 1,
                                   static_cast<double>(c.attr_float("epsilon", 1e-5F)));
  Ints per_channel(static_cast<size_t>(x.rank()) - 1, 1);
  per_channel[0] = x.dim(1);
  const Shape channel_shape = to_shape(c, per_channel);
  return normed.reshape(x.shape()) * scale.reshape(channel_shape) + bias.reshape(channel_shape);
}

}  // namespace

// InstanceNormalization: each (sample, channel) normalised over its spatial extent (LAYER_NORM on
// [N * C, spatial]), then scaled and shifted per channel.
void device_instance_norm(NodeContext& c) {
  const Tensor x = dev_float(c, 0);
  if (x.rank() < 3) c.fail("the input needs rank 3 or more");
  const int64_t n = x.dim(0), ch = x.dim(1);
  const Tensor scale = dev_float(c, 1), bias = dev_float(c, 2);
  if (scale.shape() != Shape{ch} || bias.shape() != Shape{ch})
    c.fail("scale and B must be [" + std::to_string(ch) + "]");
  c.set_device(0, normalized_affine(c, x, n * ch, scale, bias), kFloat);
}

// LRN (AlexNet's and GoogLeNet's local response normalization): x / (bias + alpha / size *
// s)^beta, where s sums x^2 over the channels c - floor((size - 1) / 2) to c + ceil((size - 1) / 2)
// that exist: x^2 padded with zeros on the channel axis, and `size` shifted views added.
void device_lrn(NodeContext& c) {
  const Tensor x = dev_float(c, 0);
  if (x.rank() < 2) c.fail("the input needs rank 2 or more");
  const int64_t size = c.attr_int("size", 0);
  if (size < 1 || size > 1024) c.fail("size must be 1 to 1024");
  const double alpha = static_cast<double>(c.attr_float("alpha", 1e-4F));
  const double beta = static_cast<double>(c.attr_float("beta", 0.75F));
  const double bias = static_cast<double>(c.attr_float("bias", 1.0F));
  const int64_t channels = x.dim(1), before = (size - 1) / 2, after = size - 1 - before;
  const Tensor padded = padded_axis(c, x * x, 1, before, after, 0.0);
  Tensor sum = padded.narrow(1, 0, channels);
  for (int64_t k = 1; k < size; ++k) sum = sum + padded.narrow(1, k, channels);
  c.set_device(0, x / pow(sum * (alpha / static_cast<double>(size)) + bias, beta), kFloat);
}

// GroupNormalization (opset 18): x [N, C, ...] normalised over each group of C / num_groups
// channels with the axes after them, then scaled and shifted: by one value per group before version
// 21, per channel since (version 21 fixed the definition; stash_type is f32, as switchyard
// computes).
void device_group_norm(NodeContext& c) {
  const Tensor x = dev_float(c, 0);
  if (x.rank() < 2) c.fail("the input needs rank 2 or more");
  const int64_t groups = c.attr_int("num_groups", 0), n = x.dim(0), ch = x.dim(1);
  if (groups <= 0 || ch % groups != 0)
    c.fail("num_groups " + std::to_string(groups) + " must divide the channels (" +
           std::to_string(ch) + ")");
  const int64_t per_scale = c.version() >= 21 ? ch : groups;
  Tensor scale = dev_float(c, 1), bias = dev_float(c, 2);
  if (scale.shape() != Shape{per_scale} || bias.shape() != Shape{per_scale})
    c.fail("scale and bias must be [" + std::to_string(per_scale) + "] (" +
           (c.version() >= 21 ? "one per channel" : "one per group before version 21") + ")");
  if (x.numel() == 0) {
    c.set_device(0, x, kFloat);
    return;
  }
  if (per_scale != ch) {  // one per group: each repeated over its channels
    const Shape spread{groups, ch / groups};
    scale = scale.reshape(Shape{groups, 1}).expand(spread).contiguous().reshape(Shape{ch});
    bias = bias.reshape(Shape{groups, 1}).expand(spread).contiguous().reshape(Shape{ch});
  }
  c.set_device(0, normalized_affine(c, x, n * groups, scale, bias), kFloat);
}

namespace {

// One spatial axis of a ConvTranspose: the full output (no pads, output_padding at the end) is
// cropped by `before` and `after`. CONV2D_BACKWARD_DATA crops both sides alike (`even`); what
// one side crops beyond the other is cut after it, and an output_shape longer than the full
// output gets `extend` zeros at the end. `out` is the result's length.
struct TransposeAxis {
  int64_t stride = 1, dilation = 1, before = 0, after = 0, even = 0, extend = 0, out = 0;
  // The length CONV2D_BACKWARD_DATA writes: out plus what each side crops beyond `even`.
  int64_t written() const { return out + (before - even) + (after - even); }
};

std::vector<TransposeAxis> transpose_axes(NodeContext& c, const Tensor& x, const Ints& ws) {
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER")
    c.fail("auto_pad " + auto_pad + " is not supported");
  const size_t spatial = ws.size() - 2;
  const auto attr = [&](const char* name, int64_t fallback) {
    Ints v = c.attr_ints(name);
    if (v.empty()) v.assign(spatial, fallback);
    if (v.size() != spatial) c.fail(std::string(name) + " must have one value per spatial axis");
    return v;
  };
  const Ints strides = attr("strides", 1), dilations = attr("dilations", 1);
  const Ints output_padding = attr("output_padding", 0);
  Ints pads = c.attr_ints("pads");
  if (pads.empty() || auto_pad != "NOTSET") pads.assign(spatial * 2, 0);
  if (pads.size() != spatial * 2) c.fail("pads must have two values per spatial axis");
  const Ints output_shape = c.attr_ints("output_shape");
  if (!output_shape.empty() && output_shape.size() != spatial && output_shape.size() != spatial + 2)
    c.fail("output_shape must have one value per spatial axis");
  std::vector<TransposeAxis> axes(spatial);
  for (size_t k = 0; k < spatial; ++k) {
    TransposeAxis& a = axes[k];
    a.stride = strides[k], a.dilation = dilations[k];
    a.before = pads[k], a.after = pads[k + spatial];
    const int64_t in = x.dim(static_cast<int>(2 + k)), kernel = ws[2 + k];
    for (const int64_t v : {a.stride, a.dilation}) {
      if (v < 1 || v > 1 << 20) c.fail("strides and dilations must be between 1 and 2^20");
    }
    if (output_padding[k] < 0 || output_padding[k] >= a.stride)
      c.fail("output_padding must be at least 0 and below the stride");
    const int64_t full = (in - 1) * a.stride + (kernel - 1) * a.dilation + 1 + output_padding[k];
    if (!output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      // The pads come from the output's length: output_shape's (the pads given are ignored), or
      // in * stride for SAME. An odd total crops one more at the end for SAME_UPPER, at the
      // start otherwise (ONNX's equations, as ONNX Runtime computes them).
      const int64_t want =
          output_shape.empty() ? in * a.stride : output_shape[output_shape.size() - spatial + k];
      if (want < 1 || want > 1 << 30) c.fail("output_shape must be between 1 and 2^30");
      const int64_t total = full - want;
      if (total < 0 && output_shape.empty()) {
        c.fail("auto_pad " + auto_pad + " where the full output (" + std::to_string(full) +
               ") is shorter than input x stride (" + std::to_string(want) +
               ") is ambiguous: ONNX says in x stride, ONNX Runtime gives the full output");
      }
      a.extend = std::max<int64_t>(0, -total);
      const int64_t cropped = std::max<int64_t>(0, total);
      a.before = auto_pad == "SAME_UPPER" ? cropped / 2 : cropped - cropped / 2;
      a.after = cropped - a.before;
    }
    for (const int64_t pad : {a.before, a.after}) {
      if (pad < 0 || pad > 1 << 20) c.fail("pads must be between 0 and 2^20");
    }
    a.out = full - a.before - a.after;
    if (a.out < 1) c.fail("the output would be empty");
    a.even = std::min(a.before, a.after);
  }
  return axes;
}

}  // namespace

// ConvTranspose (1-D and 2-D): the gradient of a convolution with respect to its input, which is
// what CONV2D_BACKWARD_DATA computes. The input plays the convolution's output gradient and W
// [C_in, C_out / group, kH, kW] is that convolution's weight as it is. Pads (explicit, from
// output_shape, or auto_pad's SAME_UPPER and SAME_LOWER) may differ between the sides
// (transpose_axes); output_padding is below the stride.
void device_conv_transpose(NodeContext& c) {
  Tensor x = dev_float(c, 0), weight = dev_float(c, 1);
  const Ints& ws = c.shape(1);
  if (ws.size() < 3 || ws.size() > 4 || x.rank() != static_cast<int>(ws.size()))
    c.fail("1-D and 2-D ConvTranspose are supported; input and weight ranks must match");
  const bool one_d = ws.size() == 3;
  const int64_t groups = c.attr_int("group", 1);
  if (groups < 1 || x.dim(1) != ws[0] || ws[0] % groups != 0)
    c.fail("group " + std::to_string(groups) + " does not fit input " +
           shape_text(x.shape().to_vector()) + " and weight " + shape_text(ws));
  const std::vector<TransposeAxis> axes = transpose_axes(c, x, ws);
  if (one_d) {
    x = x.unsqueeze(2);
    weight = weight.unsqueeze(2);
  }
  const TransposeAxis height = one_d ? TransposeAxis{} : axes[0], width = axes.back();
  sy_op_params params{};
  const auto i32 = [](int64_t v) { return static_cast<int32_t>(v); };  // checked: <= 2^20
  params.conv2d = {i32(height.stride),
                   i32(width.stride),
                   i32(height.even),
                   i32(width.even),
                   i32(height.dilation),
                   i32(width.dilation),
                   0u,
                   0u};
  if (groups != 1) params.conv2d_grouped.groups = static_cast<uint32_t>(groups);
  const int64_t out_channels = ws[1] * groups;
  Ints y_shape{x.dim(0), out_channels, one_d ? 1 : height.written(), width.written()};
  check_size(c, y_shape);
  Tensor y = empty_like_shape(x, to_shape(c, y_shape));
  run_op(groups == 1 ? SY_OP_CONV2D_BACKWARD_DATA : SY_OP_CONV2D_GROUPED_BACKWARD_DATA, {x, weight},
         {y}, params);
  for (size_t k = 0; k < axes.size(); ++k) {
    const TransposeAxis& a = axes[k];
    const int axis = one_d ? 3 : static_cast<int>(2 + k);
    if (y.dim(axis) != a.out) y = y.narrow(axis, a.before - a.even, a.out).contiguous();
    if (a.extend > 0) y = padded_axis(c, y, axis, 0, a.extend, 0.0);
  }
  if (one_d) y = y.squeeze(2);
  if (c.has(2)) {
    Ints bias_shape(axes.size() + 1, 1);
    bias_shape[0] = out_channels;
    y = y + dev_float(c, 2).reshape(to_shape(c, bias_shape));
  }
  c.set_device(0, y, kFloat);
}

namespace {

// Where output element i of an axis resized from `in` to `out` elements samples the input, as
// Resize's coordinate_transformation_mode says (`scale` is the given scale, or out / in where
// sizes were given).
double resize_source(const NodeContext& c, const std::string& mode, int64_t i, int64_t in,
                     int64_t out, double scale) {
  const auto x = static_cast<double>(i);
  if (mode == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners")
    return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / static_cast<double>(out - 1);
  if (mode == "asymmetric") return x / scale;
  if (mode == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (mode == "half_pixel_symmetric") {  // version 19: centred when in * scale is not whole
    const double adjustment = static_cast<double>(out) / (static_cast<double>(in) * scale);
    return static_cast<double>(in) / 2 * (1 - adjustment) + (x + 0.5) / scale - 0.5;
  }
  c.fail("coordinate_transformation_mode " + mode +
         " is not supported (half_pixel, half_pixel_symmetric, pytorch_half_pixel, "
         "align_corners, asymmetric, tf_half_pixel_for_nn)");
}

int64_t nearest_index(const NodeContext& c, const std::string& mode, double x, int64_t in) {
  double picked = 0;
  if (mode == "round_prefer_floor")
    picked = x == std::floor(x) + 0.5 ? std::floor(x) : std::round(x);
  else if (mode == "round_prefer_ceil")
    picked = std::round(x);  // halves away from zero: up for the coordinates >= -0.5 that matter
  else if (mode == "floor")
    picked = std::floor(x);
  else if (mode == "ceil")
    picked = std::ceil(x);
  else
    c.fail("nearest_mode " + mode + " is not supported");
  // Clamped as a double first: a tiny scale puts the source far outside int64's range.
  return static_cast<int64_t>(
      std::clamp(std::isnan(picked) ? 0.0 : picked, 0.0, static_cast<double>(in - 1)));
}

// Keys' cubic convolution weight of a tap `distance` away, with coefficient a (ONNX's
// cubic_coeff_a: -0.75 by default, PyTorch's bicubic; -0.5 for TensorFlow's).
double cubic_weight(double distance, double a) {
  const double d = std::fabs(distance);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

// The input elements each output element of a resized axis blends: tap k of output i is input
// element at[k][i], weighted by weight[k][i].
struct Taps {
  std::vector<std::vector<int64_t>> at;
  std::vector<std::vector<float>> weight;
  Taps(size_t count, size_t out)
      : at(count, std::vector<int64_t>(out)), weight(count, std::vector<float>(out)) {}
};

// Linear: the two neighbours of the source position clamped to the axis.
Taps linear_taps(const std::vector<double>& sources, int64_t in) {
  Taps taps(2, sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    const double source = sources[i];
    const double clamped =
        std::isnan(source) ? 0.0 : std::clamp(source, 0.0, static_cast<double>(in - 1));
    const auto low = static_cast<int64_t>(std::floor(clamped));
    const auto w = static_cast<float>(clamped - static_cast<double>(low));
    taps.at[0][i] = low;
    taps.at[1][i] = std::min(low + 1, in - 1);
    taps.weight[0][i] = 1.0F - w;
    taps.weight[1][i] = w;
  }
  return taps;
}

// Cubic: four taps around the source position, indices clamped to the axis (its edge repeated),
// or with exclude_outside the outside taps dropped and the weights renormalised.
Taps cubic_taps(const std::vector<double>& sources, int64_t in, double a, bool exclude_outside) {
  Taps taps(4, sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    const double source = std::isfinite(sources[i]) ? sources[i] : 0.0;
    const double base = std::floor(source), t = source - base;
    double w[4], total = 0;
    for (int k = 0; k < 4; ++k) {
      const double position = base - 1 + k;
      w[k] = cubic_weight(t - (k - 1), a);
      if (exclude_outside && (position < 0 || position > static_cast<double>(in - 1))) w[k] = 0;
      total += w[k];
      taps.at[static_cast<size_t>(k)][i] =
          static_cast<int64_t>(std::clamp(position, 0.0, static_cast<double>(in - 1)));
    }
    for (int k = 0; k < 4; ++k) {
      taps.weight[static_cast<size_t>(k)][i] =
          static_cast<float>(exclude_outside && total != 0 ? w[k] / total : w[k]);
    }
  }
  return taps;
}

// The sum over taps of the gathered input elements times their weights, along `axis`.
Tensor blend(NodeContext& c, const Tensor& y, int axis, const Taps& taps) {
  Ints along(static_cast<size_t>(y.rank()), 1);
  along[static_cast<size_t>(axis)] = static_cast<int64_t>(taps.at[0].size());
  Tensor result;
  for (size_t k = 0; k < taps.at.size(); ++k) {
    const Tensor term = index_select(y, axis, host_indices(c, taps.at[k])) *
                        Tensor::from_host(taps.weight[k], to_shape(c, along), c.model().device);
    result = result.defined() ? result + term : term;
  }
  return result;
}

// Version 18's attributes: `axes` (scales or sizes for those axes only, the others kept) and
// `keep_aspect_ratio_policy` (not_larger / not_smaller: sizes give one scale for all the axes, the
// smallest or largest, the lengths rounded half up); then one scale or size per axis. `antialias`
// is refused where it would change the result (a linear or cubic downscale).
void resize_axes(NodeContext& c, size_t rank, std::vector<double>& scales, Ints& sizes) {
  Ints axes = c.attr_ints("axes");
  const size_t given = sizes.empty() ? scales.size() : sizes.size();
  if (!axes.empty()) {
    if (axes.size() != given) c.fail("axes and the scales or sizes must have one length");
    std::vector<double> all_scales(rank, 1.0);
    Ints all_sizes(c.shape(0));
    std::vector<bool> seen(rank, false);
    for (size_t k = 0; k < axes.size(); ++k) {
      const auto a = static_cast<size_t>(normalize(c, axes[k], rank));
      if (seen[a]) c.fail("repeated axes");
      seen[a] = true;
      if (sizes.empty())
        all_scales[a] = scales[k];
      else
        all_sizes[a] = sizes[k];
    }
    if (sizes.empty())
      scales = all_scales;
    else
      sizes = all_sizes;
  } else {
    for (size_t a = 0; a < rank; ++a) axes.push_back(static_cast<int64_t>(a));
  }
  if ((!sizes.empty() && sizes.size() != rank) || (!scales.empty() && scales.size() != rank))
    c.fail("scales or sizes must have one value per axis");
  const std::string policy = c.attr_string("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && !sizes.empty()) {
    if (policy != "not_larger" && policy != "not_smaller")
      c.fail("keep_aspect_ratio_policy " + policy +
             " is not one of stretch, not_larger, "
             "not_smaller");
    double scale = policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
    for (const int64_t axis : axes) {
      const auto a = static_cast<size_t>(normalize(c, axis, rank));
      const int64_t in = c.shape(0)[a];
      if (in == 0) c.fail("cannot resize an empty axis");
      const double s = static_cast<double>(sizes[a]) / static_cast<double>(in);
      scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
    }
    scales.assign(rank, 1.0);  // the coordinates follow the one scale, not length / in
    for (const int64_t axis : axes) {
      const auto a = static_cast<size_t>(normalize(c, axis, rank));
      scales[a] = scale;
      const double length = scale * static_cast<double>(c.shape(0)[a]) + 0.5;
      if (!(length < static_cast<double>(kMaxListedAxis))) c.fail("a resized axis is too long");
      sizes[a] = static_cast<int64_t>(length);
    }
  }
  if (c.attr_int("antialias", 0) != 0 && c.attr_string("mode", "nearest") != "nearest") {
    for (size_t a = 0; a < rank; ++a) {
      const bool down = sizes.empty() ? scales[a] < 1.0 : sizes[a] < c.shape(0)[a];
      if (down) c.fail("antialias with a linear or cubic downscale is not supported");
    }
  }
}

}  // namespace

// Resize, modes nearest, linear and cubic, axis by axis (linear on two axes is bilinear, cubic
// bicubic): each resized axis gathers its source elements (INDEX_SELECT of host-computed
// positions) and, for linear and cubic, blends two or four of them with host-computed weights
// (Taps).
void device_resize(NodeContext& c) {
  const Tensor x = c.dev(0);
  // Upsample (versions 7 and 9) and Resize-10 take (X, scales) and resize as Resize's asymmetric
  // mode does, rounding down to the nearest source; Resize-11 on takes (X, roi, scales, sizes).
  const bool scales_only = c.node().op == "Upsample" || c.version() < 11;
  std::string mode = c.attr_string("mode", "nearest");
  if (c.node().op == "Upsample" && mode == "bilinear") mode = "linear";
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    c.fail("mode " + mode + " is not supported");
  if (mode != "nearest" && !is_float_type(c.type(0)))
    c.fail(mode + " on integers (its rounding back to the type) is not supported");
  const double cubic_a = static_cast<double>(c.attr_float("cubic_coeff_a", -0.75F));
  const bool exclude_outside = c.attr_int("exclude_outside", 0) != 0;
  const std::string transform =
      scales_only ? "asymmetric" : c.attr_string("coordinate_transformation_mode", "half_pixel");
  const std::string nearest =
      scales_only ? "floor" : c.attr_string("nearest_mode", "round_prefer_floor");
  const auto rank = static_cast<size_t>(x.rank());
  const size_t scales_input = scales_only ? 1 : 2;
  std::vector<double> scales;
  Ints sizes;
  if (!scales_only && c.has(3) && numel_of(c.shape(3)) > 0) {
    sizes = c.ints(3);
  } else if (c.has(scales_input) && numel_of(c.shape(scales_input)) > 0) {
    // An integer scales input (a hostile file) has no float values: refused, not read as none.
    const HostTensor& given = c.host_values(scales_input);
    if (!given.is_float())
      c.fail("scales must be a float tensor, got " + elem_type_name(given.type));
    for (int64_t k = 0; k < given.numel(); ++k) scales.push_back(given.at(k));
  } else {
    c.fail("needs scales or sizes");
  }
  resize_axes(c, rank, scales, sizes);
  if (scales_only && mode == "nearest") {
    for (const double scale : scales) {
      if (scale < 1.0) {
        c.fail(
            "nearest with a scale below 1 before opset 11 is ambiguous (ONNX Runtime rounds "
            "the source index up, PyTorch down); re-export at opset 11 or later");
      }
    }
  }
  Tensor y = mode == "nearest" ? x : dev_float(c, 0);
  for (size_t a = 0; a < rank; ++a) {
    const int axis = static_cast<int>(a);
    const int64_t in = x.dim(axis);
    double scale = 0;
    int64_t out = 0;
    if (!sizes.empty()) {
      out = sizes[a];
      scale = !scales.empty() ? scales[a]
              : in > 0        ? static_cast<double>(out) / static_cast<double>(in)
                              : 1.0;
    } else {
      scale = scales[a];
      if (!(scale > 0) || !std::isfinite(scale)) c.fail("scales must be positive");
      out = static_cast<int64_t>(std::floor(static_cast<double>(in) * scale));
      // align_corners divides by the resized length less 1: ONNX's reference takes in * scale,
      // others the whole output length. Only where they agree.
      if (transform == "align_corners" &&
          static_cast<double>(out) != static_cast<double>(in) * scale)
        c.fail("align_corners with a scale whose output length is not whole is not supported");
    }
    if (out < 0 || out > kMaxListedAxis) c.fail("a resized axis must be 0 to 2^24 long");
    if (out == in && scale == 1.0 && transform != "tf_half_pixel_for_nn") continue;  // identity
    if (in == 0) c.fail("cannot resize an empty axis");
    with_extent(c, y, axis, out);  // checks the resized size
    std::vector<double> sources(static_cast<size_t>(out));
    for (int64_t i = 0; i < out; ++i)
      sources[static_cast<size_t>(i)] = resize_source(c, transform, i, in, out, scale);
    if (mode == "nearest") {
      std::vector<int64_t> picks(sources.size());
      for (size_t i = 0; i < sources.size(); ++i)
        picks[i] = nearest_index(c, nearest, sources[i], in);
      y = index_select(y, axis, host_indices(c, picks));
    } else {
      y = blend(c, y, axis,
                mode == "linear" ? linear_taps(sources, in)
                                 : cubic_taps(sources, in, cubic_a, exclude_outside));
    }
  }
  c.set_device(0, y, mode == "nearest" ? c.type(0) : kFloat);
}

// PRelu: max(x, 0) + slope * min(x, 0), the slope broadcast as ONNX says (one of the two terms is
// 0, so each element is exactly x or slope * x).
void device_prelu(NodeContext& c) {
  const Tensor x = dev_float(c, 0), slope = dev_float(c, 1);
  c.set_device(0, maximum(x, 0.0) + slope * minimum(x, 0.0), kFloat);
}

}  // namespace switchyard::onnx_detail
