/*
 * switchyard plugin ABI: the whole contract between the core and a backend plugin.
 *
 * A plugin is a shared library named libswitchyard-<name>.so that exports exactly one symbol,
 * switchyard_plugin_entry. The host calls it with SY_ABI_VERSION; the plugin returns a pointer to a
 * static sy_plugin_descriptor. The host checks abi_version and struct_size before it touches
 * anything else and rejects a mismatch naming both versions. (A plugin able to serve several ABI
 * versions may choose its descriptor by host_abi_version; one that serves none returns NULL.)
 *
 * Rules every plugin follows:
 *  - A plugin includes only the switchyard headers that are header-only and ABI-stable: this one
 *    and switchyard/plugin_support/ (shared pool accounting, Status), so plugins build out of tree.
 *  - No C++ exception crosses the boundary. Every function returns an sy_status; on failure the
 *    plugin keeps a human-readable message for the calling thread, read with last_error_message().
 *  - Handles (sy_device, sy_buffer, sy_queue, sy_event) are opaque pointers owned by the plugin.
 *    The host creates them through the table and frees them through the table, exactly once.
 *  - Threads: the host makes one call at a time for one device (its queues, buffers and events
 *    included), from whichever thread its caller runs on; a plugin needs no lock for a device's own
 *    state (queues' scratch memory, streams, pools). Calls for different devices, and the calls
 *    that name no device, may come at the same time from different threads: state that devices
 *    share (an instance, a cache, a library handle) is the plugin's to guard.
 *  - Vendor runtimes (libcuda, the Vulkan loader) are opened by the plugin with dlopen, so that a
 *    plugin loads on a machine without the vendor driver and reports SY_STATUS_UNAVAILABLE with the
 *    reason instead of failing to load.
 *
 * Versioning: SY_ABI_VERSION changes whenever a struct layout or a function signature changes.
 * Optional function-table slots may be NULL; the core supplies a default or reports UNIMPLEMENTED.
 */
#ifndef SWITCHYARD_PLUGIN_ABI_H
#define SWITCHYARD_PLUGIN_ABI_H

/* The ABI is laid out by hand (aligned enum comments, one op name per line): clang-format off. */
/* clang-format off */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SY_ABI_VERSION 1u
#define SY_MAX_RANK 8
#define SY_MAX_OP_INPUTS 8
#define SY_MAX_OP_OUTPUTS 4
#define SY_PLUGIN_ENTRY_SYMBOL "switchyard_plugin_entry"

/* ---------------------------------------------------------------------------------------------- */
/* Status codes. Numbering follows absl/IREE so the names mean what people expect.                 */

typedef enum sy_status {
  SY_STATUS_OK = 0,
  SY_STATUS_CANCELLED = 1,
  SY_STATUS_UNKNOWN = 2,
  SY_STATUS_INVALID_ARGUMENT = 3,
  SY_STATUS_DEADLINE_EXCEEDED = 4,
  SY_STATUS_NOT_FOUND = 5,
  SY_STATUS_ALREADY_EXISTS = 6,
  SY_STATUS_PERMISSION_DENIED = 7,
  SY_STATUS_RESOURCE_EXHAUSTED = 8,
  SY_STATUS_FAILED_PRECONDITION = 9,
  SY_STATUS_ABORTED = 10,
  SY_STATUS_OUT_OF_RANGE = 11,
  SY_STATUS_UNIMPLEMENTED = 12,
  SY_STATUS_INTERNAL = 13,
  SY_STATUS_UNAVAILABLE = 14,
  SY_STATUS_DATA_LOSS = 15
} sy_status;

/* ---------------------------------------------------------------------------------------------- */
/* Data types. Storage types; bf16/f16 ops compute in f32 unless the op says otherwise.             */

typedef enum sy_dtype {
  SY_DTYPE_F32 = 0,
  SY_DTYPE_F16 = 1,
  SY_DTYPE_BF16 = 2,
  SY_DTYPE_I32 = 3,
  SY_DTYPE_I64 = 4,
  SY_DTYPE_COUNT = 5
} sy_dtype;

/* A dtype's name as the op set spells it ("f32", "f16", "bf16", "i32", "i64"), or "invalid-dtype";
 * and its element size in bytes, or 0 for a value outside sy_dtype. Shared so that every plugin
 * and the core name and size dtypes alike. */
static inline const char* sy_dtype_name(uint32_t dtype) {
  static const char* const names[SY_DTYPE_COUNT] = {"f32", "f16", "bf16", "i32", "i64"};
  return dtype < (uint32_t)SY_DTYPE_COUNT ? names[dtype] : "invalid-dtype";
}

