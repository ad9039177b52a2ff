// Small helpers shared by the op implementations. Private to the core.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "switchyard/plugin_abi.h"
#include "switchyard/tensor.h"

namespace switchyard {

// A new contiguous output on `like`'s device.
Tensor empty_like_shape(const Tensor& like, const Shape& shape, DType dtype);
Tensor empty_like_shape(const Tensor& like, const Shape& shape);

// A new output of `shape` laid out like `like`: channels-last when `like` is (is_channels_last in
// ops.h) and `shape` has rank 4, contiguous otherwise. Convolutions, pools and elementwise ops
// allocate their outputs this way, so a network's activations keep their layout.
Tensor empty_like_format(const Tensor& like, const Shape& shape);

// Throws unless the tensor is defined and of a floating dtype; names the op.
void require_float(const Tensor& tensor, const char* op);
void require_index(const Tensor& tensor, const char* op);
// Throws unless both share one dtype; names the op and both dtypes.
void require_same_dtype(const Tensor& a, const Tensor& b, const char* op);

// Sums a (broadcast) gradient back to `shape`: over leading axes it lacks and over its size-1
// axes, as numpy broadcasting is undone.
Tensor sum_to_shape(const Tensor& gradient, const Shape& shape);

// The bit mask of `axes` (empty = every axis) and the reduced shape.
uint32_t axes_mask(const std::vector<int>& axes, int rank, const char* op);
Shape reduced_shape(const Shape& shape, uint32_t mask, bool keep_dims);

// Runs an elementwise op of the op set on one input into a new tensor of its shape.
Tensor run_unary(sy_op op, const Tensor& x);
// Runs op(a, b) into a new tensor of the broadcast shape (no autograd).
Tensor run_binary(sy_op op, const Tensor& a, const Tensor& b);
Tensor run_binary_scalar(sy_op op, const Tensor& a, double scalar);
// Runs a reduction into a new tensor (no autograd).
Tensor run_reduce(sy_op op, const Tensor& x, uint32_t mask, bool keep_dims);

// Autocast (switchyard/autocast.h): a floating tensor cast to the low dtype in effect, or to f32;
// both return `x` itself when autocast is off. autocast_promote casts two floating tensors of
// different dtypes to the wider one when autocast is on.
Tensor autocast_low(const Tensor& x);
Tensor autocast_f32(const Tensor& x);
std::pair<Tensor, Tensor> autocast_promote(const Tensor& a, const Tensor& b);

}  // namespace switchyard
