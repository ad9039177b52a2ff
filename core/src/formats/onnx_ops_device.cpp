// ONNX ops on the device, composed of switchyard's op set (formats/onnx_ops_internal.h).
// Semantics are ONNX's, at the op's version (onnx_opset.h); an attribute value that is not
// supported fails the node with a message naming it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "formats/onnx_ops_internal.h"
#include "switchyard/device.h"
#include "switchyard/ops.h"
#include "switchyard/plugin.h"

namespace switchyard::onnx_detail {

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
namespace {

// An initializer as a product's weight: its bytes never change, so a backend may keep it in its
// own layout (MatmulOptions::constant_weight).
MatmulOptions weight_options(const NodeContext& c, size_t k) {
  return MatmulOptions{.constant_weight = c.host(k) != nullptr && c.host(k)->is_float()};
}

}  // namespace

// ---- device ops ---------------------------------------------------------------------------------

namespace {
// x [..., K] as the rows [prod(...), K] (counted, not -1: K may be 0).
Tensor as_rows(const Tensor& x) {
  int64_t rows = 1;
  for (int axis = 0; axis + 1 < x.rank(); ++axis) rows *= x.dim(axis);
  return x.reshape(Shape{rows, x.dim(-1)});
}
}  // namespace

Tensor onnx_matmul(const NodeContext& c, Tensor a, Tensor b, const MatmulOptions& options) {
  if (a.rank() > 2 && b.rank() == 2) {  // a shared matrix: fold a's leading axes into rows
    Ints shape = a.shape().to_vector();
    const Tensor y = matmul(as_rows(a), b, false, false, options);
    shape.back() = b.dim(1);
    return reshaped(c, y, shape);
  }
  const bool vec_a = a.rank() == 1, vec_b = b.rank() == 1;
  if (vec_a) a = a.unsqueeze(0);
  if (vec_b) b = b.unsqueeze(1);
  Tensor y = matmul(a, b, false, false, options);
  if (vec_a) y = y.squeeze(-2);
  if (vec_b) y = y.squeeze(-1);
  return y;
}

void device_matmul(NodeContext& c) {
  c.set_device(0, onnx_matmul(c, dev_float(c, 0), dev_float(c, 1), weight_options(c, 1)), kFloat);
}
namespace {

struct LinearWeights {
  Tensor weight, bias;
};

// x @ weight^T + bias with x's leading axes folded into rows: one [rows, K] product, whatever
// x's strides (a [T, B, E] view of a transposed sequence would otherwise be T products of B rows).
// The weight is made from an initializer at load: constant.
Tensor folded_linear(const NodeContext& c, const Tensor& x, const Tensor& weight,
                     const Tensor& bias) {
  const MatmulOptions options{.constant_weight = true};
  // A vector x [K] is MatMul's one row: [K] @ [K, N] -> [N].
  if (x.rank() == 1) return linear(x.unsqueeze(0), weight, bias, options).squeeze(0);
  if (x.rank() == 2) return linear(x, weight, bias, options);
  Ints shape = x.shape().to_vector();
  const Tensor y = linear(as_rows(x), weight, bias, options);
  shape.back() = weight.dim(0);
  return reshaped(c, y, shape);
}
}  // namespace

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

namespace {

// Whether `mask` (right-aligned) broadcasts to the scores q k^T without growing them.
bool broadcasts_into(const Tensor& mask, const Tensor& q, const Tensor& k_t) {
  if (mask.rank() > q.rank()) return false;
  for (int axis = 1; axis <= mask.rank(); ++axis) {
    const int64_t extent = axis == 1 ? k_t.dim(-1) : q.dim(-axis);
    if (mask.dim(-axis) != 1 && mask.dim(-axis) != extent) return false;
  }
  return true;
}

}  // namespace

// fuse_attention's node: softmax(q k^T * scale + mask) v as one scaled_dot_product_attention
// over [B, H, T, D] (rank-3 [B * H, T, D] operands get a leading 1). Operands the op cannot
// take as they are (other ranks, batch axes that broadcast, a mask that would grow the scores)
// run the nodes' own ops.
void device_attention(NodeContext& c) {
  const Node& node = c.node();
  const Tensor q = dev_float(c, 0), k_t = dev_float(c, 1), v = dev_float(c, 2);
  const Tensor mask = c.has(3) ? dev_float(c, 3) : Tensor();
  const int rank = q.rank();
  bool direct = (rank == 3 || rank == 4) && k_t.rank() == rank && v.rank() == rank &&
                k_t.dim(-2) == q.dim(-1) && v.dim(-2) == k_t.dim(-1);
  for (int axis = 0; direct && axis < rank - 2; ++axis) {
    direct = k_t.dim(axis) == q.dim(axis) && v.dim(axis) == q.dim(axis);
  }
  if (!direct || (mask.defined() && !broadcasts_into(mask, q, k_t))) {
    Tensor scores = matmul(q, k_t) * node.scale;
    if (mask.defined()) scores = scores + mask;
    c.set_device(0, lifted(c, matmul(softmax(scores, -1), v), node.lift_rank), kFloat);
    return;
  }
  const auto four = [rank](const Tensor& t) { return rank == 3 ? t.unsqueeze(0) : t; };
  AttentionOptions options;
  options.scale = node.scale;
  const int64_t target = q.dim(-2), source = k_t.dim(-1);
  if (node.causal && mask.defined() && target == source && mask.dim(-1) == source) {
    options.is_causal = true;
  } else if (mask.defined()) {
    options.attn_mask = mask;
  }
  Tensor out = scaled_dot_product_attention(four(q), four(k_t).transpose(-2, -1), four(v), options);
  c.set_device(0, lifted(c, rank == 3 ? out.squeeze(0) : out, node.lift_rank), kFloat);
}

void device_gemm(NodeContext& c) {
  const float alpha = c.attr_float("alpha", 1.0F), beta = c.attr_float("beta", 1.0F);
  const bool ta = c.attr_int("transA", 0) != 0, tb = c.attr_int("transB", 0) != 0;
  const Tensor a = dev_float(c, 0), b = dev_float(c, 1);
  if (a.rank() != 2 || b.rank() != 2) c.fail("A and B must be matrices");
  const bool bias_vector = c.has(2) && c.shape(2).size() == 1;
  const MatmulOptions options = weight_options(c, 1);
  if (alpha == 1.0F && beta == 1.0F && !ta && tb && (!c.has(2) || bias_vector)) {
    c.set_device(0, linear(a, b, c.has(2) ? dev_float(c, 2) : Tensor(), options), kFloat);
    return;
  }
  Tensor y = matmul(a, b, ta, tb, options);
  if (alpha != 1.0F) y = y * static_cast<double>(alpha);
  if (c.has(2)) {
    Tensor bias = dev_float(c, 2);
    if (beta != 1.0F) bias = bias * static_cast<double>(beta);
    y = y + bias;
  }
  c.set_device(0, y, kFloat);
}
namespace {

// Spatial attributes of Conv and the pools, for 1-D or 2-D windows.
// ph and pw pad both sides; ph_end and pw_end are the pads after, which differ from ph and pw
// only where window_of was asked to allow that (the pools, which pad explicitly then).
struct Window {
  int kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, ph_end = 0, pw_end = 0;
  bool one_d = false;
};

Window window_of(NodeContext& c, const Ints& x_shape, Ints kernel, bool asymmetric_ok = false) {
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
      const int64_t total = same_padding(x_shape[2 + k], kernel[k], strides[k], dilations[k]);
      if (total % 2 != 0 && !asymmetric_ok)
        c.fail("auto_pad " + auto_pad + " needs uneven padding here, which is not supported");
      // The odd one goes at the end (SAME_UPPER) or at the start (SAME_LOWER).
      const bool lower = auto_pad == "SAME_LOWER";
      pads[k] = lower ? total - total / 2 : total / 2;
      pads[k + spatial] = total - pads[k];
    }
  } else if (auto_pad != "NOTSET") {
    c.fail("auto_pad " + auto_pad + " is not supported");
  }
  if (strides.size() != spatial || dilations.size() != spatial || pads.size() != spatial * 2) {
    c.fail("strides, dilations and pads do not fit the kernel");
  }
  for (size_t k = 0; k < spatial; ++k) {
    if (pads[k] != pads[k + spatial] && !asymmetric_ok)
      c.fail("asymmetric pads " + shape_text(pads) + " are not supported");
    for (const int64_t v : {kernel[k], strides[k], dilations[k]}) {
      if (v < 1 || v > 1 << 20)
        c.fail("kernel_shape, strides and dilations must be between 1 and 2^20");
    }
    for (const int64_t pad : {pads[k], pads[k + spatial]}) {
      if (pad < 0 || pad > 1 << 20) c.fail("pads must be between 0 and 2^20");
    }
  }
  const auto at = [&](const Ints& v, size_t k) { return static_cast<int>(v[k]); };
  if (w.one_d) {
    w.kw = at(kernel, 0), w.sw = at(strides, 0), w.pw = at(pads, 0), w.dw = at(dilations, 0);
    w.pw_end = at(pads, 1);
  } else {
    w.kh = at(kernel, 0), w.kw = at(kernel, 1), w.sh = at(strides, 0), w.sw = at(strides, 1);
    w.ph = at(pads, 0), w.pw = at(pads, 1), w.dh = at(dilations, 0), w.dw = at(dilations, 1);
    w.ph_end = at(pads, 2), w.pw_end = at(pads, 3);
  }
  return w;
}

