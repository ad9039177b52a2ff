// ONNX Conv, MaxPool and AveragePool over three spatial axes (torchvision's video models: r3d_18,
// mc3_18, r2plus1d_18), composed of CONV2D and the 2-D pools (formats/onnx_ops_internal.h). x [N,
// C, D, H, W], W [M, C / group, kD, kH, kW]: for each kernel depth tap k, the input's depth slices
// d sD + k dD - pD_begin (zeros where they fall in the depth padding) are a batch of N * D_out
// images convolved with W[:, :, k]; the kD results are summed and the bias added once.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "formats/onnx_ops_internal.h"
#include "switchyard/device.h"
#include "switchyard/ops.h"

namespace switchyard::onnx_detail {

namespace {

struct Axis3 {
  int64_t kernel = 1, stride = 1, dilation = 1, begin = 0, end = 0, out = 0;
};

// The three axes' kernel, stride, dilation and pads (auto_pad NOTSET, VALID or SAME_*), each
// between 1 (0 for pads) and 2^20, and the output length.
std::vector<Axis3> axes_of_window3d(NodeContext& c, const Ints& x_shape, const Ints& kernel) {
  Ints strides = c.attr_ints("strides"), dilations = c.attr_ints("dilations"),
       pads = c.attr_ints("pads");
  if (strides.empty()) strides.assign(3, 1);
  if (dilations.empty()) dilations.assign(3, 1);
  if (pads.empty()) pads.assign(6, 0);
  if (kernel.size() != 3) c.fail("kernel_shape must have 3 values, got " + shape_text(kernel));
  if (strides.size() != 3 || dilations.size() != 3 || pads.size() != 6)
    c.fail("strides, dilations and pads do not fit a 3-D kernel");
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  std::vector<Axis3> axes(3);
  for (size_t k = 0; k < 3; ++k) {
    Axis3& a = axes[k];
    a.kernel = kernel[k], a.stride = strides[k], a.dilation = dilations[k];
    for (const int64_t v : {a.kernel, a.stride, a.dilation}) {
      if (v < 1 || v > (1 << 20))
        c.fail("kernel_shape, strides and dilations must be between 1 and 2^20");
    }
    const int64_t in = x_shape[2 + k], span = (a.kernel - 1) * a.dilation + 1;
    const auto [begin, end] =
        window_pads(c, auto_pad, in, a.kernel, a.stride, a.dilation, pads[k], pads[k + 3]);
    a.begin = begin, a.end = end;
    const int64_t padded = in + a.begin + a.end;
    if (padded < span) c.fail("the kernel is larger than the padded input " + shape_text(x_shape));
    a.out = (padded - span) / a.stride + 1;
  }
  return axes;
}

}  // namespace

std::pair<int64_t, int64_t> window_pads(NodeContext& c, const std::string& auto_pad, int64_t in,
                                        int64_t kernel, int64_t stride, int64_t dilation,
                                        int64_t begin, int64_t end) {
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    const int64_t total = same_padding(in, kernel, stride, dilation);
    begin = auto_pad == "SAME_LOWER" ? total - total / 2 : total / 2;
    end = total - begin;
  } else if (auto_pad == "VALID") {
    begin = end = 0;
  } else if (auto_pad != "NOTSET") {
    c.fail("auto_pad " + auto_pad + " is not supported");
  }
  if (begin < 0 || end < 0 || begin > (1 << 20) || end > (1 << 20))
    c.fail("pads must be between 0 and 2^20");
  return {begin, end};
}

namespace {

std::vector<Axis3> axes_of_conv3d(NodeContext& c, const Ints& x_shape, const Ints& w_shape) {
  const Ints kernel(w_shape.begin() + 2, w_shape.end());
  const Ints declared = c.attr_ints("kernel_shape");
  if (!declared.empty() && declared != kernel)
    c.fail("kernel_shape " + shape_text(declared) + " does not match the weight " +
           shape_text(w_shape));
  return axes_of_window3d(c, x_shape, kernel);
}

// x's depth slices d * stride + k (k a tap of the depth window), d < out.
Tensor depth_taps(NodeContext& c, const Tensor& x, const Axis3& depth, int64_t k) {
  std::vector<int64_t> picks(static_cast<size_t>(depth.out));
  for (int64_t d = 0; d < depth.out; ++d)
    picks[static_cast<size_t>(d)] = d * depth.stride + k * depth.dilation;
  return index_select(x, 2, Tensor::from_host(picks, Shape{depth.out}, c.model().device));
}

// x [N, C, D, H, W] padded on all three axes with `value`, each depth slice pooled over height
// and width (no padding left), the result [N, C, D_padded, H_out, W_out].
Tensor pooled_slices(NodeContext& c, const Tensor& x, const std::vector<Axis3>& a, double value,
                     bool max) {
  Tensor padded = x;
  for (int k = 0; k < 3; ++k)
    padded = padded_axis(c, padded, 2 + k, a[static_cast<size_t>(k)].begin,
                         a[static_cast<size_t>(k)].end, value);
  const int64_t n = padded.dim(0), ch = padded.dim(1), depth = padded.dim(2);
  Pool2dOptions options;
  options.kernel_h = static_cast<int>(a[1].kernel),
  options.kernel_w = static_cast<int>(a[2].kernel);
  options.stride_h = static_cast<int>(a[1].stride),
  options.stride_w = static_cast<int>(a[2].stride);
  const Tensor images = padded.permute({0, 2, 1, 3, 4})
                            .contiguous()
                            .reshape(Shape{n * depth, ch, padded.dim(3), padded.dim(4)});
  const Tensor y = max ? max_pool2d(images, options) : avg_pool2d(images, options);
  return y.contiguous().reshape(Shape{n, depth, ch, y.dim(2), y.dim(3)}).permute({0, 2, 1, 3, 4});
}

// The 3-D max or average pool of x: its slices pooled over height and width (pooled_slices), then
// the depth window's taps combined (their maximum, or their mean).
Tensor pooled(NodeContext& c, const Tensor& x, const std::vector<Axis3>& a, bool max) {
  const double fill = max ? -std::numeric_limits<double>::infinity() : 0.0;
  const Tensor slices = pooled_slices(c, x, a, fill, max);
  Tensor y;
  for (int64_t k = 0; k < a[0].kernel; ++k) {
    const Tensor tap = depth_taps(c, slices, a[0], k);
    y = !y.defined() ? tap : max ? maximum(y, tap) : y + tap;
  }
  return max ? y : y * (1.0 / static_cast<double>(a[0].kernel));
}

}  // namespace

