// What the ONNX op files share (formats/onnx_ops*.cpp): the checks every op makes of the shapes it
// computes, the host ops that evaluate shape subgraphs and folded constants
// (onnx_ops_host.cpp), the device ops that run on switchyard's op set (onnx_ops_device.cpp), the
// recurrent ops (onnx_ops_recurrent.cpp). onnx_ops.cpp maps ONNX op names to them. Private to the
// formats layer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "formats/onnx_graph.h"

namespace switchyard::onnx_detail {

using Ints = std::vector<int64_t>;

inline int64_t numel_of(const Ints& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>());
}

inline Shape to_shape(const NodeContext& context, const Ints& extents) {
  if (extents.size() > static_cast<size_t>(Shape::kMaxRank)) {
    context.fail("rank " + std::to_string(extents.size()) + " is more than switchyard's " +
                 std::to_string(Shape::kMaxRank));
  }
  return Shape(extents);
}

inline void check_size(const NodeContext& context, const Ints& shape) {
  Result<int64_t> numel = checked_numel(shape, "the output");
  if (!numel.ok()) context.fail(numel.status().message());
}

// Host values are for shape computations and folded constants: at most 2^26 elements each. The
// fuzz harness lowers the limit (set_max_host_elements), as it lowers the device's memory limit,
// so that one run stays short under the sanitizers; nothing else changes it.
int64_t max_host_elements();
void set_max_host_elements(int64_t limit);
// A Loop runs at most 2^20 iterations: a hostile trip count (2^62), or a condition that stays
// true, is an error naming the node rather than a hang. The fuzz harness lowers it as well.
int64_t max_loop_iterations();
void set_max_loop_iterations(int64_t limit);

inline void check_host_size(const NodeContext& context, const Ints& shape) {
  check_size(context, shape);
  if (numel_of(shape) > max_host_elements()) {
    context.fail("a host result of shape " + shape_text(shape) + " is larger than " +
                 std::to_string(max_host_elements()) + " elements");
  }
}

inline Tensor reshaped(const NodeContext& context, const Tensor& t, const Ints& shape) {
  return t.reshape(to_shape(context, shape));
}

// `shape` with leading 1s up to `rank` (a fused node's Node::lift_rank); as it is when it has them.
inline Ints lifted_shape(Ints shape, int rank) {
  if (static_cast<int>(shape.size()) < rank)
    shape.insert(shape.begin(), static_cast<size_t>(rank) - shape.size(), 1);
  return shape;
}
inline Tensor lifted(const NodeContext& context, const Tensor& t, int rank) {
  return t.rank() >= rank ? t : reshaped(context, t, lifted_shape(t.shape().to_vector(), rank));
}

// auto_pad SAME's total padding of an axis of `in` elements for a window (kernel, stride,
// dilation): what makes the output ceil(in / stride) long.
inline int64_t same_padding(int64_t in, int64_t kernel, int64_t stride, int64_t dilation) {
  const int64_t out = (in + stride - 1) / stride;
  return std::max<int64_t>((out - 1) * stride + (kernel - 1) * dilation + 1 - in, 0);
}

// The row-major layout around one axis: `outer` blocks of `extent` x `inner` elements.
struct AxisLayout {
  int64_t outer = 1, extent = 1, inner = 1;
};
AxisLayout layout_of(const Ints& shape, int axis);

// Softmax's, LogSoftmax's and Hardmax's layout at the node's version: along `axis` (default -1)
// from version 13; before it the input is read as a matrix whose rows are the axes from `axis`
// (default 1) on (inner 1).
AxisLayout softmax_layout(NodeContext& c, const Ints& shape);

// ---- host helpers and ops (onnx_ops_host.cpp) -------------------------------------------------

HostTensor host_unary(const HostTensor& x, const std::function<double(double)>& f);