Tensor as_2d(const Tensor& x, bool one_d) {
  return one_d ? x.unsqueeze(2) : x;
}
Tensor from_2d(const Tensor& y, bool one_d) {
  return one_d ? y.squeeze(2) : y;
}

// A 2-D convolution's input, converted once to channels-last where the device runs convolutions
// fastest that way (SY_CAP_CHANNELS_LAST): the output follows its input's layout, and so do the
// elementwise ops and pools after it, so one conversion at the network's first convolution
// serves the whole network. An input with one pixel ([N, C, 1, 1]) is the same bytes either way.
Tensor conv_input(const Tensor& x, bool one_d) {
  if (one_d) return as_2d(x, one_d);
  const bool channels_last =
      (x.device()->plugin().capabilities() & SY_CAP_CHANNELS_LAST) != 0 && x.dim(2) * x.dim(3) > 1;
  return channels_last ? to_channels_last(x) : x;
}

// A Conv's input with the uneven part of its pads added (unevenly_padded); `w` keeps the even part.
Tensor evenly_padded(NodeContext& c, const Tensor& x, Window& w) {
  Tensor y = x;
  const auto pad = [&](int axis, int& before, int& after) {
    int64_t even = 0;
    y = unevenly_padded(c, y, axis, before, after, even);
    before = after = static_cast<int>(even);
  };
  if (!w.one_d) pad(2, w.ph, w.ph_end);
  pad(w.one_d ? 2 : 3, w.pw, w.pw_end);
  return y;
}
}  // namespace

