// Every kernel the plugin launches, by its extern "C" name, and the file of plugins/cuda/kernels/
// (the embedded module) that defines it, so each name is looked up only where it is: a lookup in
// the wrong module is a driver error that compute-sanitizer rightly reports.
// Each device resolves all of them when it is created, so a missing kernel is a clear error at
// device_create instead of a failure in the middle of a training run.
#pragma once

#define SY_CUDA_KERNELS(X)            \
  X(sy_elementwise, elementwise)      \
  X(sy_copy, data)                    \
  X(sy_fill, data)                    \
  X(sy_random, data)                  \
  X(sy_reduce, reduce)                \
  X(sy_softmax, softmax)              \
  X(sy_cross_entropy, softmax)        \
  X(sy_conv2d_forward, conv)          \
  X(sy_conv2d_forward_f32, conv)      \
  X(sy_conv2d_backward_data, conv)    \
  X(sy_conv2d_backward_weight, conv)  \
  X(sy_conv2d_im2col, conv)           \
  X(sy_conv2d_epilogue, conv)         \
  X(sy_pool2d_forward, pool)          \
  X(sy_pool2d_backward, pool)         \
  X(sy_layer_norm, layer_norm)        \
  X(sy_layer_norm_params, layer_norm) \
  X(sy_gather, index)                 \
  X(sy_scatter_add, index)            \
  X(sy_scatter_add_ordered, index)    \
  X(sy_optimizer_update, optim)       \
  X(sy_matmul_tiled, matmul)          \
  X(sy_lstm_cell, lstm)               \
  X(sy_lstm_step, lstm)
