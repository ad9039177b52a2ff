// ONNX pools that the 2-D pool ops (MAX_POOL2D, AVG_POOL2D) do not say
// (formats/onnx_ops_internal.h): dilated windows, 3-D windows with ceil_mode, and LpPool, over 1 to
// 3 spatial axes. Max, sum and the p-th power sum are separable, so the window is taken one axis at
// a time: the input is padded explicitly to the windows' extent, and along each axis the kernel's
// taps (the slices j * stride + t * dilation, j < out) are combined with maximum or addition.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "formats/onnx_ops_internal.h"
#include "switchyard/ops.h"

namespace switchyard::onnx_detail {

namespace {

constexpr int64_t kMaxTaps = 1024;

struct TapAxis {
  int64_t in = 0, kernel = 1, stride = 1, dilation = 1, begin = 0, end = 0, out = 0;
};

int64_t span_of(const TapAxis& a) {
  return (a.kernel - 1) * a.dilation + 1;
}

// How many of window j's taps (positions j * stride - begin + t * dilation, t < kernel) lie in
// [low, high): the t from ceil((low - start) / dilation) to before ceil((high - start) / dilation).
int64_t taps_within(const TapAxis& a, int64_t j, int64_t low, int64_t high) {
  const int64_t start = j * a.stride - a.begin;
  const auto first_at_or_after = [&](int64_t bound) {
    const int64_t gap = bound - start;
    const int64_t t = gap <= 0 ? 0 : (gap + a.dilation - 1) / a.dilation;
    return std::min(t, a.kernel);
  };
  return std::max<int64_t>(0, first_at_or_after(high) - first_at_or_after(low));
}

// The window's axes: kernel, stride, dilation, the declared pads (auto_pad NOTSET, VALID or
// SAME_*) and the output length. ceil_mode adds a last partial window where it starts inside the
// input or its leading pad (ONNX since 1.16, ONNX Runtime and PyTorch drop one that would start
// in the trailing pad). A window whose taps all fall in padding is refused: it has no element.
std::vector<TapAxis> tap_axes(NodeContext& c, const Ints& x_shape) {
  const size_t spatial = x_shape.size() - 2;
  const Ints kernel = c.attr_ints("kernel_shape");
  if (kernel.size() != spatial)
    c.fail("kernel_shape must have " + std::to_string(spatial) + " values");
  Ints strides = c.attr_ints("strides"), dilations = c.attr_ints("dilations"),
       pads = c.attr_ints("pads");
  if (strides.empty()) strides.assign(spatial, 1);
  if (dilations.empty()) dilations.assign(spatial, 1);
  if (pads.empty()) pads.assign(2 * spatial, 0);
  if (strides.size() != spatial || dilations.size() != spatial || pads.size() != 2 * spatial)
    c.fail("strides, dilations and pads do not fit the kernel");
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  const bool ceil_mode = c.attr_int("ceil_mode", 0) != 0;
  std::vector<TapAxis> axes(spatial);
  for (size_t k = 0; k < spatial; ++k) {
    TapAxis& a = axes[k];
    a.in = x_shape[2 + k], a.kernel = kernel[k], a.stride = strides[k], a.dilation = dilations[k];
    for (const int64_t v : {a.kernel, a.stride, a.dilation}) {
      if (v < 1 || v > (1 << 20))
        c.fail("kernel_shape, strides and dilations must be between 1 and 2^20");
    }
    // An op per tap: a hostile kernel of 2^20 would queue a million of them.
    if (a.kernel > kMaxTaps) {
      c.fail("kernel_shape " + std::to_string(a.kernel) + " is more than the " +
             std::to_string(kMaxTaps) + " taps per axis this pool takes (dilations, ceil_mode " +
             "on 3 axes, LpPool)");
    }
    if ((auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") && a.dilation != 1) {
      c.fail("auto_pad " + auto_pad +
             " with dilations is ambiguous for a pool: ONNX pads for the dilated window, ONNX "
             "Runtime for the undilated one; give the pads explicitly");
    }
    const auto [begin, end] =
        window_pads(c, auto_pad, a.in, a.kernel, a.stride, a.dilation, pads[k], pads[k + spatial]);
    a.begin = begin, a.end = end;
    const int64_t room = a.in + a.begin + a.end - span_of(a);
    if (room < 0) c.fail("the window is larger than the padded input " + shape_text(x_shape));
    a.out = room / a.stride + 1;
    if (ceil_mode && room % a.stride != 0 && a.out * a.stride < a.in + a.begin) ++a.out;
    for (int64_t j = 0; j < a.out; ++j) {
      if (taps_within(a, j, 0, a.in) == 0) c.fail("a window lies wholly in the padding");
    }
  }
  return axes;
}

// Along `axis`, the combination (maximum or sum) of the kernel's taps of `y`, padded to the
// windows' extent.
Tensor combined_taps(NodeContext& c, const Tensor& y, int axis, const TapAxis& a, bool max) {
  Tensor out;
  std::vector<int64_t> picks(static_cast<size_t>(a.out));
  for (int64_t t = 0; t < a.kernel; ++t) {
    for (int64_t j = 0; j < a.out; ++j)
      picks[static_cast<size_t>(j)] = j * a.stride + t * a.dilation;
    const Tensor tap =
        index_select(y, axis, Tensor::from_host(picks, Shape{a.out}, c.model().device));
    out = !out.defined() ? tap : max ? maximum(out, tap) : out + tap;
  }
  return out;
}

// How many of each window's taps an average counts: those on the input, and with
// count_include_pad 1 those on the declared pads (never the ceil-mode extension beyond them, as
// PyTorch counts), as a [out] tensor shaped to divide along `axis` of a tensor of `rank`.
Tensor tap_counts(NodeContext& c, const TapAxis& a, int axis, int rank, bool include_pad) {
  const int64_t low = include_pad ? -a.begin : 0, high = include_pad ? a.in + a.end : a.in;
  std::vector<float> counts(static_cast<size_t>(a.out));
  for (int64_t j = 0; j < a.out; ++j)
    counts[static_cast<size_t>(j)] = static_cast<float>(taps_within(a, j, low, high));
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  shape[static_cast<size_t>(axis)] = a.out;
  return Tensor::from_host(counts, Shape(shape), c.model().device);
}

}  // namespace

void device_tapped_pool(NodeContext& c, PoolKind kind) {
  if (c.output_used(1)) c.fail("the Indices output is not supported");
  const Tensor x = dev_float(c, 0);
  if (x.rank() < 3 || x.rank() > 5)
    c.fail("only 1-D, 2-D and 3-D windows are supported, got input " + x.shape().to_string());
  const std::vector<TapAxis> axes = tap_axes(c, x.shape().to_vector());
  Ints out_shape = {x.dim(0), x.dim(1)};
  for (const TapAxis& a : axes) out_shape.push_back(a.out);
  check_size(c, out_shape);
  const bool max = kind == PoolKind::max;
  int64_t p = 2;
  if (kind == PoolKind::lp) {
    p = c.attr_int("p", 2);
    if (p < 1 || p > 64) c.fail("p " + std::to_string(p) + " must be between 1 and 64");
  }
  // LpPool sums |x|^p; the padding is zeros for sums and -inf (which never wins) for maximum.
  Tensor y = kind == PoolKind::lp ? (p == 1 ? abs(x) : pow(abs(x), static_cast<double>(p))) : x;
  const double fill = max ? -std::numeric_limits<double>::infinity() : 0.0;
  for (size_t k = 0; k < axes.size(); ++k) {
    const TapAxis& a = axes[k];
    const int axis = static_cast<int>(k) + 2;
    const int64_t after = (a.out - 1) * a.stride + span_of(a) - a.in - a.begin;
    y = combined_taps(c, padded_axis(c, y, axis, a.begin, after, fill), axis, a, max);
    if (kind == PoolKind::average) {
      const bool include_pad = c.attr_int("count_include_pad", 0) != 0;
      y = y / tap_counts(c, a, axis, x.rank(), include_pad);
    }
  }
  if (kind == PoolKind::lp && p != 1) y = pow(y, 1.0 / static_cast<double>(p));
  c.set_device(0, y.contiguous(), max ? c.type(0) : kFloat);
}

bool needs_tapped_pool(NodeContext& c) {
  for (const int64_t d : c.attr_ints("dilations")) {
    if (d != 1) return true;
  }
  return c.shape(0).size() == 5 && c.attr_int("ceil_mode", 0) != 0;
}

}  // namespace switchyard::onnx_detail