namespace {

// A 1-D or 2-D Conv's window, x with the uneven part of its pads added, and CONV2D's options, from
// the node's attributes (auto_pad, pads, strides, dilations) and `groups`; the weight's shape `ws`
// is ONNX's [M, C / groups, k...].
struct ConvCall {
  Window window;
  Tensor x;
  Conv2dOptions options;
};

ConvCall conv_call(NodeContext& c, const Tensor& x, const Ints& ws, int64_t groups) {
  if (ws.size() < 3 || x.rank() != static_cast<int>(ws.size()))
    c.fail("input and weight ranks differ or are below 3");
  ConvCall call;
  call.window = window_of(c, x.shape().to_vector(), Ints(ws.begin() + 2, ws.end()), true);
  call.x = evenly_padded(c, x, call.window);
  const int64_t channels = x.dim(1), out_channels = ws[0];
  if (groups < 1 || channels % groups != 0 || out_channels % groups != 0 ||
      ws[1] * groups != channels) {
    c.fail("group " + std::to_string(groups) + " does not fit " + std::to_string(channels) +
           " input channels and weight " + shape_text(ws));
  }
  const Window& w = call.window;
  // A dilated kernel longer than the padded input has no output (CONV2D would be handed a
  // negative extent).
  const auto fits = [&](int axis, int kernel, int dilation, int pad) {
    const int64_t span = int64_t{dilation} * (kernel - 1) + 1;
    const int64_t padded = call.x.dim(axis) + 2 * int64_t{pad};
    if (padded < span) {
      c.fail("the kernel spans " + std::to_string(span) + " elements but the padded input has " +
             std::to_string(padded) + " along axis " + std::to_string(axis) + " of " +
             shape_text(x.shape().to_vector()));
    }
  };
  if (!w.one_d) fits(2, w.kh, w.dh, w.ph);
  fits(w.one_d ? 2 : 3, w.kw, w.dw, w.pw);
  Conv2dOptions& options = call.options;
  options.stride_h = w.sh, options.stride_w = w.sw, options.pad_h = w.ph, options.pad_w = w.pw;
  options.dilation_h = w.dh, options.dilation_w = w.dw;
  options.groups = static_cast<int>(groups);
  return call;
}

}  // namespace