// Elementwise with broadcasting. `result` kUndefined: a's type.
HostTensor host_binary(NodeContext& c, const HostTensor& a, const HostTensor& b,
                       const std::function<double(double, double)>& f,
                       const std::function<int64_t(int64_t, int64_t)>& fi,
                       int32_t result = kUndefined);

// Moves the axes of a host tensor (a general transpose).
HostTensor host_transpose(const HostTensor& x, const Ints& perm);
// The rows `picks` of x along `axis`, as a tensor of `shape` (Gather, Slice, Concat, Scan).
HostTensor host_take(const HostTensor& x, int axis, const Ints& picks, Ints shape);

// ONNX Reshape's target: 0 copies the input's extent (unless allowzero), one -1 is inferred.
Ints reshape_target(const NodeContext& c, const Ints& input, Ints target, bool allow_zero);

// The axes input (opset 13 Squeeze, Unsqueeze, ReduceSum) or attribute (ReduceMean, ReduceMax).
Ints axes_of(NodeContext& c, size_t input_index);

Ints unsqueezed_shape(NodeContext& c, const Ints& shape, Ints axes);
Ints squeezed_shape(NodeContext& c, const Ints& shape, Ints axes);

// Slice's per-axis start, step and count after ONNX's clamping rules.
struct SliceAxis {
  int axis;
  int64_t start, step, count;
};

std::vector<SliceAxis> slice_plan(NodeContext& c, const Ints& shape);

// The host ops: each evaluates one ONNX node on host values (the table in onnx_ops.cpp names
// them), with the shape helpers of the ONNX ops whose device forms share them.
void host_shape(NodeContext& c);
void host_size(NodeContext& c);
void identity(NodeContext& c);
void host_gather(NodeContext& c);
// The sequence ops (onnx_ops_sequence.cpp).
void sequence_empty(NodeContext& c);
void sequence_construct(NodeContext& c);
void sequence_insert(NodeContext& c);
void sequence_at(NodeContext& c);
void sequence_length(NodeContext& c);
void sequence_erase(NodeContext& c);
void concat_from_sequence(NodeContext& c);
void split_to_sequence(NodeContext& c);
// Positions [start, start + length) of `v` (a tensor) along `axis`, on the host or the device as
// `v` is; `drop_axis` removes that axis (length 1).
Value slice_along(const Value& v, int axis, int64_t start, int64_t length, bool drop_axis);
// Object detection's ops (onnx_ops_detection.cpp).
void host_non_max_suppression(NodeContext& c);
void host_roi_align(NodeContext& c);
void host_reduce_prod(NodeContext& c);
void host_concat(NodeContext& c);
void host_reshape_like(NodeContext& c, const Ints& shape);
Ints flatten_shape(NodeContext& c, const Ints& shape);
Ints transpose_perm(NodeContext& c, size_t rank);
void host_slice(NodeContext& c);

// Split's axis and one size per output: the split input, or equal parts. Each size >= 0, adding up
// to the axis extent.
struct SplitPlan {
  int axis;
  Ints sizes;
};

SplitPlan split_plan(NodeContext& c, const Ints& shape);
void host_split(NodeContext& c);
void host_constant_of_shape(NodeContext& c);
void host_range(NodeContext& c);
Ints expand_shape(NodeContext& c);
void host_expand(NodeContext& c);
void host_where(NodeContext& c);

// Cast's `to`, refused when switchyard has no such type.
int32_t cast_target(NodeContext& c);
void host_cast(NodeContext& c);
void host_trilu(NodeContext& c);

// ---- device helpers and ops (onnx_ops_device.cpp) ---------------------------------------------

// Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7), composed of the op set.
Tensor erf_composed(const Tensor& x);

// A binary op where one side may be a host scalar (applied as a scalar op, no upload).
void device_binary(NodeContext& c, Tensor (*both)(const Tensor&, const Tensor&),
                   Tensor (*scalar)(const Tensor&, double), bool commutes);

