// Creation, random numbers, indexing and dropout.
#include <algorithm>
#include <string>
#include <vector>

#include "autograd/node.h"
#include "switchyard/device.h"
#include "switchyard/ops.h"
#include "switchyard/plugin.h"
#include "switchyard/status.h"
#include "tensor/dispatch_internal.h"
#include "tensor/op_helpers.h"

namespace switchyard {

namespace {

using Grads = std::vector<Tensor>;

Tensor random_tensor(sy_op op, const Shape& shape, double a, double b, uint64_t seed,
                     uint64_t offset, const std::shared_ptr<Device>& device, DType dtype) {
  if (!is_floating(dtype)) {
    throw_error(invalid_argument(std::string("random numbers need a float dtype, not ") +
                                 dtype_name(dtype)));
  }
  Tensor out = Tensor::empty(shape, dtype, device);
  sy_op_params params{};
  params.random.seed = seed;
  params.random.offset = offset;
  params.random.a = a;
  params.random.b = b;
  run_op(op, {}, {out}, params);
  return out;
}

}  // namespace

Tensor full(const Shape& shape, double value, const std::shared_ptr<Device>& device, DType dtype) {
  Tensor out = Tensor::empty(shape, dtype, device);
  out.fill_(value);
  return out;
}

Tensor zeros(const Shape& shape, const std::shared_ptr<Device>& device, DType dtype) {
  return full(shape, 0.0, device, dtype);
}

Tensor ones(const Shape& shape, const std::shared_ptr<Device>& device, DType dtype) {
  return full(shape, 1.0, device, dtype);
}

Tensor zeros_like(const Tensor& like) {
  return zeros(like.shape(), like.device(), like.dtype());
}
Tensor ones_like(const Tensor& like) {
  return ones(like.shape(), like.device(), like.dtype());
}
Tensor full_like(const Tensor& like, double value) {
  return full(like.shape(), value, like.device(), like.dtype());
}

Tensor rand_uniform(const Shape& shape, double low, double high, uint64_t seed, uint64_t offset,
                    const std::shared_ptr<Device>& device, DType dtype) {
  return random_tensor(SY_OP_RANDOM_UNIFORM, shape, low, high, seed, offset, device, dtype);
}

Tensor rand_normal(const Shape& shape, double mean_value, double stddev, uint64_t seed,
                   uint64_t offset, const std::shared_ptr<Device>& device, DType dtype) {
  return random_tensor(SY_OP_RANDOM_NORMAL, shape, mean_value, stddev, seed, offset, device, dtype);
}

// ---- indexing -----------------------------------------------------------------------------------

namespace {

Shape indexed_shape(const Tensor& x, int axis, const Tensor& indices, const char* op) {
  require_index(indices, op);
  if (indices.rank() != 1) {
    throw_error(invalid_argument(std::string(op) + ": indices must be 1-D, got " +
                                 indices.shape().to_string()));
  }
  Shape shape = x.shape();
  shape[axis] = indices.dim(0);
  return shape;
}

// out (accumulated into) += src at indices along axis.
void scatter_add_into(Tensor& out, int axis, const Tensor& indices, const Tensor& src) {
  sy_op_params params{};
  params.index.axis = axis;
  run_op(SY_OP_SCATTER_ADD, {src, indices}, {out}, params);
}

}  // namespace

Tensor index_select(const Tensor& x, int axis, const Tensor& indices) {
  const int a = normalize_axis(axis, x.rank());
  Tensor out = empty_like_shape(x, indexed_shape(x, a, indices, "index_select"));
  sy_op_params params{};
  params.index.axis = a;
  run_op(SY_OP_GATHER, {x, indices}, {out}, params);
  record_op(out, "index_select", {x},
            [a, indices, shape = x.shape()](const Tensor& g, const Node&) {
              Tensor gx = zeros(shape, g.device(), g.dtype());
              scatter_add_into(gx, a, indices, g);
              return Grads{gx};
            });
  return out;
}

Tensor index_select_or_nan(const Tensor& x, int axis, const Tensor& indices) {
  const int a = normalize_axis(axis, x.rank());
  const int64_t extent = x.dim(a);
  const bool asynchronous = (x.device()->plugin().capabilities() & SY_CAP_ASYNC) != 0;
  if (!asynchronous || extent > (int64_t{1} << 24)) return index_select(x, a, indices);
  // In f32, exact for every index of an axis up to 2^24 long.
  const Tensor f = indices.detach().to(DType::kF32);
  const Tensor valid = greater(f, -1.0) * greater(neg(f), -static_cast<double>(extent));
  if (!is_floating(x.dtype())) {  // no NaN to give: read the indices back
    const std::vector<float> flags = valid.to_host_float();
    const auto at = std::find(flags.begin(), flags.end(), 0.0F);
    if (at != flags.end()) {
      throw_error(invalid_argument("index_select: the index at position " +
                                   std::to_string(at - flags.begin()) + " is outside [0, " +
                                   std::to_string(extent) + ") for axis " + std::to_string(a) +
                                   " of x " + x.shape().to_string()));
    }
    return index_select(x, a, indices);
  }
  const double last = static_cast<double>(std::max<int64_t>(extent - 1, 0));
  const Tensor y = index_select(x, a, minimum(maximum(f, 0.0), last).to(indices.dtype()));
  if (y.numel() == 0) return y;
  std::vector<int64_t> spread(static_cast<size_t>(y.rank()), 1);
  spread[static_cast<size_t>(a)] = indices.numel();
  // 0 * log(valid): 0 for an index inside, NaN outside; one broadcast addition over y.
  const Tensor nan_outside = (log(valid) * 0.0).reshape(Shape(spread));
  return y + (nan_outside.dtype() == y.dtype() ? nan_outside : nan_outside.to(y.dtype()));
}

Tensor index_add(const Tensor& base, int axis, const Tensor& indices, const Tensor& src) {
  const int a = normalize_axis(axis, base.rank());
  if (indexed_shape(base, a, indices, "index_add") != src.shape()) {
    throw_error(invalid_argument("index_add: src " + src.shape().to_string() +
                                 " does not match base " + base.shape().to_string() + " with " +
                                 std::to_string(indices.numel()) + " indices on axis " +
                                 std::to_string(a)));
  }
  Tensor out = base.detach().clone();
  scatter_add_into(out, a, indices, src);
  record_op(out, "index_add", {base, src}, [a, indices](const Tensor& g, const Node& node) {
    return Grads{node.needs_grad(0) ? g : Tensor(),
                 node.needs_grad(1) ? index_select(g, a, indices) : Tensor()};
  });
  return out;
}

// ---- joining ------------------------------------------------------------------------------------

namespace {

// The shape of the joined tensor; throws naming the first tensor that does not fit.
Shape concat_shape(const std::vector<Tensor>& tensors, int axis) {
  const Tensor& first = tensors.front();
  Shape shape = first.shape();
  shape[axis] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    bool fits = t.defined() && t.rank() == first.rank() && t.dtype() == first.dtype() &&
                t.device() == first.device();
    for (int d = 0; fits && d < first.rank(); ++d) fits = d == axis || t.dim(d) == first.dim(d);
    if (!fits) {
      throw_error(invalid_argument(
          "concat: tensor " + std::to_string(i) + " " +
          (t.defined() ? std::string(dtype_name(t.dtype())) + " " + t.shape().to_string()
                       : std::string("(undefined)")) +
          " does not match tensor 0 " + dtype_name(first.dtype()) + " " +
          first.shape().to_string() + " on every axis but " + std::to_string(axis)));
    }
    shape[axis] += t.dim(axis);
  }
  return shape;
}

}  // namespace