Tensor onnx_conv(NodeContext& c, const Tensor& x, const Tensor& weight, const Tensor& bias,
                 int64_t groups) {
  ConvCall call = conv_call(c, x, weight.shape().to_vector(), groups);
  const bool one_d = call.window.one_d;
  return from_2d(conv2d(conv_input(call.x, one_d), as_2d(weight, one_d), bias, call.options),
                 one_d);
}

// Conv, and switchyard.Conv (fuse_conv): the same convolution with the fused node's epilogue.
void device_conv(NodeContext& c) {
  const Node& node = c.node();
  if (c.shape(1).size() == 5) {  // 3-D, then a fused epilogue (Add, Relu, Clip, SiLU) after it
    Tensor y = conv3d(c);
    if (node.op == "switchyard.Conv") {
      ConvEpilogue epilogue;
      epilogue.activation = node.activation;
      epilogue.low = node.low;
      epilogue.high = node.high;
      if (node.residual) epilogue.residual = dev_float(c, 3);
      y = conv_epilogue(y, epilogue);
    }
    c.set_device(0, y, kFloat);
    return;
  }
  const Tensor weight = dev_float(c, 1);
  const Tensor bias = c.has(2) ? dev_float(c, 2) : Tensor();
  ConvCall call = conv_call(c, dev_float(c, 0), c.shape(1), c.attr_int("group", 1));
  const Tensor& x = call.x;
  const Window& w = call.window;
  Conv2dOptions& options = call.options;
  // An initializer's device copy belongs to the model and nothing writes it.
  options.constant_weight = c.host(1) != nullptr && c.host(1)->is_float();
  // 1-D: [N, C, L] runs as [N, C, 1, L] with a 1 x K kernel.
  if (node.op != "switchyard.Conv") {
    const Tensor y = conv2d(conv_input(x, w.one_d), as_2d(weight, w.one_d), bias, options);
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
        from_2d(conv2d(conv_input(x, w.one_d), as_2d(weight, w.one_d), bias, options), w.one_d);
    c.set_device(0, conv_epilogue(y, epilogue), kFloat);
    return;
  }
  // [N, C, L] (or any shape that broadcasts to it) gets the 2-D form's H axis before L.
  if (residual.defined() && w.one_d && residual.rank() >= 1) {
    residual = residual.unsqueeze(residual.rank() - 1);
  }
  epilogue.residual = residual;
  const Tensor y =
      conv2d_fused(conv_input(x, w.one_d), as_2d(weight, w.one_d), bias, options, epilogue);
  c.set_device(0, from_2d(y, w.one_d), kFloat);
}