static inline size_t sy_dtype_size(uint32_t dtype) {
  static const unsigned char sizes[SY_DTYPE_COUNT] = {4, 2, 2, 4, 8};
  return dtype < (uint32_t)SY_DTYPE_COUNT ? sizes[dtype] : 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* The op set, version 1. docs/ops.md defines each op exactly; the reference plugin is the oracle.  */
/* Values are stable: new ops are appended, never renumbered.                                       */

typedef enum sy_op {
  /* matrix product: out = op(a) @ op(b) (+ bias), batched with broadcasting over leading dims */
  SY_OP_MATMUL = 0,
  /* elementwise unary, out = f(x) */
  SY_OP_RELU = 1,
  SY_OP_GELU = 2, /* tanh approximation is NOT used: exact erf form */
  SY_OP_SIGMOID = 3,
  SY_OP_TANH = 4,
  SY_OP_EXP = 5,
  SY_OP_LOG = 6,
  SY_OP_SQRT = 7,
  SY_OP_NEG = 8,
  SY_OP_ABS = 9,
  SY_OP_SIGN = 10,
  /* elementwise unary backward: inputs (grad_out, saved) -> grad_in */
  SY_OP_RELU_BACKWARD = 11,    /* saved = x */
  SY_OP_GELU_BACKWARD = 12,    /* saved = x */
  SY_OP_SIGMOID_BACKWARD = 13, /* saved = y = sigmoid(x) */
  SY_OP_TANH_BACKWARD = 14,    /* saved = y = tanh(x) */
  /* elementwise binary with numpy broadcasting; params.binary.use_scalar replaces input b */
  SY_OP_ADD = 15,
  SY_OP_SUB = 16,
  SY_OP_MUL = 17,
  SY_OP_DIV = 18,
  SY_OP_MAX = 19,
  SY_OP_MIN = 20,
  SY_OP_POW = 21,
  SY_OP_CMP_GT = 22, /* 1 where a > b else 0, in the output dtype */
  SY_OP_CMP_EQ = 23,
  /* reductions over the axes in params.reduce.axes_mask */
  SY_OP_REDUCE_SUM = 24,
  SY_OP_REDUCE_MEAN = 25,
  SY_OP_REDUCE_MAX = 26,
  SY_OP_ARGMAX = 27, /* one axis; output dtype I32 or I64 */
  /* softmax family over params.softmax.axis */
  SY_OP_SOFTMAX = 28,
  SY_OP_LOG_SOFTMAX = 29,
  SY_OP_SOFTMAX_BACKWARD = 30,     /* (grad_out, y) -> grad_in */
  SY_OP_LOG_SOFTMAX_BACKWARD = 31, /* (grad_out, y) -> grad_in */
  /* cross-entropy over logits [N, C] with integer labels [N] */
  SY_OP_CROSS_ENTROPY = 32,          /* (logits, labels) -> loss scalar (mean or sum) */
  SY_OP_CROSS_ENTROPY_BACKWARD = 33, /* (logits, labels, grad_loss scalar) -> grad_logits */
  /* 2-D convolution, NCHW activations, OIHW weights, groups = 1 */
  SY_OP_CONV2D = 34,                /* (x, w [, bias]) -> y */
  SY_OP_CONV2D_BACKWARD_DATA = 35,  /* (grad_y, w) -> grad_x */
  SY_OP_CONV2D_BACKWARD_WEIGHT = 36, /* (grad_y, x) -> grad_w [, grad_bias] */
  /* 2-D pooling, NCHW */
  SY_OP_MAX_POOL2D = 37,
  SY_OP_MAX_POOL2D_BACKWARD = 38, /* (grad_y, x) -> grad_x */
  SY_OP_AVG_POOL2D = 39,
  SY_OP_AVG_POOL2D_BACKWARD = 40, /* (grad_y) -> grad_x */
  /* layer normalisation over the last params.layer_norm.normalized_rank dims */
  SY_OP_LAYER_NORM = 41,          /* (x, gamma, beta) -> y, mean, rstd */
  SY_OP_LAYER_NORM_BACKWARD = 42, /* (grad_y, x, mean, rstd, gamma) -> grad_x, grad_gamma, grad_beta */
  /* indexing along params.index.axis */
  SY_OP_GATHER = 43,      /* (x, indices) -> out */
  SY_OP_SCATTER_ADD = 44, /* (src, indices) -> out (out is accumulated into, not cleared) */
  /* data movement */
  SY_OP_COPY = 45, /* strided copy; also cast when dtypes differ; permute/transpose via strides */
  SY_OP_FILL = 46, /* out = params.fill.value */
  SY_OP_RANDOM_UNIFORM = 47, /* Philox4x32-10, see docs/ops.md */
  SY_OP_RANDOM_NORMAL = 48,
  /* fused optimizer updates, in place on param and state */
  SY_OP_SGD_UPDATE = 49,  /* (param, grad, momentum_buf) */
  SY_OP_ADAM_UPDATE = 50, /* (param, grad, m, v) */
  /* one step of an LSTM cell after its matrix products; gates in PyTorch's order i, f, g, o */
  SY_OP_LSTM_CELL = 51,          /* (gates, c_prev) -> h, c, act */
  SY_OP_LSTM_CELL_BACKWARD = 52, /* (grad_h, grad_c, act, c_prev, c) -> grad_gates, grad_c_prev */
  /* grouped 2-D convolution (depthwise when groups = channels), NCHW activations, weights
   * [O, C / groups, KH, KW] (PyTorch's layout; oneDNN's goihw once O is split into groups x O/g);
   * params.conv2d_grouped. Added after the first op set: a plugin built before it answers
   * supports_op with 0 for these ids, and the core then composes the convolution per group. */
  SY_OP_CONV2D_GROUPED = 53,                 /* (x, w [, bias]) -> y */
  SY_OP_CONV2D_GROUPED_BACKWARD_DATA = 54,   /* (grad_y, w) -> grad_x */
  SY_OP_CONV2D_GROUPED_BACKWARD_WEIGHT = 55, /* (grad_y, x) -> grad_w [, grad_bias] */
  /* one layer and one direction of a recurrent network over every step of a sequence, weights in
   * PyTorch's layouts; params.rnn; docs/ops.md section 17. LSTM_SEQUENCE's optional fourth output
   * ws [T, B, 5H] (each step's activated gates i, f, g, o and its cell state c) is what
   * LSTM_SEQUENCE_BACKWARD reads: only a plugin that has the backward must write it. */
  SY_OP_LSTM_SEQUENCE = 56, /* (x, h0, c0, w_ih, w_hh [, b_ih, b_hh]) -> y, h_n, c_n [, ws] */
  SY_OP_GRU_SEQUENCE = 57, /* (x, h0, w_ih, w_hh [, b_ih, b_hh]) -> y, h_n [, ws] (linear before reset) */
  /* a (grouped) 2-D convolution with what follows it in inference graphs applied on its output:
   * y = act(conv(x, w) + bias + residual); params.conv2d_fused; forward only; docs/ops.md
   * section 9b. A plugin without it answers supports_op with 0 and the core composes. */
  SY_OP_CONV2D_FUSED = 58, /* (x, w [, bias] [, residual]) -> y */
  /* softmax(q k^T * scale + mask) v over [B, H, T, D] in one call, without the [Tq, Tk] scores in
   * memory where the backend tiles; params.attention; docs/ops.md section 18. A plugin without
   * them answers supports_op with 0 and the core composes MATMUL, SOFTMAX and MATMUL. */
  SY_OP_SCALED_DOT_PRODUCT_ATTENTION = 59, /* (q, k, v [, mask]) -> out [, lse] */
  /* (grad_out, q, k, v, out, lse [, mask]) -> grad_q, grad_k, grad_v */
  SY_OP_SCALED_DOT_PRODUCT_ATTENTION_BACKWARD = 60,
  /* backpropagation through time of one LSTM_SEQUENCE that wrote ws: the gradients of the step's
   * pre-activation gates (the caller's products turn them into x's, w_ih's and the biases'
   * gradients), the initial states' and, when asked, w_hh's; params.rnn; docs/ops.md section 17.
   * (h0, c0, w_hh, y, ws, grad_y, grad_c_n [, grad_h_n]) -> grad_gates, grad_h0, grad_c0
   * [, grad_w_hh] */
  SY_OP_LSTM_SEQUENCE_BACKWARD = 61,
  /* the same for GRU_SEQUENCE: the gradients of the input and recurrent parts of the gate
   * pre-activations (they differ in n, which r scales), h0's and, when asked, w_hh's.
   * (h0, w_hh, y, ws, grad_y [, grad_h_n]) -> grad_gx, grad_gh, grad_h0 [, grad_w_hh] */
  SY_OP_GRU_SEQUENCE_BACKWARD = 62,
  SY_OP_COUNT = 63
} sy_op;

/* The op's name as spelled in sy_op without the SY_OP_ prefix ("MATMUL"), or "UNKNOWN_OP" beyond
 * the op set. Part of the op set's definition so that every plugin and the core name ops alike in
 * their messages. */
static inline const char* sy_op_name(uint32_t op) {
  static const char* const names[SY_OP_COUNT] = {
    "MATMUL",
    "RELU",
    "GELU",
    "SIGMOID",
    "TANH",
    "EXP",
    "LOG",
    "SQRT",
    "NEG",
    "ABS",
    "SIGN",
    "RELU_BACKWARD",
    "GELU_BACKWARD",
    "SIGMOID_BACKWARD",
    "TANH_BACKWARD",
    "ADD",
    "SUB",
    "MUL",
    "DIV",
    "MAX",
    "MIN",
    "POW",
    "CMP_GT",
    "CMP_EQ",
    "REDUCE_SUM",
    "REDUCE_MEAN",
    "REDUCE_MAX",
    "ARGMAX",
    "SOFTMAX",
    "LOG_SOFTMAX",
    "SOFTMAX_BACKWARD",
    "LOG_SOFTMAX_BACKWARD",
    "CROSS_ENTROPY",
    "CROSS_ENTROPY_BACKWARD",
    "CONV2D",
    "CONV2D_BACKWARD_DATA",
    "CONV2D_BACKWARD_WEIGHT",
    "MAX_POOL2D",
    "MAX_POOL2D_BACKWARD",
    "AVG_POOL2D",
    "AVG_POOL2D_BACKWARD",
    "LAYER_NORM",
    "LAYER_NORM_BACKWARD",
    "GATHER",
    "SCATTER_ADD",
    "COPY",
    "FILL",
    "RANDOM_UNIFORM",
    "RANDOM_NORMAL",
    "SGD_UPDATE",
    "ADAM_UPDATE",
    "LSTM_CELL",
    "LSTM_CELL_BACKWARD",
    "CONV2D_GROUPED",
    "CONV2D_GROUPED_BACKWARD_DATA",
    "CONV2D_GROUPED_BACKWARD_WEIGHT",
    "LSTM_SEQUENCE",
    "GRU_SEQUENCE",
    "CONV2D_FUSED",
    "SCALED_DOT_PRODUCT_ATTENTION",
    "SCALED_DOT_PRODUCT_ATTENTION_BACKWARD",
    "LSTM_SEQUENCE_BACKWARD",
    "GRU_SEQUENCE_BACKWARD"};
  return op < (uint32_t)SY_OP_COUNT ? names[op] : "UNKNOWN_OP";
}

/* ---------------------------------------------------------------------------------------------- */
/* Handles. Opaque to the host; each is created and destroyed through the function table.          */

typedef struct sy_device_s* sy_device;
typedef struct sy_buffer_s* sy_buffer;
typedef struct sy_queue_s* sy_queue;
typedef struct sy_event_s* sy_event;
/* A captured sequence of calls on one queue, replayed as one submission (docs/capture.md). */
typedef struct sy_graph_s* sy_graph;

/* A key/value option from the YAML file (backend section), both as UTF-8 strings.
 *
 * Standard options: besides its own keys, every plugin accepts these in device_create (a plugin
 * that rejects unknown keys must still accept them):
 *   deterministic  "true" | "false" (absent = "false"). The host adds deterministic=true to every
 *                  device_create when the YAML file's top-level `deterministic: true` is set.
 *                  The device then gives bit-identical results run to run for the same calls on
 *                  the same device and driver: no float accumulation whose order depends on
 *                  thread timing (atomics, dynamic scheduling), and no kernel choice that depends
 *                  on load. Speed may suffer; docs/determinism.md lists what each backend does. */
typedef struct sy_option {
  const char* key;
  const char* value;
} sy_option;

/* ---------------------------------------------------------------------------------------------- */
/* Devices.                                                                                        */

typedef enum sy_device_type {
  SY_DEVICE_TYPE_CPU = 0,
  SY_DEVICE_TYPE_GPU = 1,            /* a discrete GPU */
  SY_DEVICE_TYPE_INTEGRATED_GPU = 2,
  SY_DEVICE_TYPE_EMULATED = 3,       /* a software implementation of a GPU API (lavapipe...) */
  SY_DEVICE_TYPE_OTHER = 4
} sy_device_type;

typedef struct sy_device_properties {
  uint32_t struct_size; /* set by the host to sizeof(sy_device_properties) before the call */
  uint32_t type;        /* sy_device_type */
  char name[128];
  char vendor[64];
  char driver_version[64];
  char runtime_version[64];
  char uuid[40];        /* hex text, empty if unknown */
  char bus_id[32];      /* PCI bus id, empty if none */
  uint64_t memory_total_bytes;
  uint64_t memory_free_bytes; /* 0 if the driver cannot tell */
  uint32_t compute_units;     /* cores / SMs / compute units; 0 if unknown */
  uint32_t reserved_u32[7];
  char details[256];          /* free text: ISA, compute capability, heaps... */
} sy_device_properties;

typedef struct sy_memory_stats {
  uint64_t allocated_bytes;      /* in live buffers */
  uint64_t reserved_bytes;       /* held from the driver, including the pool's cache */
  uint64_t peak_allocated_bytes; /* since creation or the last reset_peak */
  uint64_t limit_bytes;          /* 0 = no cap */
  uint64_t allocation_count;     /* live buffers */
  uint64_t reserved_u64[3];
} sy_memory_stats;

/* ---------------------------------------------------------------------------------------------- */
/* Ops: a call names the op, its tensors and its parameters.                                       */

typedef struct sy_tensor_desc {
  sy_buffer buffer;
  uint64_t offset_bytes; /* of element [0,...,0] from the start of the buffer */
  uint32_t dtype;        /* sy_dtype */
  uint32_t rank;         /* 0 = scalar (one element) */
  int64_t shape[SY_MAX_RANK];
  int64_t strides[SY_MAX_RANK]; /* in elements; 0 is allowed on inputs (broadcast) */
} sy_tensor_desc;

typedef struct sy_matmul_params {
  uint32_t transpose_a; /* use the transpose of the last two dims of a */
  uint32_t transpose_b;
  uint32_t has_bias; /* bias is input 2, broadcast against the output (e.g. shape [N]) */
  uint32_t reserved;
} sy_matmul_params;

typedef struct sy_binary_params {
  uint32_t use_scalar; /* 1: there is no input b; b = scalar */
  uint32_t reserved;
  double scalar;
} sy_binary_params;

typedef struct sy_reduce_params {
  uint32_t axes_mask; /* bit i set: reduce over input axis i. ARGMAX: exactly one bit */
  uint32_t keep_dims; /* 1: reduced axes stay with size 1 (the output rank equals the input's) */
} sy_reduce_params;

typedef struct sy_softmax_params {
  int32_t axis; /* non-negative axis of the input */
  uint32_t reserved;
} sy_softmax_params;

typedef struct sy_cross_entropy_params {
  uint32_t reduction; /* 0 = mean over N, 1 = sum */
  uint32_t reserved;
  double label_smoothing; /* reserved for later, must be 0 in ABI 1 */
} sy_cross_entropy_params;

typedef struct sy_conv2d_params {
  int32_t stride_h, stride_w;
  int32_t pad_h, pad_w; /* symmetric zero padding */
  int32_t dilation_h, dilation_w;
  uint32_t has_bias;
  uint32_t reserved;
} sy_conv2d_params;

/* The SY_OP_CONV2D_GROUPED family. conv holds what CONV2D's params hold (conv.reserved stays 0);
 * it is the first member, so params.conv2d reads the same fields. groups >= 1 divides both the
 * input and the output channels. */
typedef struct sy_conv2d_grouped_params {
  sy_conv2d_params conv;
  int32_t groups;
  uint32_t reserved;
} sy_conv2d_grouped_params;

/* SY_OP_CONV2D_FUSED's activation, applied last. */
typedef enum sy_activation {
  SY_ACTIVATION_NONE = 0,
  SY_ACTIVATION_RELU = 1, /* max(v, 0) */
  SY_ACTIVATION_CLIP = 2, /* min(max(v, low), high): ONNX Clip, ReLU6 as low 0, high 6 */
  SY_ACTIVATION_SILU = 3  /* v * sigmoid(v) (swish) */
} sy_activation;

/* SY_OP_CONV2D_FUSED. conv as for CONV2D_GROUPED (groups 1 is a plain convolution), first, so
 * params.conv2d and params.conv2d_grouped read the same fields. has_residual: 1 when the last
 * input is a tensor of y's shape added before the activation (a residual connection). */
typedef struct sy_conv2d_fused_params {
  sy_conv2d_grouped_params conv;
  uint32_t activation; /* sy_activation */
  uint32_t has_residual;
  float low, high; /* SY_ACTIVATION_CLIP's bounds (low <= high); 0 otherwise */
  uint32_t reserved[4];
} sy_conv2d_fused_params;

typedef struct sy_pool2d_params {
  int32_t kernel_h, kernel_w;
  int32_t stride_h, stride_w;
  int32_t pad_h, pad_w;      /* max: padding never wins; avg: see count_include_pad */
  uint32_t count_include_pad;
  uint32_t reserved;
} sy_pool2d_params;

typedef struct sy_layer_norm_params {
  uint32_t normalized_rank; /* how many trailing dims are normalised together */
  uint32_t reserved;
  double epsilon;
} sy_layer_norm_params;

typedef struct sy_index_params {
  int32_t axis;
  uint32_t reserved;
} sy_index_params;

typedef struct sy_fill_params {
  double value;
} sy_fill_params;

typedef struct sy_random_params {
  uint64_t seed;
  uint64_t offset; /* counter offset: element i uses Philox counter (offset + i) */
  double a;        /* uniform: low;  normal: mean */
  double b;        /* uniform: high; normal: standard deviation */
} sy_random_params;

typedef struct sy_sgd_params {
  double lr;
  double momentum;
  double dampening;
  double weight_decay;
  uint32_t nesterov;
  uint32_t reserved;
} sy_sgd_params;

typedef struct sy_adam_params {
  double lr;
  double beta1;
  double beta2;
  double epsilon;
  double weight_decay;
  uint32_t decoupled_weight_decay; /* 1 = AdamW */
  uint32_t reserved;
  int64_t step; /* 1-based step count after this update, for bias correction */
} sy_adam_params;

/* LSTM_SEQUENCE and GRU_SEQUENCE. One call is one layer in one direction, as PyTorch's own oneDNN
 * path (mkldnn_rnn_layer) calls it: the weights stay the separate tensors PyTorch and ONNX hold
 * (weight_ih_l{k}[_reverse] is [G*H, in], weight_hh [G*H, H], bias_ih and bias_hh [G*H], gates in
 * PyTorch's order: LSTM i, f, g, o with G = 4, GRU r, z, n with G = 3), so nothing is packed per
 * call, and a stack of L layers in D directions would need 4 * L * D inputs where a call has 8.
 * x is [T, B, in] and y [T, B, H] through their strides, so a batch-first sequence is a permuted
 * view and a bidirectional layer writes each direction into its half of one [T, B, 2H] tensor. */
typedef struct sy_rnn_params {
  int64_t hidden_size; /* H */
  uint32_t reverse;    /* 1: the steps run from position T-1 down to 0 (the _reverse direction) */
  uint32_t has_bias;   /* 1: b_ih and b_hh follow w_hh; 0: there are no biases */
  uint32_t reserved[4]; /* 0 */
} sy_rnn_params;

/* SCALED_DOT_PRODUCT_ATTENTION and its backward (docs/ops.md section 18): q [B, H, Tq, D],
 * k [B, H, Tk, D], v [B, H, Tk, Dv], out [B, H, Tq, Dv]. Scores s = q k^T * scale + mask, with
 * key j of query i masked out when causal and j > i (PyTorch's top-left alignment). Dropout keeps
 * probability p[b, h, i, j] where u > dropout_p, u the RANDOM_UNIFORM number of Philox counter
 * offset + ((b * H + h) * Tq + i) * Tk + j under key seed, and scales the kept by
 * 1 / (1 - dropout_p): the mask `dropout()` draws over the [B, H, Tq, Tk] probabilities. */
typedef struct sy_attention_params {
  double scale;         /* multiplies q k^T; > 0 and finite (PyTorch's default is 1 / sqrt(D)) */
  double dropout_p;     /* in [0, 1); 0 = no dropout */
  uint64_t seed;        /* dropout's Philox key */
  uint64_t offset;      /* dropout's first Philox counter */
  uint32_t causal;      /* 0 or 1 */
  uint32_t has_mask;    /* 1: an additive mask [B, H, Tq, Tk] (stride 0 broadcasts) follows v */
  uint32_t reserved[4]; /* 0 */
} sy_attention_params;

typedef union sy_op_params {
  sy_matmul_params matmul;
  sy_binary_params binary;
  sy_reduce_params reduce;
  sy_softmax_params softmax;
  sy_cross_entropy_params cross_entropy;
  sy_conv2d_params conv2d;
  sy_conv2d_grouped_params conv2d_grouped;
  sy_conv2d_fused_params conv2d_fused;
  sy_pool2d_params pool2d;
  sy_layer_norm_params layer_norm;
  sy_index_params index;
  sy_fill_params fill;
  sy_random_params random;
  sy_sgd_params sgd;
  sy_adam_params adam;
  sy_rnn_params rnn;
  sy_attention_params attention;
  uint8_t reserved[256]; /* fixes the size of the union for the ABI */
} sy_op_params;

typedef struct sy_op_call {
  uint32_t op; /* sy_op */
  uint32_t num_inputs;
  uint32_t num_outputs;
  uint32_t flags; /* SY_CALL_* hints, 0 for none; a plugin may ignore every one of them */
  sy_tensor_desc inputs[SY_MAX_OP_INPUTS];
  sy_tensor_desc outputs[SY_MAX_OP_OUTPUTS];
  sy_op_params params;
} sy_op_call;

/* sy_op_call.flags. Plugins built before a flag existed ignore it, which must stay correct. */
/* The caller promises that the op's weights hold the same bytes at every call while their buffers
 * are allocated: input 1 of CONV2D, CONV2D_GROUPED and CONV2D_FUSED (w) and of MATMUL (b), and
 * w_ih and w_hh of LSTM_SEQUENCE (inputs 3, 4) and GRU_SEQUENCE (inputs 2, 3). A plugin may keep a
 * converted copy of each keyed by its buffer (and offset and layout), and must drop that copy
 * when the buffer is released. The ONNX importer sets it for weights that are the model's
 * initializers, which nothing writes. */
#define SY_CALL_CONSTANT_WEIGHTS (1u << 0)

/* The inputs SY_CALL_CONSTANT_WEIGHTS promises constant for `op`: inputs first .. first + count - 1
 * (a call may have fewer). The host keeps such a buffer out of anything that would rewrite it
 * while it stays allocated (a recording's shared arena of intermediates, for one). */
static inline void sy_constant_weight_inputs(uint32_t op, uint32_t* first, uint32_t* count) {
  *first = 1;
  *count = 1;
  if (op == SY_OP_LSTM_SEQUENCE) *first = 3, *count = 2;
  if (op == SY_OP_GRU_SEQUENCE) *first = 2, *count = 2;
}

/* ---------------------------------------------------------------------------------------------- */
/* The function table. Required slots are marked; every other slot may be NULL.                   */

typedef struct sy_plugin_functions {
  /* The message for the last failed call on this thread (never NULL; "" if none). Required. */
  const char* (*last_error_message)(void);

  /* Devices. */
  /* Required. Counts devices this plugin can see; UNAVAILABLE with a reason if the vendor runtime
   * is missing (the host shows that reason to the user). */
  sy_status (*device_count)(uint32_t* count);
  /* Required. props->struct_size is set by the host. */
  sy_status (*device_properties)(uint32_t index, sy_device_properties* props);
  /* Required. Options come from the YAML backend section (threads, memory_limit_bytes, ...). */
  sy_status (*device_create)(uint32_t index, const sy_option* options, size_t option_count,
                             sy_device* out_device);
  /* Required. */
  void (*device_destroy)(sy_device device);

  /* Buffers: device memory. Required. */
  sy_status (*buffer_allocate)(sy_device device, uint64_t size_bytes, sy_buffer* out_buffer);
  /* The host may release a buffer that calls queued on some queue still use; they must still see
   * its contents. Memory handed out again before that work ran is used on any queue only after
   * it (docs/writing-a-backend.md, "Queues"). */
  void (*buffer_release)(sy_device device, sy_buffer buffer);
  /* Optional: a host pointer to the buffer's bytes, valid for its life, for host-memory devices.
   * Returns NULL when the memory is not host-addressable. */
  void* (*buffer_host_address)(sy_device device, sy_buffer buffer);

  /* Queues: ops run in submission order on one queue. Required. There is no order between two
   * queues (as between CUDA streams): a host that uses one queue's results on another calls
   * queue_finish on the first. */
  sy_status (*queue_create)(sy_device device, sy_queue* out_queue);
  void (*queue_destroy)(sy_device device, sy_queue queue);
  /* Blocks until every call submitted to the queue so far has completed. Required. */
  sy_status (*queue_finish)(sy_device device, sy_queue queue);
  /* Host <-> device copies, ordered with the queue's other work. Required.
   * write: returns once src may be reused. read: returns once dst holds the data. */
  sy_status (*buffer_write)(sy_device device, sy_queue queue, sy_buffer dst, uint64_t dst_offset,
                            const void* src, uint64_t size_bytes);
  sy_status (*buffer_read)(sy_device device, sy_queue queue, sy_buffer src, uint64_t src_offset,
                           void* dst, uint64_t size_bytes);

  /* Events for timing. Optional (the core times on the host when absent). */
  sy_status (*event_create)(sy_device device, sy_event* out_event);
  void (*event_destroy)(sy_device device, sy_event event);
  sy_status (*event_record)(sy_device device, sy_queue queue, sy_event event);
  sy_status (*event_synchronize)(sy_device device, sy_event event);
  sy_status (*event_elapsed_ms)(sy_device device, sy_event start, sy_event end, double* out_ms);

  /* Ops. */
  /* Required. Returns 1 if the device runs `op` with tensors of `dtype` (the dtype of the first
   * floating-point input), else 0. The core uses this for fallback decisions and test skipping. */
  int (*supports_op)(sy_device device, uint32_t op, uint32_t dtype);
  /* Required. Enqueues one op. Shape errors are INVALID_ARGUMENT with a message that names them. */
  sy_status (*dispatch)(sy_device device, sy_queue queue, const sy_op_call* call);

  /* Memory pool control (part of the ABI, not a vendor special). Optional. */
  sy_status (*memory_stats)(sy_device device, sy_memory_stats* out_stats);
  sy_status (*memory_reset_peak)(sy_device device);
  sy_status (*memory_empty_cache)(sy_device device);
  /* 0 removes the cap. An allocation over the cap fails with RESOURCE_EXHAUSTED naming requested,
   * in-use and cap sizes. */
  sy_status (*memory_set_limit)(sy_device device, uint64_t limit_bytes);

  /* Optional. The settings in effect on this device as one line of space-separated key=value
   * pairs, after options and defaults are resolved (e.g. "threads=2 adaptive_threads=off
   * deterministic=on fpmath=strict"), for `switchyard devices` and run logs. Writes a
   * NUL-terminated string into buffer (size bytes, size > 0), cut short if it does not fit.
   * Taken from reserved_slots without an ABI version change: plugins built before it have NULL. */
  sy_status (*device_settings)(sy_device device, char* buffer, size_t size);

  /* Optional: native capture and replay (docs/capture.md). queue_capture_begin makes `queue`
   * record the calls made on it (dispatch, and the copies of buffer_write) into a graph instead
   * of running them, until queue_capture_end hands the graph over. A call that cannot be recorded
   * (buffer_read, queue_finish, event_record) fails with UNIMPLEMENTED while capturing, and
   * queue_capture_end then fails too and discards what was recorded. graph_launch runs the graph
   * on a queue of the device, after that queue's earlier work and before its later work, with
   * the recorded buffers and parameters; a launch while the previous one runs waits for it. The
   * host keeps every buffer a graph names allocated, and the capturing queue alive, until
   * graph_destroy, which waits for the graph's last launch. Taken from reserved_slots without an
   * ABI version change: plugins built before them have NULL, and the host then re-dispatches. */
  sy_status (*queue_capture_begin)(sy_device device, sy_queue queue);
  sy_status (*queue_capture_end)(sy_device device, sy_queue queue, sy_graph* out_graph);
  sy_status (*graph_launch)(sy_device device, sy_queue queue, sy_graph graph);
  void (*graph_destroy)(sy_device device, sy_graph graph);

  /* Optional: changes the parameters of one op call captured in `graph` (call_index counts the
   * dispatch calls made on the capturing queue, from 0), as CUDA's kernel-node parameter updates
   * do: `call` names the same op and the same tensors as the captured call, and only its params
   * may differ (a new dropout seed, an optimizer's step). The next launch uses them; a launch in
   * flight is waited for first. UNIMPLEMENTED where the new parameters would change what the call
   * records (other kernels, sizes or scratch); the graph is then unchanged and the host stops
   * replaying it natively. Taken from reserved_slots without an ABI version change: plugins built
   * before it have NULL, and the host then re-dispatches a recording whose calls change. */
  sy_status (*graph_update)(sy_device device, sy_graph graph, uint64_t call_index,
                            const sy_op_call* call);

  void* reserved_slots[10];
} sy_plugin_functions;

/* Capability flags (descriptor.capabilities). */
#define SY_CAP_HOST_MEMORY (1u << 0)  /* buffers are host memory (buffer_host_address works) */
#define SY_CAP_ASYNC (1u << 1)        /* dispatch returns before the work completes */
#define SY_CAP_DEVICE_TIMING (1u << 2) /* events measure device time */
/* The device's convolutions and pooling run fastest on channels-last activations: a rank-4
 * [N, C, H, W] tensor whose strides are [H*W*C, 1, W*C, C] (NHWC in memory). Every op still takes
 * any strides; the flag only tells the host's importers to keep a convolutional network's
 * activations that way (docs/ops.md section 9). Plugins built before it have it unset: NCHW. */
#define SY_CAP_CHANNELS_LAST (1u << 3)

typedef struct sy_plugin_descriptor {
  uint32_t abi_version; /* = SY_ABI_VERSION the plugin was built with */
  uint32_t struct_size; /* = sizeof(sy_plugin_descriptor) the plugin was built with */
  const char* name;     /* matches the file name: libswitchyard-<name>.so */
  const char* plugin_version;
  const char* description;
  uint64_t capabilities; /* SY_CAP_* */
  uint64_t reserved[8];
  const sy_plugin_functions* functions;
} sy_plugin_descriptor;

/* The one exported symbol. See the top of this file. */
typedef const sy_plugin_descriptor* (*sy_plugin_entry_fn)(uint32_t host_abi_version);

#if defined(_WIN32)
#define SY_PLUGIN_EXPORT __declspec(dllexport)
#else
#define SY_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* A plugin writes SY_DEFINE_PLUGIN_ENTRY(descriptor) once, in its entry file. */
#define SY_DEFINE_PLUGIN_ENTRY(descriptor)                                                       \
  SY_PLUGIN_EXPORT const sy_plugin_descriptor* switchyard_plugin_entry(uint32_t host_abi_version) \
  {                                                                                              \
    (void)host_abi_version;                                                                      \
    return &(descriptor);                                                                        \
  }

#ifdef __cplusplus
} /* extern "C" */
#endif

/* clang-format on */

#endif /* SWITCHYARD_PLUGIN_ABI_H */