// The binary ops of the table, on two tensors (t_) or a tensor and a host scalar (s_).
Tensor t_add(const Tensor& a, const Tensor& b);
Tensor t_sub(const Tensor& a, const Tensor& b);
Tensor t_mul(const Tensor& a, const Tensor& b);
Tensor t_div(const Tensor& a, const Tensor& b);
Tensor t_pow(const Tensor& a, const Tensor& b);
Tensor t_max(const Tensor& a, const Tensor& b);
Tensor t_min(const Tensor& a, const Tensor& b);
Tensor s_add(const Tensor& a, double b);
Tensor s_sub(const Tensor& a, double b);
Tensor s_mul(const Tensor& a, double b);
Tensor s_div(const Tensor& a, double b);
Tensor s_pow(const Tensor& a, double b);
Tensor s_max(const Tensor& a, double b);
Tensor s_min(const Tensor& a, double b);

// A float device tensor of a value (integers cast), for ops that compute in f32.
Tensor dev_float(NodeContext& c, size_t k);

// The device ops: each runs one ONNX node on switchyard's op set.
void device_matmul(NodeContext& c);
// ONNX MatMul's product of two device tensors: numpy's broadcasting of the batch axes, a vector
// on either side, a shared matrix b folded into one product of a's rows.
Tensor onnx_matmul(const NodeContext& c, Tensor a, Tensor b, const MatmulOptions& options = {});

// MatMul + Add fused at load: x @ W + b with W [K, N] kept transposed as [N, K].
void device_linear(NodeContext& c);
void device_attention(NodeContext& c);  // switchyard.Attention (fuse_attention)

void device_gemm(NodeContext& c);

// Conv, and switchyard.Conv (fuse_conv): the same convolution with the fused node's epilogue.
void device_conv(NodeContext& c);

// A 1-D or 2-D convolution with the node's Conv attributes (auto_pad, pads, strides, dilations)
// and `groups` (onnx_ops_device.cpp); `weight` is ONNX's [M, C / groups, k...], no epilogue.
Tensor onnx_conv(NodeContext& c, const Tensor& x, const Tensor& weight, const Tensor& bias,
                 int64_t groups);
// Conv over three spatial axes, composed of CONV2D per kernel depth tap (onnx_ops_conv3d.cpp); the
// node's bias added, not its fused epilogue.
Tensor conv3d(NodeContext& c);
void device_pool3d(NodeContext& c, bool max);  // MaxPool and AveragePool over 3 axes
// One spatial axis's pads before and after: the declared ones (auto_pad NOTSET), none (VALID) or
// SAME_UPPER / SAME_LOWER's (the odd one at the end / at the start), each 0 to 2^20.
std::pair<int64_t, int64_t> window_pads(NodeContext& c, const std::string& auto_pad, int64_t in,
                                        int64_t kernel, int64_t stride, int64_t dilation,
                                        int64_t begin, int64_t end);

void device_pool(NodeContext& c, bool max);

// ---- pools by taps (onnx_ops_pool.cpp) --------------------------------------------------------

enum class PoolKind { max, average, lp };

// MaxPool, AveragePool or LpPool over 1 to 3 spatial axes, one axis at a time by the kernel's
// taps: dilations, ceil_mode on 3 axes, LpPool's p-th powers.
void device_tapped_pool(NodeContext& c, PoolKind kind);
// Whether a MaxPool or AveragePool needs device_tapped_pool (a dilation, or ceil_mode on 3 axes).
bool needs_tapped_pool(NodeContext& c);
void device_global_pool(NodeContext& c, bool max);
void device_batch_norm(NodeContext& c);
void device_layer_norm(NodeContext& c);

