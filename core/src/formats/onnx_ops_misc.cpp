// Smaller ONNX ops that older models and converters write (formats/onnx_ops_internal.h):
// normalizations composed of the op set (LpNormalization, MeanVarianceNormalization,
// GlobalLpPool) and index-like ops on host values (Hardmax, EyeLike, Shrink).
#include <algorithm>
#include <cmath>
#include <limits>

#include "formats/onnx_ops_internal.h"
#include "switchyard/device.h"
#include "switchyard/ops.h"

namespace switchyard::onnx_detail {

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
      x.i[static_cast<size_t>(e)] = static_cast<int64_t>(y);
  }
  c.set_host(0, std::move(x));
}

}  // namespace switchyard::onnx_detail
