// Smaller ONNX ops that older models and converters write (formats/onnx_ops_internal.h):
// normalizations (BatchNormalization folded or composed, LayerNormalization on LAYER_NORM, and
// LpNormalization, MeanVarianceNormalization and GlobalLpPool composed of the op set) and
// index-like ops on host values (Hardmax, EyeLike, Shrink).
#include <algorithm>
#include <cmath>
#include <limits>

#include "formats/onnx_ops_internal.h"
#include "switchyard/device.h"
#include "switchyard/ops.h"

namespace switchyard::onnx_detail {

namespace {

struct AffineWeights {
  Tensor scale, shift;
};
}  // namespace

void device_batch_norm(NodeContext& c) {
  if (c.attr_int("training_mode", 0) != 0)
    c.fail("training_mode 1 is not supported (inference only)");
  for (size_t k = 1; k < c.output_count(); ++k) {
    if (c.output_used(k)) c.fail("the running statistics outputs (training) are not supported");
  }
  if (c.attr_int("spatial", 1) == 0)  // before version 9
    c.fail("spatial 0 (statistics per element, not per channel) is not supported");
  const Ints& xs = c.shape(0);
  if (xs.size() < 2) c.fail("the input needs a channel axis");
  const float epsilon = c.attr_float("epsilon", 1e-5F);
  bool known = true;
  for (size_t k = 1; k < 5; ++k) known = known && c.host(k) != nullptr;
  if (!known) {
    // Statistics computed in the graph or fed as inputs: (x - mean) / sqrt(var + eps) * scale + B
    // on the device, each [C] as [C, 1, ...].
    Ints per_channel(xs.size() - 1, 1);
    per_channel[0] = xs[1];
    std::vector<Tensor> p;
    for (size_t k = 1; k < 5; ++k) {
      if (c.shape(k) != Ints{xs[1]}) {
        c.fail("parameters must have one value per channel (" + std::to_string(xs[1]) + "), got " +
               shape_text(c.shape(k)));
      }
      p.push_back(dev_float(c, k).reshape(to_shape(c, per_channel)));
    }
    const Tensor x = dev_float(c, 0);
    c.set_device(0, (x - p[2]) * (p[0] * pow(p[3] + static_cast<double>(epsilon), -0.5)) + p[1],
                 kFloat);
    return;
  }
  const auto fold = [&] {
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
  };
  bool constant = true;
  for (size_t k = 1; k < 5; ++k) constant = constant && c.constant(k);
  const std::shared_ptr<AffineWeights> w =
      constant ? c.cached<AffineWeights>("batchnorm" + std::to_string(xs.size()), fold) : fold();
  c.set_device(0, dev_float(c, 0) * w->scale + w->shift, kFloat);
}

// LayerNormalization: LAYER_NORM with the normalized shape's Scale and B; a Scale or B that only
// broadcasts to x (ONNX's function body multiplies and adds them) scales a unit LAYER_NORM. The
// Mean and InvStdDev outputs (over the normalized axes, kept as 1) are composed.
void device_layer_norm(NodeContext& c) {
  const Tensor x = dev_float(c, 0);
  const int axis = normalize(c, c.attr_int("axis", -1), static_cast<size_t>(x.rank()));
  const Ints& xs = c.shape(0);
  const Ints normalized(xs.begin() + axis, xs.end());
  const double epsilon = static_cast<double>(c.attr_float("epsilon", 1e-5F));
  for (size_t k = 1; k <= 2; ++k) {
    // Broadcasting into X without changing it (numpy's rule: the shared broadcast is X).
    const Result<Ints> spread = c.has(k) ? broadcast(c.shape(k), xs, "LayerNormalization") : xs;
    if (!spread.ok() || *spread != xs) {
      c.fail(std::string(k == 1 ? "Scale " : "B ") + shape_text(c.shape(k)) +
             " must have the normalized shape " + shape_text(normalized) + " or broadcast to X " +
             shape_text(xs));
    }
  }
  const bool whole = c.shape(1) == normalized && (!c.has(2) || c.shape(2) == normalized);
  const auto& device = c.model().device;
  Tensor y;
  if (whole) {
    const Tensor beta = c.has(2) ? dev_float(c, 2) : zeros(to_shape(c, normalized), device);
    y = layer_norm(x, dev_float(c, 1), beta, x.rank() - axis, epsilon);
  } else {
    const Shape shape = to_shape(c, normalized);
    y = layer_norm(x, ones(shape, device), zeros(shape, device), x.rank() - axis, epsilon) *
        dev_float(c, 1);
    if (c.has(2)) y = y + dev_float(c, 2);
  }
  c.set_device(0, y, kFloat);
  if (c.output_used(1) || c.output_used(2)) {
    std::vector<int> axes;
    for (int a = axis; a < x.rank(); ++a) axes.push_back(a);
    const Tensor m = mean(x, axes, true);
    const Tensor d = x - m;
    c.set_device(1, m, kFloat);
    c.set_device(2, pow(mean(d * d, axes, true) + epsilon, -0.5), kFloat);
  }
}

// x divided by its L1 (p 1) or L2 (p 2) norm along `axis`.
void device_lp_normalization(NodeContext& c) {
  const Tensor x = dev_float(c, 0);
  const int axis = normalize(c, c.attr_int("axis", -1), static_cast<size_t>(x.rank()));
  const int64_t p = c.attr_int("p", 2);
  if (p != 1 && p != 2) c.fail("p must be 1 or 2");
  const Tensor norm = p == 1 ? sum(abs(x), {axis}, true) : sqrt(sum(x * x, {axis}, true));
  c.set_device(0, x / norm, kFloat);
}

// (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9) over `axes` (default 0, 2, 3): ONNX's function body,
// term for term.
void device_mean_variance_normalization(NodeContext& c) {
  const Tensor x = dev_float(c, 0);
  Ints axes = c.attr_ints("axes");
  if (c.attr("axes") == nullptr) axes = {0, 2, 3};
  std::vector<int> list;
  for (const int64_t a : axes) list.push_back(normalize(c, a, static_cast<size_t>(x.rank())));
  const Tensor m = mean(x, list, true);
  const Tensor deviation = sqrt(mean(x * x, list, true) - m * m);
  c.set_device(0, (x - m) / (deviation + 1e-9), kFloat);
}

// (sum over the spatial axes of |x|^p)^(1 / p), the spatial axes kept as 1.
void device_global_lp_pool(NodeContext& c) {
  const Tensor x = dev_float(c, 0);
  if (x.rank() < 3) c.fail("the input needs rank 3 or more");
  const double p = static_cast<double>(c.attr_int("p", 2));
  if (p < 1) c.fail("p must be 1 or more");
  std::vector<int> spatial;
  for (int a = 2; a < x.rank(); ++a) spatial.push_back(a);
  c.set_device(0, pow(sum(pow(abs(x), p), spatial, true), 1.0 / p), kFloat);
}

// 1 at the first largest element along `axis`, 0 elsewhere. Before version 13 the input is read as
// a matrix, the axes from `axis` (default 1) on one row, as Softmax does.
void host_hardmax(NodeContext& c) {
  const HostTensor& x = c.host_values(0);
  // Hardmax is defined for float types only: an integer input (a hostile file: a Shape's output)
  // has no f to write the ones into.
  if (!x.is_float()) c.fail("the input must be a float tensor, got " + elem_type_name(x.type));
  const auto [outer, extent, inner] = softmax_layout(c, x.shape);
  check_host_size(c, x.shape);
  HostTensor y = HostTensor::zeros(x.type, x.shape);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      for (int64_t k = 1; k < extent; ++k) {
        if (x.at((o * extent + k) * inner + i) > x.at((o * extent + best) * inner + i)) best = k;
      }
      if (extent > 0) y.f[static_cast<size_t>((o * extent + best) * inner + i)] = 1.0F;
    }
  }
  c.set_host(0, std::move(y));
}

