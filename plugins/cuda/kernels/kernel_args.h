/*
 * Kernel parameter structs shared by the host code (g++) and the kernels (nvcc).
 *
 * Every kernel takes exactly one of these structs by value. Both compilers lay the structs out by
 * the same x86-64 rules; the size checks at the bottom fail the build on either side if a field is
 * added on one side only. Dtype codes are the values of sy_dtype. Strides are in elements.
 */
#ifndef SWITCHYARD_CUDA_KERNEL_ARGS_H
#define SWITCHYARD_CUDA_KERNEL_ARGS_H

#include <stdint.h>

#define SY_CUDA_MAX_RANK 8

/* One tensor: device address of element [0, ..., 0], dtype, and a shape/strides pair whose meaning
 * depends on the kernel (a whole tensor, or a view of some of its axes). */
typedef struct SyTensorArg {
  uint64_t data;
  int32_t dtype;
  int32_t rank;
  int64_t shape[SY_CUDA_MAX_RANK];
  int64_t strides[SY_CUDA_MAX_RANK];
} SyTensorArg;

/* The iteration space of an elementwise kernel; operands carry only their strides over it. */
typedef struct SyIter {
  int64_t numel;
  int32_t rank;
  int32_t index32; /* 1: numel and every extent fit in 32 bits, so index math may use 32 bits */
  int64_t shape[SY_CUDA_MAX_RANK];
} SyIter;

typedef struct SyOperand {
  uint64_t data;
  int32_t dtype;
  int32_t reserved;
  int64_t strides[SY_CUDA_MAX_RANK];
} SyOperand;

/* Unary, unary-backward and binary ops (op = sy_op value). */
typedef struct SyElementwiseArgs {
  SyIter iter;
  SyOperand out;
  SyOperand in0;
  SyOperand in1; /* unused when the op is unary or use_scalar is 1 */
  int32_t op;
  int32_t use_scalar;
  float scalar;
  int32_t reserved;
} SyElementwiseArgs;

typedef struct SyCopyArgs {
  SyIter iter;
  SyOperand out;
  SyOperand in;
} SyCopyArgs;

typedef struct SyFillArgs {
  SyIter iter;
  SyOperand out;
  float float_value; /* the value rounded to f32 (then to the storage type in the kernel) */
  int32_t reserved;
  int64_t int_value; /* the value truncated toward zero, for integer outputs */
} SyFillArgs;

typedef struct SyRandomArgs {
  SyIter iter; /* out's logical shape, coalesced in row-major order so the linear index is kept */
  SyOperand out;
  uint64_t seed;
  uint64_t offset;
  float a;
  float b;
  int32_t normal; /* 0: uniform in [a, b); 1: normal with mean a, standard deviation b */
  int32_t reserved;
} SyRandomArgs;

/* Reductions. kept_* describe the output positions (the kept axes), reduced the reduced axes. */
typedef struct SyReduceArgs {
  SyTensorArg in_kept;    /* x's data and dtype; shape = kept extents; x's strides at those axes */
  SyTensorArg out_kept;   /* out's data and dtype; the same shape; out's strides */
  SyTensorArg in_reduced; /* shape = reduced extents; x's strides at those axes */
  int64_t kept_count;
  int64_t reduced_count;
  int32_t op;         /* SY_OP_REDUCE_SUM / MEAN / MAX / ARGMAX */
  int32_t group_size; /* threads that cooperate on one output: 32 .. 1024, a power of two */
} SyReduceArgs;

/* Softmax family and cross-entropy: one "row" per position of the non-axis dims. */
typedef struct SyRowArgs {
  SyTensorArg in0; /* rows view: shape = non-axis extents, strides of the tensor at those axes */
  SyTensorArg in1;
  SyTensorArg out;
  int64_t in0_axis_stride;
  int64_t in1_axis_stride;
  int64_t out_axis_stride;
  int64_t rows;
  int64_t axis_length;
  int32_t op;         /* sy_op */
  int32_t group_size; /* threads per row */
  float divisor;      /* cross-entropy backward: N (mean) or 1 (sum) */
  int32_t reserved;
} SyRowArgs;

/* Cross-entropy: logits [N, C] (in0), labels [N] (in1), per-row losses or grad_logits (out). */
typedef struct SyCrossEntropyArgs {
  SyRowArgs rows;
  SyTensorArg labels;
  SyOperand grad_loss; /* rank 0; backward only */
} SyCrossEntropyArgs;

/* CONV2D, CONV2D_GROUPED and CONV2D_FUSED (forward), and the backward ops of the first two. w is
 * [O, C / groups, KH, KW]; groups 1 is a plain convolution. */
typedef struct SyConvArgs {
  SyTensorArg in0; /* forward: x; backward data: grad_y; backward weight: grad_y */
  SyTensorArg in1; /* forward: w;  backward data: w;      backward weight: x */
  SyTensorArg bias;
  SyTensorArg out;
  SyTensorArg residual; /* forward with has_residual: y's shape, added before the activation */
  int32_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
  int32_t has_bias;
  int32_t group_size; /* backward weight: threads per weight element */
  int32_t groups;     /* >= 1; divides C and O */
  int32_t activation; /* forward: sy_activation, applied last (0 = none) */
  int32_t has_residual;
  float low, high; /* SY_ACTIVATION_CLIP's bounds */
  int32_t reserved;
} SyConvArgs;

/* im2col for the GEMM form of a forward convolution (groups 1): col [images, C*KH*KW, OH*OW], f32
 * and dense, from x's images (x.data is the first image of the chunk). */
typedef struct SyIm2colArgs {
  SyTensorArg x; /* [N, C, H, W], any strides */
  uint64_t col;
  int64_t images, channels, kernel_h, kernel_w, out_h, out_w;
  int32_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
} SyIm2colArgs;