namespace {

// One spatial axis of a pool padded explicitly: the pads before and after that make every window
// whole, and the output length. ceil_mode counts a last partial window where it starts inside the
// input or its leading pad; one that would start in the trailing pad is dropped (PyTorch's rule,
// ONNX's since 1.16, and ONNX Runtime's). A window wholly in padding is refused: it has no
// element to take the maximum of.
struct PoolAxis {
  int64_t before = 0, after = 0, out = 0;
};

PoolAxis pool_axis(NodeContext& c, int64_t in, int kernel, int stride, int before, int after,
                   bool ceil_mode) {
  const int64_t span = in + before + after - kernel;
  if (span < 0) c.fail("the window is larger than the padded input");
  PoolAxis axis;
  axis.out = span / stride + 1;
  if (ceil_mode && span % stride != 0 && axis.out * stride < in + before) ++axis.out;
  if (kernel <= before || (axis.out - 1) * stride >= in + before)
    c.fail("a window lies wholly in the padding");
  axis.before = before;
  axis.after = (axis.out - 1) * stride + kernel - in - before;  // may be below `after`: unused
  return axis;
}

// A pool where MAX_POOL2D's and AVG_POOL2D's symmetric padding of at most half the kernel does not
// say it: asymmetric pads, larger pads, ceil_mode's partial windows, or an average that leaves
// the padding out of its count. The input is padded explicitly to exactly the windows' extent
// (with -inf for max, which never wins, and 0 for the average) and pooled without padding. An
// average is then divided by the same average of a mask that is 1 where an element counts: the
// input, and the declared pads with count_include_pad 1 (never the ceil-mode extension beyond
// them, as PyTorch counts).
Tensor explicit_pool(NodeContext& c, const Tensor& x2, const Window& w, bool max) {
  const bool ceil_mode = c.attr_int("ceil_mode", 0) != 0;
  const PoolAxis rows = pool_axis(c, x2.dim(2), w.kh, w.sh, w.ph, w.ph_end, ceil_mode);
  const PoolAxis cols = pool_axis(c, x2.dim(3), w.kw, w.sw, w.pw, w.pw_end, ceil_mode);
  const double fill = max ? -std::numeric_limits<double>::infinity() : 0.0;
  const Tensor y = padded_axis(c, padded_axis(c, x2, 2, rows.before, rows.after, fill), 3,
                               cols.before, cols.after, fill);
  Pool2dOptions options;
  options.kernel_h = w.kh, options.kernel_w = w.kw, options.stride_h = w.sh,
  options.stride_w = w.sw;
  if (max) return max_pool2d(y, options);
  const bool include_pad = c.attr_int("count_include_pad", 0) != 0;
  const auto counted = [&](const PoolAxis& axis, int64_t in, int64_t declared_after) {
    std::vector<float> line(static_cast<size_t>(axis.before + in + axis.after), 0.0F);
    const int64_t first = include_pad ? 0 : axis.before;
    const int64_t last = include_pad ? axis.before + in + declared_after : axis.before + in;
    for (int64_t k = first; k < std::min<int64_t>(last, static_cast<int64_t>(line.size())); ++k)
      line[static_cast<size_t>(k)] = 1.0F;
    return line;
  };
  const std::vector<float> mask_rows = counted(rows, x2.dim(2), w.ph_end);
  const std::vector<float> mask_cols = counted(cols, x2.dim(3), w.pw_end);
  std::vector<float> mask(mask_rows.size() * mask_cols.size());
  for (size_t r = 0; r < mask_rows.size(); ++r) {
    for (size_t q = 0; q < mask_cols.size(); ++q)
      mask[r * mask_cols.size() + q] = mask_rows[r] * mask_cols[q];
  }
  const Tensor ones_where_counted = Tensor::from_host(
      mask,
      Shape{1, 1, static_cast<int64_t>(mask_rows.size()), static_cast<int64_t>(mask_cols.size())},
      c.model().device);
  return avg_pool2d(y, options) / avg_pool2d(ones_where_counted, options);
}

}  // namespace

