// Helpers shared by the op implementations.
#include "tensor/op_helpers.h"

#include <limits>

#include "autograd/node.h"
#include "switchyard/ops.h"
#include "switchyard/status.h"
#include "tensor/dispatch_internal.h"
#include "tensor/tensor_impl.h"

namespace switchyard {

Tensor empty_like_shape(const Tensor& like, const Shape& shape, DType dtype) {
  return Tensor::empty(shape, dtype, like.device());
}

Tensor empty_like_shape(const Tensor& like, const Shape& shape) {
  return Tensor::empty(shape, like.dtype(), like.device());
}

namespace {

// [N, C, H, W]'s channels-last strides: NHWC in memory.
Shape channels_last_strides(const Shape& shape) {
  return Shape{shape[1] * shape[2] * shape[3], 1, shape[3] * shape[1], shape[1]};
}

}  // namespace

bool is_channels_last(const Tensor& x) {
  if (!x.defined() || x.rank() != 4) return false;
  const Shape& shape = x.shape();
  const Shape& strides = x.strides();
  // Exact strides, size-1 axes included, as PyTorch tells the two apart: a [N, 1, H, W] or
  // [N, C, 1, 1] tensor is both dense and channels-last in memory, and its size-1 axis's stride
  // says which layout made it. Where even that agrees (C = H = W = 1), it is contiguous.
  return strides == channels_last_strides(shape) && !(strides == contiguous_strides(shape));
}

namespace {

// A new channels-last [N, C, H, W] tensor: [N, H, W, C] storage viewed with its axes permuted.
Tensor empty_channels_last(const Tensor& like, const Shape& shape) {
  const Tensor nhwc =
      Tensor::empty(Shape{shape[0], shape[2], shape[3], shape[1]}, like.dtype(), like.device());
  return Tensor(make_view_impl(*nhwc.impl(), shape, channels_last_strides(shape), 0));
}

}  // namespace

Tensor empty_like_format(const Tensor& like, const Shape& shape) {
  if (shape.rank() != 4 || !is_channels_last(like)) return empty_like_shape(like, shape);
  return empty_channels_last(like, shape);
}

Tensor to_channels_last(const Tensor& x) {
  const TensorImpl& impl = checked_impl(x, "to_channels_last");
  if (impl.shape.rank() != 4) {
    throw_error(
        invalid_argument("to_channels_last: needs x [N, C, H, W], got " + impl.shape.to_string()));
  }
  if (is_channels_last(x)) return x;
  Tensor out = empty_channels_last(x, impl.shape);
  run_op(SY_OP_COPY, {x}, {out});
  record_op(out, "to_channels_last", {x},
            [](const Tensor& grad, const Node&) { return std::vector<Tensor>{grad}; });
  return out;
}

void require_float(const Tensor& tensor, const char* op) {
  const TensorImpl& impl = checked_impl(tensor, op);
  if (!is_floating(impl.dtype)) {
    throw_error(invalid_argument(std::string(op) + ": needs a float tensor, got " +
                                 dtype_name(impl.dtype) + " " + impl.shape.to_string()));
  }
}

void require_index(const Tensor& tensor, const char* op) {
  const TensorImpl& impl = checked_impl(tensor, op);
  if (impl.dtype != DType::kI32 && impl.dtype != DType::kI64) {
    throw_error(invalid_argument(std::string(op) + ": indices/labels must be i32 or i64, got " +
                                 dtype_name(impl.dtype) + " " + impl.shape.to_string()));
  }
}

void require_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  if (checked_impl(a, op).dtype != checked_impl(b, op).dtype) {
    throw_error(invalid_argument(std::string(op) + ": dtypes differ: " + dtype_name(a.dtype()) +
                                 " " + a.shape().to_string() + " vs " + dtype_name(b.dtype()) +
                                 " " + b.shape().to_string()));
  }
}

Tensor sum_to_shape(const Tensor& gradient, const Shape& shape) {
  const Shape& from = gradient.shape();
  if (from == shape) return gradient;
  const int lead = from.rank() - shape.rank();
  uint32_t mask = 0;
  for (int i = 0; i < from.rank(); ++i) {
    if (i < lead || (shape[i - lead] == 1 && from[i] != 1)) mask |= 1u << i;
  }
  Tensor reduced = mask == 0 ? gradient : run_reduce(SY_OP_REDUCE_SUM, gradient, mask, true);
  return reduced.reshape(shape);
}

uint32_t axes_mask(const std::vector<int>& axes, int rank, const char* op) {
  if (axes.empty()) return rank == 0 ? 0u : static_cast<uint32_t>((1u << rank) - 1u);
  uint32_t mask = 0;
  for (int axis : axes) {
    const int a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) {
      throw_error(invalid_argument(std::string(op) + ": axis " + std::to_string(axis) +
                                   " is out of range for rank " + std::to_string(rank)));
    }
    mask |= 1u << a;
  }
  return mask;
}

Shape reduced_shape(const Shape& shape, uint32_t mask, bool keep_dims) {
  Shape out;
  for (int i = 0; i < shape.rank(); ++i) {
    if ((mask & (1u << i)) == 0) {
      out.push_back(shape[i]);
    } else if (keep_dims) {
      out.push_back(1);
    }
  }
  return out;
}

Tensor run_unary(sy_op op, const Tensor& x) {
  Tensor out = empty_like_format(x, x.shape());
  run_op(op, {x}, {out});
  return out;
}

Tensor run_binary(sy_op op, const Tensor& a, const Tensor& b) {
  require_same_dtype(a, b, "binary op");
  const Shape shape = broadcast_shapes(a.shape(), b.shape());
  // The layout of an operand of the output's shape (a first), so a channels-last activation
  // times a [N, C, 1, 1] scale stays channels-last.
  Tensor out = empty_like_format(a.shape() == shape || !(b.shape() == shape) ? a : b, shape);
  run_op(op, {a, b}, {out});
  return out;
}

Tensor run_binary_scalar(sy_op op, const Tensor& a, double scalar) {
  sy_op_params params{};
  params.binary.use_scalar = 1;
  params.binary.scalar = scalar;
  Tensor out = empty_like_format(a, a.shape());
  run_op(op, {a}, {out}, params);
  return out;
}

Tensor run_reduce(sy_op op, const Tensor& x, uint32_t mask, bool keep_dims) {
  sy_op_params params{};
  params.reduce.axes_mask = mask;
  params.reduce.keep_dims = keep_dims ? 1 : 0;
  Tensor out = empty_like_shape(x, reduced_shape(x.shape(), mask, keep_dims));
  // An empty x with a non-empty result: the reduction's identity over an empty extent
  // (docs/ops.md: SUM 0, MEAN NaN = 0/0), the same on every backend without a dispatch that
  // would read nothing (vulkan refused to bind the empty x). MAX goes to the op, which refuses.
  if (x.numel() == 0 && out.numel() > 0 && (op == SY_OP_REDUCE_SUM || op == SY_OP_REDUCE_MEAN)) {
    return full(out.shape(),
                op == SY_OP_REDUCE_SUM ? 0.0 : std::numeric_limits<double>::quiet_NaN(), x.device(),
                x.dtype());
  }
  run_op(op, {x}, {out}, params);
  return out;
}

}  // namespace switchyard
