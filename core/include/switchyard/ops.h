// Functional ops on tensors. Each is one or a few ops of the op set on the inputs' device, and is
// recorded for autograd when an input requires a gradient (see autograd.h).
//
// Binary ops broadcast like numpy. Axes may be negative (counted from the end). Inputs must live on
// one device and have one floating dtype (labels and indices are i32 or i64). Shape mismatches
// throw switchyard::Error naming the op and the shapes.
//
// Threads: any number of threads may run ops at once, on tensors they share as inputs (tensor.h)
// and on one device (device.h); whether each thread records autograd nodes is its own
// (autograd.h). Ops return new tensors; Tensor's in-place members (copy_, fill_, tensor.h) need
// the tensor they write to themselves.
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstdint>
#include <memory>
#include <vector>

#include "switchyard/tensor.h"

namespace switchyard {

// ---- creation -----------------------------------------------------------------------------------
Tensor full(const Shape& shape, double value, const std::shared_ptr<Device>& device,
            DType dtype = DType::kF32);
Tensor zeros(const Shape& shape, const std::shared_ptr<Device>& device, DType dtype = DType::kF32);
Tensor ones(const Shape& shape, const std::shared_ptr<Device>& device, DType dtype = DType::kF32);
Tensor zeros_like(const Tensor& like);
Tensor ones_like(const Tensor& like);
Tensor full_like(const Tensor& like, double value);
// Counter-based random numbers (Philox4x32-10): element i uses counter offset + i, so the same
// (seed, offset) gives the same numbers on every backend. Advance `offset` by numel between draws.
Tensor rand_uniform(const Shape& shape, double low, double high, uint64_t seed, uint64_t offset,
                    const std::shared_ptr<Device>& device, DType dtype = DType::kF32);
Tensor rand_normal(const Shape& shape, double mean, double stddev, uint64_t seed, uint64_t offset,
                   const std::shared_ptr<Device>& device, DType dtype = DType::kF32);

// ---- matrix products ----------------------------------------------------------------------------
// op(a) @ op(b), batched over leading axes with broadcasting; op transposes the last two axes.
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false);
// x @ weight^T + bias (weight [out, in], bias [out] or undefined), as in a Linear layer.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

// A promise about a product's weight (matmul's b, linear's weight): its bytes never change while
// its storage lives (the ONNX importer's initializers), so a backend may keep it converted to its
// own layout (SY_CALL_CONSTANT_WEIGHTS), as Conv2dOptions::constant_weight does for convolutions.
// Leave it false for weights that training or the caller rewrite.
struct MatmulOptions {
  bool constant_weight = false;
};
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b,
              const MatmulOptions& options);
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias,
              const MatmulOptions& options);

// ---- elementwise --------------------------------------------------------------------------------
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, double b);
Tensor sub(const Tensor& a, double b);
Tensor mul(const Tensor& a, double b);
Tensor div(const Tensor& a, double b);
Tensor maximum(const Tensor& a, double b);
Tensor minimum(const Tensor& a, double b);
Tensor pow(const Tensor& a, double b);
// Not differentiable: 1 where the comparison holds, else 0, in a's dtype.
Tensor greater(const Tensor& a, const Tensor& b);
Tensor greater(const Tensor& a, double b);
Tensor equal(const Tensor& a, const Tensor& b);

Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x);  // exact erf form
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);  // not differentiable

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, double b);
Tensor operator-(const Tensor& a, double b);
Tensor operator*(const Tensor& a, double b);
Tensor operator/(const Tensor& a, double b);
Tensor operator+(double a, const Tensor& b);
Tensor operator-(double a, const Tensor& b);
Tensor operator*(double a, const Tensor& b);
Tensor operator-(const Tensor& x);

// ---- reductions ---------------------------------------------------------------------------------
// Over `axes` (empty = all axes). keep_dims keeps reduced axes with extent 1.
Tensor sum(const Tensor& x, const std::vector<int>& axes = {}, bool keep_dims = false);
Tensor mean(const Tensor& x, const std::vector<int>& axes = {}, bool keep_dims = false);
Tensor amax(const Tensor& x, const std::vector<int>& axes = {}, bool keep_dims = false);
// Index of the largest value along one axis; not differentiable.
Tensor argmax(const Tensor& x, int axis, bool keep_dims = false, DType index_dtype = DType::kI64);

// ---- softmax and losses -------------------------------------------------------------------------
Tensor softmax(const Tensor& x, int axis = -1);
Tensor log_softmax(const Tensor& x, int axis = -1);

enum class Reduction { kMean, kSum };
// logits [N, C] (float), labels [N] (i32 or i64) -> scalar loss.
Tensor cross_entropy(const Tensor& logits, const Tensor& labels,
                     Reduction reduction = Reduction::kMean);