typedef struct SyPoolArgs {
  SyTensorArg in0; /* forward: x; max backward: grad_y; avg backward: grad_y */
  SyTensorArg in1; /* max backward: x */
  SyTensorArg out;
  int32_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w;
  int32_t count_include_pad;
  int32_t op;
} SyPoolArgs;

/* Layer norm. *_lead views have the leading extents, *_norm views the normalised ones. */
typedef struct SyLayerNormArgs {
  SyTensorArg x_lead, x_norm;
  SyTensorArg g_lead, g_norm;     /* backward: grad_y; forward: unused */
  SyTensorArg out_lead, out_norm; /* forward: y; backward: grad_x */
  SyTensorArg gamma, beta;        /* views over the normalised extents */
  SyTensorArg mean, rstd;         /* views over the leading extents */
  int64_t rows;
  int64_t row_length;
  float epsilon;
  int32_t group_size;
} SyLayerNormArgs;

/* Layer-norm parameter gradients: one thread per normalised position, summing over rows. */
typedef struct SyLayerNormParamArgs {
  SyTensorArg x_lead, x_norm;
  SyTensorArg g_lead, g_norm;
  SyTensorArg mean, rstd;
  SyTensorArg grad_gamma, grad_beta; /* views over the normalised extents */
  int64_t rows;
  int64_t row_length;
} SyLayerNormParamArgs;

/* LSTM_CELL (backward = 0): in = gates, c_prev; out = h, c, act. LSTM_CELL_BACKWARD: in = grad_h,
 * grad_c, act, c_prev, c; out = grad_gates, grad_c_prev. Every tensor has rank 2; one thread per
 * (row, hidden unit). */
typedef struct SyLstmCellArgs {
  SyTensorArg in[5];
  SyTensorArg out[3];
  int64_t batch;
  int64_t hidden;
  int32_t backward;
  int32_t reserved;
} SyLstmCellArgs;

/* One step of LSTM_SEQUENCE (f32): a = gates + gx (+ b_ih + b_hh), then the cell; h and c are the
 * unrounded f32 state [B, H], updated in place; y [T, B, H] (any strides) gets h at position. */
typedef struct SyLstmStepArgs {
  SyTensorArg y;
  SyTensorArg b_ih, b_hh; /* [4H] when has_bias */
  uint64_t gates;         /* f32 [B, 4H] dense: h W_hh^T */
  uint64_t gx;            /* f32 [B, 4H] dense: x[position] W_ih^T */
  uint64_t h, c;          /* f32 [B, H] dense */
  int64_t batch, hidden, position;
  int32_t has_bias;
  int32_t reserved;
} SyLstmStepArgs;

/* GATHER iterates over out, SCATTER_ADD over src; `axis` is the indexed axis of both. */
typedef struct SyIndexArgs {
  SyTensorArg iterated; /* GATHER: out; SCATTER_ADD: src (shape = the iteration space) */
  SyTensorArg indexed;  /* GATHER: x;   SCATTER_ADD: out (same rank; strides used) */
  SyTensorArg indices;  /* rank 1 */
  int64_t numel;
  int64_t indexed_axis_size;
  int32_t axis;
  int32_t reserved;
} SyIndexArgs;

typedef struct SyOptimArgs {
  SyIter iter;
  SyOperand param, grad, state0, state1; /* SGD: state0 = momentum_buf; Adam: m, v */
  int32_t op;                            /* SY_OP_SGD_UPDATE or SY_OP_ADAM_UPDATE */
  int32_t nesterov;
  int32_t decoupled_weight_decay;
  int32_t has_momentum_buffer;
  float lr, momentum, dampening, weight_decay;
  float beta1, beta2, epsilon;
  float bias_correction1, bias_correction2; /* 1 - beta^step, computed in double on the host */
  int32_t reserved;
} SyOptimArgs;

/* Tiled matmul: batch views have the broadcast batch extents and each operand's batch strides. */
typedef struct SyMatmulArgs {
  SyTensorArg a_batch, b_batch, out_batch, bias_batch;
  int64_t m, n, k;
  int64_t a_stride_m, a_stride_k, b_stride_k, b_stride_n;
  int64_t out_stride_m, out_stride_n, bias_stride_m, bias_stride_n;
  int64_t batch_begin; /* first batch handled by blockIdx.z == 0 */
  int32_t has_bias;
  int32_t reserved;
} SyMatmulArgs;

#ifdef __cplusplus
static_assert(sizeof(SyTensorArg) == 144, "SyTensorArg layout");
static_assert(sizeof(SyIter) == 80, "SyIter layout");
static_assert(sizeof(SyOperand) == 80, "SyOperand layout");
static_assert(sizeof(SyElementwiseArgs) == 336, "SyElementwiseArgs layout");
static_assert(sizeof(SyRowArgs) == 488, "SyRowArgs layout");
static_assert(sizeof(SyLayerNormArgs) == 10 * 144 + 24, "SyLayerNormArgs layout");
static_assert(sizeof(SyOptimArgs) == 80 * 5 + 16 + 40, "SyOptimArgs layout");
static_assert(sizeof(SyConvArgs) == 5 * 144 + 14 * 4, "SyConvArgs layout");
static_assert(sizeof(SyIm2colArgs) == 144 + 8 + 6 * 8 + 6 * 4, "SyIm2colArgs layout");
static_assert(sizeof(SyLstmStepArgs) == 3 * 144 + 4 * 8 + 3 * 8 + 8, "SyLstmStepArgs layout");
static_assert(sizeof(SyMatmulArgs) == 4 * 144 + 12 * 8 + 8, "SyMatmulArgs layout");
#endif

#endif /* SWITCHYARD_CUDA_KERNEL_ARGS_H */