void device_pool(NodeContext& c, bool max) {
  if (needs_tapped_pool(c)) {
    device_tapped_pool(c, max ? PoolKind::max : PoolKind::average);
    return;
  }
  if (c.shape(0).size() == 5) {
    device_pool3d(c, max);
    return;
  }
  if (c.output_used(1)) c.fail("the Indices output is not supported");
  const Tensor x = dev_float(c, 0);
  const Window w = window_of(c, x.shape().to_vector(), {}, true);
  Pool2dOptions options;
  options.kernel_h = w.kh, options.kernel_w = w.kw, options.stride_h = w.sh,
  options.stride_w = w.sw;
  options.pad_h = w.ph, options.pad_w = w.pw;
  options.count_include_pad = c.attr_int("count_include_pad", 0) != 0;
  // Ceil mode changes the output only where a last partial window would start inside the input.
  const Ints& s = c.shape(0);
  const auto partial = [](int64_t in, int k, int st, int p) {
    const int64_t span = in + 2 * p - k;
    return span >= 0 && span % st != 0;
  };
  const bool ceil_partial =
      c.attr_int("ceil_mode", 0) != 0 &&
      ((!w.one_d && partial(s[2], w.kh, w.sh, w.ph)) || partial(s.back(), w.kw, w.sw, w.pw));
  const Tensor x2 = as_2d(x, w.one_d);
  if (ceil_partial || w.ph != w.ph_end || w.pw != w.pw_end || 2 * w.ph > w.kh || 2 * w.pw > w.kw ||
      (!max && w.ph + w.pw > 0 && !options.count_include_pad)) {
    c.set_device(0, from_2d(explicit_pool(c, x2, w, max), w.one_d), max ? c.type(0) : kFloat);
    return;
  }
  const Tensor y = max ? max_pool2d(x2, options) : avg_pool2d(x2, options);
  c.set_device(0, from_2d(y, w.one_d), max ? c.type(0) : kFloat);  // int8 and uint8: exact
}

void device_global_pool(NodeContext& c, bool max) {
  const Tensor x = dev_float(c, 0);
  std::vector<int> axes;
  for (int a = 2; a < x.rank(); ++a) axes.push_back(a);
  c.set_device(0, max ? amax(x, axes, true) : mean(x, axes, true), kFloat);
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
    // ONNX counts a negative index from the end (-extent <= index < 0). GATHER does not, and an
    // asynchronous backend leaves an out-of-range index's elements unwritten, so they are moved
    // into range here: in f32, exact for every index of an extent up to 2^24.
    if (extent <= (int64_t{1} << 24)) {
      const Tensor f = indices.to(DType::kF32);
      indices = (f + greater(neg(f), 0.0) * static_cast<double>(extent)).to(indices.dtype());
    }
  }
  // An index still outside the axis: refused, or NaN on vulkan and cuda (never stale memory).
  Tensor y = c.host(1) != nullptr ? index_select(data, axis, indices)
                                  : index_select_or_nan(data, axis, indices);
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

namespace {

// True when input k is known on the host and holds no NaN or infinity.
bool host_finite(NodeContext& c, size_t k) {
  const HostTensor* h = c.host(k);
  if (h == nullptr) return false;
  if (!h->is_float()) return true;
  return std::all_of(h->f.begin(), h->f.end(), [](float v) { return std::isfinite(v); });
}

// `t` broadcast to `shape` (leading axes added, extents of 1 repeated), flattened and contiguous.
Tensor flat_broadcast(const NodeContext& c, const Tensor& t, const Ints& shape) {
  Ints aligned(shape.size() - static_cast<size_t>(t.rank()), 1);
  for (int a = 0; a < t.rank(); ++a) aligned.push_back(t.dim(a));
  return reshaped(c, t, aligned)
      .expand(to_shape(c, shape))
      .contiguous()
      .reshape(Shape{numel_of(shape)});
}

// Positions 0, 1, ..., n - 1 as f32 on the model's device: the longest asked for so far is kept
// per node (at most 2^23 of them, 32 MiB) and a shorter run takes its start.
Tensor positions(NodeContext& c, int64_t n) {
  auto& slot = c.model().node_cache[{&c.node(), "where positions"}];
  if (slot == nullptr || std::static_pointer_cast<Tensor>(slot)->numel() < n) {
    std::vector<float> values(static_cast<size_t>(n));
    std::iota(values.begin(), values.end(), 0.0F);
    slot = std::make_shared<Tensor>(Tensor::from_host(values, Shape{n}, c.model().device));
  }
  return std::static_pointer_cast<Tensor>(slot)->narrow(0, 0, n);
}

}  // namespace