// Mean (or sum) of (prediction - target)^2 over all elements -> scalar loss.
Tensor mse_loss(const Tensor& prediction, const Tensor& target,
                Reduction reduction = Reduction::kMean);
// The regression and multi-label losses below follow PyTorch's definitions (torch.nn.functional)
// and are composed of the ops above, so autograd and every backend come with them. Each takes
// a prediction and a target of the same shape and returns the mean (or sum) over all elements.
//
// Mean (or sum) of |prediction - target|.
Tensor l1_loss(const Tensor& prediction, const Tensor& target,
               Reduction reduction = Reduction::kMean);
// With d = |prediction - target|: 0.5 d^2 / beta where d < beta, else d - 0.5 beta. Quadratic near
// zero, linear beyond beta, so a few large errors do not dominate; beta 0 is l1_loss. beta >= 0.
Tensor smooth_l1_loss(const Tensor& prediction, const Tensor& target, double beta = 1.0,
                      Reduction reduction = Reduction::kMean);
// delta * smooth_l1_loss(beta = delta): 0.5 d^2 where d < delta, else delta (d - 0.5 delta), so its
// linear part has slope delta whatever delta is. delta > 0.
Tensor huber_loss(const Tensor& prediction, const Tensor& target, double delta = 1.0,
                  Reduction reduction = Reduction::kMean);
// Binary cross-entropy of sigmoid(logits) against targets in [0, 1], element by element (one
// independent yes/no per output: multi-label), in the stable form max(x, 0) - x y + log(1 +
// exp(-|x|)), which never takes the log of 0 or the exp of a large positive number.
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target,
                                        Reduction reduction = Reduction::kMean);
// The KL divergence of the diagonal Gaussian N(mu, exp(logvar)) from N(0, 1), a variational
// autoencoder's regulariser: KL = -0.5 * sum over the last axis of (1 + logvar - mu^2 -
// exp(logvar)), one value per sample (row); then their mean (kMean, the KL per sample, as
// `torch.sum(...) / batch_size` in PyTorch's VAE example) or their sum (kSum). mu and logvar have
// one shape.
Tensor gaussian_kl_divergence(const Tensor& mu, const Tensor& logvar,
                              Reduction reduction = Reduction::kMean);
// Fraction of rows whose argmax equals the label; a host read, so call it outside hot loops.
double accuracy(const Tensor& logits, const Tensor& labels);

// ---- convolution and pooling (NCHW) -------------------------------------------------------------
// How a grouped convolution (groups > 1) runs: kAuto takes the CONV2D_GROUPED op where the
// device supports it and the composed path otherwise; kGroupedOp always dispatches the op (on the
// fallback device where the backend lacks it); kComposed always runs one CONV2D per group on
// slices of x and weight, concatenated. A profile shows the path: rows "conv2d_grouped" for the
// op, "conv2d" (one per group) with "copy" rows for the composed path.
enum class ConvPath { kAuto, kGroupedOp, kComposed };

struct Conv2dOptions {
  int stride_h = 1, stride_w = 1;
  int pad_h = 0, pad_w = 0;
  int dilation_h = 1, dilation_w = 1;
  int groups = 1;  // divides C and O; C = groups is depthwise
  ConvPath path = ConvPath::kAuto;
  // The caller promises that the weight's bytes never change while its storage lives (the ONNX
  // importer's initializers): a backend may then keep the weight converted to its own layout
  // (SY_CALL_CONSTANT_WEIGHTS). Leave it false for weights that training or the caller rewrite.
  bool constant_weight = false;
};
// x [N, C, H, W], weight [O, C / groups, KH, KW] (PyTorch's layout), bias [O] or undefined.
// The output is channels-last when x is (below), NCHW-contiguous otherwise; so are the outputs
// of conv2d_fused and the pools.
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias,
              const Conv2dOptions& options = {});

// What follows a convolution in an inference graph, applied to its output by conv2d_fused.
struct ConvEpilogue {
  enum class Activation { kNone, kRelu, kClip, kSilu };
  Tensor residual;  // when defined: added before the activation (broadcast to y's shape)
  Activation activation = Activation::kNone;
  float low = 0.0f, high = 0.0f;  // kClip's bounds (low <= high; +-inf for an open side)
};
// act(conv2d(x, weight, bias) + residual) (docs/ops.md section 9b): one CONV2D_FUSED op where
// nothing needs a gradient and the device has the op for the dtype, else conv2d followed by add
// and the activation's own ops. NaN passes through every activation.
Tensor conv2d_fused(const Tensor& x, const Tensor& weight, const Tensor& bias,
                    const Conv2dOptions& options, const ConvEpilogue& epilogue);