void device_gather(NodeContext& c);
void device_slice(NodeContext& c);
void device_split(NodeContext& c);
void device_concat(NodeContext& c);
void device_where(NodeContext& c);
// Element k of x where pick[k] is 1, else of y (flat tensors of one length, pick 0 or 1): a
// gather from [y, x], so a NaN or an infinity in the element not taken stays out of the result.
Tensor picked(NodeContext& c, const Tensor& pick, const Tensor& x, const Tensor& y);
void device_cast(NodeContext& c);
void device_trilu(NodeContext& c);

// ---- ops by data-dependent indices, on the host (onnx_ops_host_index.cpp) ----------------------

void host_top_k(NodeContext& c);
void host_gather_elements(NodeContext& c);
void host_gather_nd(NodeContext& c);
void host_scatter_nd(NodeContext& c);
void host_scatter_elements(NodeContext& c);
void host_non_zero(NodeContext& c);
void host_one_hot(NodeContext& c);

// ---- reductions, ArgMax / ArgMin, CumSum (onnx_ops_reduce.cpp) --------------------------------

enum class Reduction { kMean, kSum, kMax, kMin, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };
void device_reduce(NodeContext& c, Reduction kind);
void device_arg(NodeContext& c, bool max);
void host_cumsum(NodeContext& c);
void device_cumsum(NodeContext& c);

// ---- image-like ops (onnx_ops_spatial.cpp) ----------------------------------------------------

// `t` padded along `axis` by `before` and `after` elements of `value` (a negative `after` crops):
// Pad's constant mode and the pools' explicit padding.
Tensor padded_axis(NodeContext& c, const Tensor& t, int axis, int64_t before, int64_t after,
                   double value);
// CONV2D pads both sides of an axis alike: `t` with zeros for what `before` or `after` has beyond
// the other (tf2onnx writes SAME at stride 2 as [0, 0, 1, 1]); `even` gets the part both share.
Tensor unevenly_padded(NodeContext& c, const Tensor& t, int axis, int64_t before, int64_t after,
                       int64_t& even);
void device_pad(NodeContext& c);  // constant, edge and reflect
void device_tile(NodeContext& c);
void device_resize(NodeContext& c);
void device_depth_to_space(NodeContext& c, bool to_space);  // false: SpaceToDepth
void device_instance_norm(NodeContext& c);
void device_group_norm(NodeContext& c);
void device_lrn(NodeContext& c);
void device_conv_transpose(NodeContext& c);
void device_prelu(NodeContext& c);

// ---- smaller ops (onnx_ops_misc.cpp)
// -------------------------------------------------------------

void device_lp_normalization(NodeContext& c);
void device_mean_variance_normalization(NodeContext& c);
void device_global_lp_pool(NodeContext& c);
void host_hardmax(NodeContext& c);
void host_eye_like(NodeContext& c);
void host_shrink(NodeContext& c);

// ---- QuantizeLinear and DequantizeLinear (onnx_ops_quant.cpp) --------------------------------

void host_quantize(NodeContext& c);
void device_quantize(NodeContext& c);
void host_dequantize(NodeContext& c);
void device_dequantize(NodeContext& c);
// DynamicQuantizeLinear (uint8, its scale and zero point from x's range), MatMulInteger and
// ConvInteger.
void device_dynamic_quantize(NodeContext& c);
void device_matmul_integer(NodeContext& c);
void device_conv_integer(NodeContext& c);

// ---- GridSample (onnx_ops_grid.cpp)
// ---------------------------------------------------------------

void device_grid_sample(NodeContext& c);

// ---- Einsum (onnx_ops_einsum.cpp) ---------------------------------------------------------------

void device_einsum(NodeContext& c);

// ---- recurrent ops (onnx_ops_recurrent.cpp) ---------------------------------------------------

enum class RecurrentKind { lstm, gru, rnn };

// ONNX LSTM, GRU or RNN, every direction, as LSTM_SEQUENCE / GRU_SEQUENCE where the device has
// them and composed otherwise (RNN always).
void device_recurrent(NodeContext& c, RecurrentKind kind);

}  // namespace switchyard::onnx_detail
