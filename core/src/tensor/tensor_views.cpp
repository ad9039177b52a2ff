// Views (no copy) and the copying conversions, each recorded for autograd.
#include <numeric>

#include "autograd/node.h"
#include "switchyard/device.h"
#include "switchyard/ops.h"
#include "switchyard/status.h"
#include "tensor/dispatch_internal.h"
#include "tensor/op_helpers.h"
#include "tensor/tensor_impl.h"

namespace switchyard {

namespace {

Shape infer_shape(const Shape& requested, int64_t numel, const Shape& from) {
  Shape shape = requested;
  int inferred = -1;
  int64_t known = 1;
  for (int i = 0; i < shape.rank(); ++i) {
    if (shape[i] == -1 && inferred < 0) {
      inferred = i;
    } else if (shape[i] < 0) {
      throw_error(invalid_argument("reshape: bad shape " + requested.to_string()));
    } else {
      known *= shape[i];
    }
  }
  if (inferred >= 0 && known > 0 && numel % known == 0) shape[inferred] = numel / known;
  if (shape.numel() != numel || (inferred >= 0 && known == 0)) {
    throw_error(invalid_argument("reshape: cannot view " + from.to_string() + " (" +
                                 std::to_string(numel) + " elements) as " + requested.to_string()));
  }
  return shape;
}

// The strides under which `to` views the elements of a tensor of shape `from` and `strides` in
// the same order, where there are any (PyTorch's rule): the axes of `from` fall into runs that
// are contiguous among themselves (each axis' stride the next one's times its extent; axes of
// extent 1 ignored), and every axis of `to` must lie within one run, so a reshape may split or
// merge axes inside a run but not merge across two. For example a slice [128, 1, 768] of rows
// 2304 apart views as [128, 12, 64] with strides (2304, 64, 1). False when there are none.
bool view_strides(const Shape& from, const Shape& strides, const Shape& to, Shape* out) {
  std::vector<int64_t> result(static_cast<size_t>(to.rank()), 1);
  if (from.numel() == 0 || from.rank() == 0) return false;
  int view_axis = to.rank() - 1;
  int64_t chunk_stride = strides[from.rank() - 1];
  int64_t from_count = 1, view_count = 1;
  for (int axis = from.rank() - 1; axis >= 0; --axis) {
    from_count *= from[axis];
    const bool run_ends =
        axis == 0 || (from[axis - 1] != 1 && strides[axis - 1] != from_count * chunk_stride);
    if (!run_ends) continue;
    while (view_axis >= 0 && (view_count < from_count || to[view_axis] == 1)) {
      result[static_cast<size_t>(view_axis)] = view_count * chunk_stride;
      view_count *= to[view_axis];
      --view_axis;
    }
    if (view_count != from_count) return false;
    if (axis > 0) {
      chunk_stride = strides[axis - 1];
      from_count = 1;
      view_count = 1;
    }
  }
  if (view_axis != -1) return false;
  *out = Shape(result);
  return true;
}

Tensor make_view(const Tensor& base, const Shape& shape, const Shape& strides, int64_t offset) {
  return Tensor(make_view_impl(*base.impl(), shape, strides, offset));
}

// The gradient of a view goes back through reshape to the input's shape.
void record_reshape_like(Tensor& out, const char* name, const Tensor& input) {
  record_op(out, name, {input}, [shape = input.shape()](const Tensor& grad, const Node&) {
    return std::vector<Tensor>{grad.reshape(shape)};
  });
}

}  // namespace

Tensor Tensor::reshape(const Shape& requested) const {
  const TensorImpl& impl = checked_impl(*this, "reshape");
  const Shape shape = infer_shape(requested, impl.shape.numel(), impl.shape);
  if (shape == impl.shape) return *this;
  Shape strides;
  if (is_contiguous()) {
    strides = contiguous_strides(shape);
  } else if (!view_strides(impl.shape, impl.strides, shape, &strides)) {
    return contiguous().reshape(shape);
  }
  Tensor out = make_view(*this, shape, strides, impl.offset_elements);
  record_reshape_like(out, "reshape", *this);
  return out;
}

Tensor Tensor::flatten(int start_axis, int end_axis) const {
  const int r = rank();
  if (r == 0) return reshape({1});
  const int start = normalize_axis(start_axis, r);
  const int end = normalize_axis(end_axis, r);
  if (start > end) {
    throw_error(invalid_argument("flatten: start axis " + std::to_string(start_axis) +
                                 " is after end axis " + std::to_string(end_axis)));
  }
  Shape shape;
  for (int i = 0; i < start; ++i) shape.push_back(dim(i));
  int64_t merged = 1;
  for (int i = start; i <= end; ++i) merged *= dim(i);
  shape.push_back(merged);
  for (int i = end + 1; i < r; ++i) shape.push_back(dim(i));
  return reshape(shape);
}

Tensor Tensor::permute(const std::vector<int>& axes) const {
  const TensorImpl& impl = checked_impl(*this, "permute");
  const int r = impl.shape.rank();
  if (static_cast<int>(axes.size()) != r) {
    throw_error(invalid_argument("permute: " + std::to_string(axes.size()) +
                                 " axes for a tensor of rank " + std::to_string(r)));
  }
  Shape shape = impl.shape;
  Shape strides = impl.strides;
  std::vector<int> inverse(static_cast<size_t>(r), -1);
  for (int i = 0; i < r; ++i) {
    const int axis = normalize_axis(axes[static_cast<size_t>(i)], r);
    if (inverse[static_cast<size_t>(axis)] >= 0) {
      throw_error(invalid_argument("permute: axis " + std::to_string(axis) + " repeated"));
    }
    inverse[static_cast<size_t>(axis)] = i;
    shape[i] = impl.shape[axis];
    strides[i] = impl.strides[axis];
  }
  Tensor out = make_view(*this, shape, strides, impl.offset_elements);
  record_op(out, "permute", {*this}, [inverse](const Tensor& grad, const Node&) {
    return std::vector<Tensor>{grad.permute(inverse)};
  });
  return out;
}

Tensor Tensor::transpose(int axis0, int axis1) const {
  std::vector<int> axes(static_cast<size_t>(rank()));
  std::iota(axes.begin(), axes.end(), 0);
  std::swap(axes[static_cast<size_t>(normalize_axis(axis0, rank()))],
            axes[static_cast<size_t>(normalize_axis(axis1, rank()))]);
  return permute(axes);
}

Tensor Tensor::t() const {
  if (rank() < 2) throw_error(invalid_argument("t() needs rank >= 2, not " + shape().to_string()));
  return transpose(-2, -1);
}

Tensor Tensor::narrow(int axis, int64_t start, int64_t length) const {
  const TensorImpl& impl = checked_impl(*this, "narrow");
  const int a = normalize_axis(axis, impl.shape.rank());
  if (start < 0 || length < 0 || start + length > impl.shape[a]) {
    throw_error(invalid_argument("narrow: [" + std::to_string(start) + ", " +
                                 std::to_string(start + length) + ") is outside axis " +
                                 std::to_string(a) + " of " + impl.shape.to_string()));
  }
  Shape shape = impl.shape;
  shape[a] = length;
  Tensor out =
      make_view(*this, shape, impl.strides, impl.offset_elements + start * impl.strides[a]);
  record_op(out, "narrow", {*this},
            [a, start, length, full = impl.shape](const Tensor& grad, const Node&) {
              Tensor grad_input = zeros(full, grad.device(), grad.dtype());
              grad_input.narrow(a, start, length).copy_(grad);
              return std::vector<Tensor>{grad_input};
            });
  return out;
}

Tensor Tensor::slice(int64_t begin, int64_t end) const {
  return narrow(0, begin, end - begin);
}

Tensor Tensor::unsqueeze(int axis) const {
  const TensorImpl& impl = checked_impl(*this, "unsqueeze");
  const int a = normalize_axis(axis, impl.shape.rank() + 1);
  Shape shape = impl.shape;
  Shape strides = impl.strides;
  shape.insert(a, 1);
  strides.insert(a, a < impl.shape.rank() ? impl.strides[a] * impl.shape[a] : 1);
  Tensor out = make_view(*this, shape, strides, impl.offset_elements);
  record_reshape_like(out, "unsqueeze", *this);
  return out;
}

Tensor Tensor::squeeze(int axis) const {
  const TensorImpl& impl = checked_impl(*this, "squeeze");
  const int a = normalize_axis(axis, impl.shape.rank());
  if (impl.shape[a] != 1) {
    throw_error(invalid_argument("squeeze: axis " + std::to_string(a) + " of " +
                                 impl.shape.to_string() + " is not 1"));
  }
  Shape shape = impl.shape;
  Shape strides = impl.strides;
  shape.erase(a);
  strides.erase(a);
  Tensor out = make_view(*this, shape, strides, impl.offset_elements);
  record_reshape_like(out, "squeeze", *this);
  return out;
}

Tensor Tensor::expand(const Shape& target) const {
  const TensorImpl& impl = checked_impl(*this, "expand");
  if (target == impl.shape) return *this;
  if (broadcast_shapes(impl.shape, target) != target) {
    throw_error(invalid_argument("expand: " + impl.shape.to_string() + " cannot expand to " +
                                 target.to_string()));
  }
  Shape strides = target;
  const int lead = target.rank() - impl.shape.rank();
  for (int i = 0; i < target.rank(); ++i) {
    const int source = i - lead;
    strides[i] = (source < 0 || impl.shape[source] == 1) ? 0 : impl.strides[source];
  }
  Tensor out = make_view(*this, target, strides, impl.offset_elements);
  record_op(out, "expand", {*this}, [shape = impl.shape](const Tensor& grad, const Node&) {
    return std::vector<Tensor>{sum_to_shape(grad, shape)};
  });
  return out;
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  const TensorImpl& impl = checked_impl(*this, "clone");
  Tensor out = Tensor::empty(impl.shape, impl.dtype, impl.device);
  run_op(SY_OP_COPY, {*this}, {out});
  record_op(out, "clone", {*this},
            [](const Tensor& grad, const Node&) { return std::vector<Tensor>{grad}; });
  return out;
}

Tensor Tensor::to(DType dtype) const {
  const TensorImpl& impl = checked_impl(*this, "to(dtype)");
  if (impl.dtype == dtype) return *this;
  Tensor out = Tensor::empty(impl.shape, dtype, impl.device);
  run_op(SY_OP_COPY, {*this}, {out});
  if (is_floating(dtype)) {
    record_op(out, "cast", {*this}, [from = impl.dtype](const Tensor& grad, const Node&) {
      return std::vector<Tensor>{grad.to(from)};
    });
  }
  return out;
}

Tensor Tensor::to(const std::shared_ptr<Device>& device) const {
  const TensorImpl& impl = checked_impl(*this, "to(device)");
  if (device == nullptr) throw_error(invalid_argument("to(device): no device given"));
  if (device == impl.device) return *this;
  const Tensor source = contiguous().detach();
  Tensor out = Tensor::empty(impl.shape, impl.dtype, device);
  const int64_t count = impl.shape.numel();
  if (count > 0) {
    std::vector<unsigned char> host(static_cast<size_t>(count) * dtype_size_bytes(impl.dtype));
    read_storage(*source.impl(), source.storage_offset(), count, host.data());
    write_storage(*out.impl(), 0, count, host.data());
  }
  record_op(out, "to_device", {*this}, [from = impl.device](const Tensor& grad, const Node&) {
    return std::vector<Tensor>{grad.to(from)};
  });
  return out;
}

}  // namespace switchyard