Tensor conv3d(NodeContext& c) {
  const Tensor x = dev_float(c, 0), weight = dev_float(c, 1);
  const Ints& ws = c.shape(1);
  const Ints xs = x.shape().to_vector();
  const int64_t groups = c.attr_int("group", 1), channels = xs[1], out_channels = ws[0];
  if (groups < 1 || channels % groups != 0 || out_channels % groups != 0 ||
      ws[1] * groups != channels) {
    c.fail("group " + std::to_string(groups) + " does not fit " + std::to_string(channels) +
           " input channels and weight " + shape_text(ws));
  }
  const std::vector<Axis3> a = axes_of_conv3d(c, xs, ws);
  const int64_t n = xs[0], depth_out = a[0].out;
  check_size(c, {n, out_channels, depth_out, a[1].out, a[2].out});
  Conv2dOptions options;
  options.stride_h = static_cast<int>(a[1].stride),
  options.stride_w = static_cast<int>(a[2].stride);
  options.dilation_h = static_cast<int>(a[1].dilation);
  options.dilation_w = static_cast<int>(a[2].dilation);
  options.groups = static_cast<int>(groups);
  // Each depth tap's [M, C / group, kH, kW] weights: made once from an initializer (then the
  // convolutions may keep them converted), else each run.
  struct Taps {
    std::vector<Tensor> taps;
  };
  const auto make_taps = [&] {
    auto out = std::make_shared<Taps>();
    for (int64_t k = 0; k < a[0].kernel; ++k) {
      out->taps.push_back(
          weight.narrow(2, k, 1).contiguous().reshape(Shape{out_channels, ws[1], ws[3], ws[4]}));
    }
    return out;
  };
  options.constant_weight = c.constant(1);
  const std::shared_ptr<Taps> taps =
      options.constant_weight ? c.cached<Taps>("conv3d taps", make_taps) : make_taps();
  // Depth is padded here, and so is what one side of height or width has beyond the other.
  int64_t even_h = 0, even_w = 0;
  Tensor padded = padded_axis(c, x, 2, a[0].begin, a[0].end, 0.0);
  padded = unevenly_padded(c, padded, 3, a[1].begin, a[1].end, even_h);
  padded = unevenly_padded(c, padded, 4, a[2].begin, a[2].end, even_w);
  options.pad_h = static_cast<int>(even_h), options.pad_w = static_cast<int>(even_w);
  Tensor sum;
  for (int64_t k = 0; k < a[0].kernel; ++k) {
    const Tensor slices = depth_taps(c, padded, a[0], k);
    // [N, C, D_out, H, W] -> [N * D_out, C, H, W]
    const Tensor images =
        slices.permute({0, 2, 1, 3, 4})
            .contiguous()
            .reshape(Shape{n * depth_out, channels, padded.dim(3), padded.dim(4)});
    const Tensor y = conv2d(images, taps->taps[static_cast<size_t>(k)], Tensor(), options);
    sum = sum.defined() ? sum + y : y;
  }
  // [N * D_out, M, H_out, W_out] -> [N, M, D_out, H_out, W_out]
  Tensor y = sum.contiguous()
                 .reshape(Shape{n, depth_out, out_channels, sum.dim(2), sum.dim(3)})
                 .permute({0, 2, 1, 3, 4});
  if (c.has(2)) y = y + dev_float(c, 2).reshape(Shape{out_channels, 1, 1, 1});
  return y.contiguous();
}

// MaxPool and AveragePool over three spatial axes (pooled). An average that leaves the pads out
// (count_include_pad 0) is divided by the same average of a mask of the input. ceil_mode and
// dilations go to device_tapped_pool (device_pool); the Indices output is refused.
void device_pool3d(NodeContext& c, bool max) {
  if (c.output_used(1)) c.fail("the Indices output is not supported");
  const Tensor x = dev_float(c, 0);
  const std::vector<Axis3> a =
      axes_of_window3d(c, x.shape().to_vector(), c.attr_ints("kernel_shape"));
  check_size(c, {x.dim(0), x.dim(1), a[0].out, a[1].out, a[2].out});
  Tensor y = pooled(c, x, a, max);
  if (!max && c.attr_int("count_include_pad", 0) == 0) y = y / pooled(c, ones_like(x), a, false);
  c.set_device(0, y.contiguous(), kFloat);
}

}  // namespace switchyard::onnx_detail