Tensor concat(const std::vector<Tensor>& tensors, int axis) {
  if (tensors.empty()) throw_error(invalid_argument("concat: no tensors"));
  const int a = normalize_axis(axis, tensors.front().rank());
  Tensor out =
      Tensor::empty(concat_shape(tensors, a), tensors.front().dtype(), tensors.front().device());
  std::vector<int64_t> extents;
  int64_t start = 0;
  for (const Tensor& t : tensors) {
    if (t.dim(a) > 0) run_op(SY_OP_COPY, {t}, {out.detach().narrow(a, start, t.dim(a))});
    extents.push_back(t.dim(a));
    start += t.dim(a);
  }
  if (!any_needs_grad(tensors)) return out;
  attach_node(out, "concat", tensors, [a, extents](const Tensor& g, const Node& node) {
    Grads grads(extents.size());
    int64_t begin = 0;
    for (size_t i = 0; i < extents.size(); ++i) {
      if (node.needs_grad(i)) grads[i] = g.narrow(a, begin, extents[i]);
      begin += extents[i];
    }
    return grads;
  });
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int axis) {
  if (tensors.empty()) throw_error(invalid_argument("stack: no tensors"));
  const int a = normalize_axis(axis, tensors.front().rank() + 1);
  std::vector<Tensor> expanded;
  expanded.reserve(tensors.size());
  for (const Tensor& t : tensors) {
    if (!t.defined() || t.shape() != tensors.front().shape()) {
      throw_error(invalid_argument("stack: every tensor must have the shape of the first, " +
                                   tensors.front().shape().to_string()));
    }
    expanded.push_back(t.unsqueeze(a));
  }
  return concat(expanded, a);
}

// ---- dropout ------------------------------------------------------------------------------------

Tensor dropout(const Tensor& x, double p, bool training, uint64_t seed, uint64_t offset) {
  require_float(x, "dropout");
  if (p < 0.0 || p >= 1.0) {
    throw_error(invalid_argument("dropout: p must be in [0, 1), got " + std::to_string(p)));
  }
  if (!training || p == 0.0) return x;
  // The mask is drawn in f32 whatever x's dtype, so that rounding u to f16/bf16 cannot create
  // ties with p; keep where u > p (u == p has probability 2^-24 per element).
  const Tensor uniform = rand_uniform(x.shape(), 0.0, 1.0, seed, offset, x.device(), DType::kF32);
  const Tensor keep = greater(uniform, p).to(x.dtype());
  return mul(x, mul(keep, 1.0 / (1.0 - p)));
}

}  // namespace switchyard
