// Every kernel the plugin launches, by its extern "C" name in plugins/cuda/kernels/*.cu.
// Each device resolves all of them when it is created, so a missing kernel is a clear error at
// device_create instead of a failure in the middle of a training run.
#pragma once

#define SY_CUDA_KERNELS(X)     \
  X(sy_elementwise)            \
  X(sy_copy)                   \
  X(sy_fill)                   \
  X(sy_random)                 \
  X(sy_reduce)                 \
  X(sy_softmax)                \
  X(sy_cross_entropy)          \
  X(sy_conv2d_forward)         \
  X(sy_conv2d_backward_data)   \
  X(sy_conv2d_backward_weight) \
  X(sy_pool2d_forward)         \
  X(sy_pool2d_backward)        \
  X(sy_layer_norm)             \
  X(sy_layer_norm_params)      \
  X(sy_gather)                 \
  X(sy_scatter_add)            \
  X(sy_scatter_add_ordered)    \
  X(sy_optimizer_update)       \
  X(sy_matmul_tiled)