// The epilogue as separate ops on a convolution's output y: add(y, residual) (broadcasting), then
// the activation's own ops. conv2d_fused's composed path.
Tensor conv_epilogue(const Tensor& y, const ConvEpilogue& epilogue);

struct Pool2dOptions {
  int kernel_h = 2, kernel_w = 2;
  int stride_h = 2, stride_w = 2;
  int pad_h = 0, pad_w = 0;
  bool count_include_pad = true;  // average pooling only
};
Tensor max_pool2d(const Tensor& x, const Pool2dOptions& options);
Tensor avg_pool2d(const Tensor& x, const Pool2dOptions& options);

// Memory format. A rank-4 [N, C, H, W] tensor is channels-last when its strides are
// [H*W*C, 1, W*C, C]: NHWC in memory, the same logical axes (PyTorch's channels_last). Elementwise
// ops keep the layout of an input of their output's shape, so a network's activations stay
// channels-last from one convolution to the next; reshape and the other ops treat such a tensor
// like any strided view. The ONNX importer converts a convolution's input where the device asks
// for it (SY_CAP_CHANNELS_LAST).
bool is_channels_last(const Tensor& x);
// The same values as a channels-last tensor (x itself when already so); throws unless rank 4.
Tensor to_channels_last(const Tensor& x);

// ---- normalisation ------------------------------------------------------------------------------
// Normalises over the last `normalized_rank` axes; gamma and beta have those axes' shape.
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, int normalized_rank,
                  double epsilon = 1e-5);

// ---- indexing -----------------------------------------------------------------------------------
// out[..., i, ...] = x[..., indices[i], ...] along `axis`; indices is 1-D i32/i64.
Tensor index_select(const Tensor& x, int axis, const Tensor& indices);
// index_select for indices a user chose (token ids, an ONNX Gather's run-time indices): the same
// where every index is inside the axis. An index outside is INVALID_ARGUMENT on a synchronous
// backend (GATHER's check); an asynchronous one cannot refuse it at dispatch and may skip the
// element, leaving whatever the memory held (docs/ops.md, Errors), so there the index is clamped
// into the axis and its slice is NaN (float data), or the indices are read back and an index
// outside is INVALID_ARGUMENT (integer data). Axes longer than 2^24: index_select's behaviour.
Tensor index_select_or_nan(const Tensor& x, int axis, const Tensor& indices);
// Returns a copy of `base` with src's slices added at `indices` along `axis` (repeats accumulate):
// out[..., indices[i], ...] += src[..., i, ...].
Tensor index_add(const Tensor& base, int axis, const Tensor& indices, const Tensor& src);

// ---- joining ------------------------------------------------------------------------------------
// The tensors joined along `axis` (torch.cat): all share dtype, device and every other extent.
Tensor concat(const std::vector<Tensor>& tensors, int axis);
// The tensors (all of one shape) joined along a new axis at `axis` (torch.stack).
Tensor stack(const std::vector<Tensor>& tensors, int axis = 0);

// ---- regularisation -----------------------------------------------------------------------------
// Zeroes each element with probability p and scales the rest by 1/(1-p). The mask comes from
// rand_uniform(seed, offset), so it is the same on every backend; advance offset by x.numel()
// between calls. With training false or p == 0 it returns x.
Tensor dropout(const Tensor& x, double p, bool training, uint64_t seed, uint64_t offset);

// ---- attention ----------------------------------------------------------------------------------
struct AttentionOptions {
  Tensor attn_mask;        // additive, floating, broadcastable to [B, H, Tq, Tk]; or undefined
  bool is_causal = false;  // query i attends to keys j <= i (PyTorch's top-left alignment)
  double scale = 0.0;      // multiplies q k^T; 0 means 1 / sqrt(D)
  double dropout_p = 0.0;  // on the probabilities, as dropout(probabilities, p, true, seed, offset)
  uint64_t seed = 0;       // would draw over [B, H, Tq, Tk]
  uint64_t offset = 0;
};

// softmax(q k^T * scale + attn_mask) v over q [B, H, Tq, D], k [B, H, Tk, D], v [B, H, Tk, Dv]
// -> [B, H, Tq, Dv] (PyTorch's F.scaled_dot_product_attention with a float mask). One
// SCALED_DOT_PRODUCT_ATTENTION op where the device has it for the dtype (and its backward when a
// gradient is needed; the mask gets none), else composed from MATMUL, SOFTMAX and MATMUL with the
// same results within docs/ops.md section 18's tolerances. A query that may attend to no key gets
// NaN, as softmax over nothing. Opens the profile span "attention: fused" or "attention: composed".
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const AttentionOptions& options = {});

}  // namespace switchyard

#pragma GCC visibility pop