// A 2-D tensor of the input's shape with ones on diagonal k, of `dtype` (else the input's type).
void host_eye_like(NodeContext& c) {
  const Ints& shape = c.shape(0);
  if (shape.size() != 2) c.fail("the input must have rank 2");
  const int32_t type =
      c.attr("dtype") != nullptr ? static_cast<int32_t>(c.attr_int("dtype", 0)) : c.type(0);
  if (!is_supported_type(type)) c.fail("dtype " + elem_type_name(type) + " is not supported");
  const int64_t k = c.attr_int("k", 0);
  check_host_size(c, shape);
  HostTensor y = HostTensor::zeros(type, shape);
  for (int64_t r = 0; r < shape[0]; ++r) {
    const int64_t col = r + k;
    if (col < 0 || col >= shape[1]) continue;
    const auto at = static_cast<size_t>(r * shape[1] + col);
    if (y.is_float())
      y.f[at] = 1.0F;
    else
      y.i[at] = 1;
  }
  c.set_host(0, std::move(y), true);
}

// Shrink: x - bias where x > lambd, x + bias where x < -lambd, 0 between (integers as well).
void host_shrink(NodeContext& c) {
  HostTensor x = c.host_values(0);
  const double lambd = static_cast<double>(c.attr_float("lambd", 0.5F));
  const double bias = static_cast<double>(c.attr_float("bias", 0.0F));
  for (int64_t e = 0; e < x.numel(); ++e) {
    const double v = x.at(e);
    const double y = v < -lambd ? v + bias : v > lambd ? v - bias : 0.0;
    if (x.is_float())
      x.f[static_cast<size_t>(e)] = static_cast<float>(y);
    else
      x.i[static_cast<size_t>(e)] = whole_or_zero(y);
  }
  c.set_host(0, std::move(x));
}

}  // namespace switchyard::onnx_detail