// Where without arithmetic on the branches: c * x + (1 - c) * y would turn a NaN or an infinity in
// the branch not taken into NaN (0 * inf), which is what a guarded log or division (where(d != 0,
// n / d, 0)) relies on not happening. The two branches, broadcast to the output, lie side by side
// as [y, x] and GATHER takes element k from k + n * cond[k]. The positions are formed in f32,
// exact below 2^24, so the output is taken in chunks of at most 2^23 elements. Integer branches
// run on the host (the op table), so values above 2^24 stay exact. With both branches finite host
// constants, the product form is exact and is kept.
void device_where(NodeContext& c) {
  const Tensor cond = dev_float(c, 0);
  if (host_finite(c, 1) && host_finite(c, 2)) {
    const Tensor x = dev_float(c, 1), y = dev_float(c, 2);
    c.set_device(0, cond * x + (1.0 - cond) * y, c.type(1));
    return;
  }
  Result<Ints> shape = broadcast(c.shape(0), c.shape(1), "Where");
  if (shape.ok()) shape = broadcast(*shape, c.shape(2), "Where");
  if (!shape.ok()) c.fail(shape.status().message());
  check_size(c, *shape);
  // Any nonzero condition picks x (a bool input given as floats may hold 2 or -1).
  const Tensor pick = flat_broadcast(c, greater(abs(cond), 0.0), *shape);
  const Tensor x = flat_broadcast(c, dev_float(c, 1), *shape);
  const Tensor y = flat_broadcast(c, dev_float(c, 2), *shape);
  c.set_device(0, reshaped(c, picked(c, pick, x, y), *shape), c.type(1));
}

Tensor picked(NodeContext& c, const Tensor& pick, const Tensor& x, const Tensor& y) {
  const int64_t n = x.numel();
  constexpr int64_t kChunk = int64_t{1} << 23;
  std::vector<Tensor> parts;
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t len = std::min(kChunk, n - start);
    const Tensor both = concat({y.narrow(0, start, len), x.narrow(0, start, len)}, 0);
    const Tensor at =
        (pick.narrow(0, start, len) * static_cast<double>(len) + positions(c, len)).to(DType::kI32);
    parts.push_back(index_select(both, 0, at));
  }
  return parts.empty() ? x : (parts.size() == 1 ? parts[0] : concat(parts, 0));
}

void device_cast(NodeContext& c) {
  const int32_t to = cast_target(c);
  const Tensor x = c.dev(0);
  const Tensor f = is_floating(x.dtype()) ? x : x.to(DType::kF32);
  if (to == kBool) {
    c.set_device(0, 1.0 - equal(f, zeros_like(f)), kBool);
  } else if (to == kFloat16 || to == kBfloat16) {  // rounds as the type would hold it (COPY)
    c.set_device(0, f.to(to == kFloat16 ? DType::kF16 : DType::kBF16).to(DType::kF32), kFloat);
  } else if (is_float_type(to)) {
    c.set_device(0, f, kFloat);
  } else if (to == kInt64 || to == kUint64) {
    c.set_device(0, x.dtype() == DType::kI64 ? x : x.to(DType::kI64), to);
  } else {
    host_cast(c);  // a narrower integer type wraps (its low bits), as the host computes it
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
  c.set_device(0, x * Tensor::from_host(mask, Shape{rows, cols}, c.model().device), c.type(0));
}

}  // namespace switchyard::onnx_detail
