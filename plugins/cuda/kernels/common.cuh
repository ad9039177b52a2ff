// Device helpers shared by every kernel file: typed loads and stores by run-time dtype, index
// arithmetic over strided tensors, and warp/group reductions.
//
// Kernels take their dtype at run time (one uniform switch per access) instead of being compiled
// once per dtype: that keeps one kernel per op family and lets a call mix dtypes where docs/ops.md
// allows it (f32 mean/rstd beside bf16 data, I64 labels, I32 argmax output).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "kernel_args.h"

namespace sy {

enum Dtype : int32_t { kF32 = 0, kF16 = 1, kBF16 = 2, kI32 = 3, kI64 = 4 };

// The op numbers from plugin_abi.h that kernels switch on (the kernels do not include that
// header so that they build with nvcc alone).
enum Op : int32_t {
  kMatmul = 0,
  kRelu = 1,
  kGelu = 2,
  kSigmoid = 3,
  kTanh = 4,
  kExp = 5,
  kLog = 6,
  kSqrt = 7,
  kNeg = 8,
  kAbs = 9,
  kSign = 10,
  kReluBackward = 11,
  kGeluBackward = 12,
  kSigmoidBackward = 13,
  kTanhBackward = 14,
  kAdd = 15,
  kSub = 16,
  kMul = 17,
  kDiv = 18,
  kMax = 19,
  kMin = 20,
  kPow = 21,
  kCmpGt = 22,
  kCmpEq = 23,
  kReduceSum = 24,
  kReduceMean = 25,
  kReduceMax = 26,
  kArgmax = 27,
  kSoftmax = 28,
  kLogSoftmax = 29,
  kSoftmaxBackward = 30,
  kLogSoftmaxBackward = 31,
  kMaxPool = 37,
  kMaxPoolBackward = 38,
  kAvgPool = 39,
  kAvgPoolBackward = 40,
  kSgdUpdate = 49,
  kAdamUpdate = 50
};

__device__ __forceinline__ float load_float(uint64_t base, int32_t dtype, int64_t offset) {
  switch (dtype) {
    case kF16:
      return __half2float(reinterpret_cast<const __half*>(base)[offset]);
    case kBF16:
      return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(base)[offset]);
    case kI32:
      return static_cast<float>(reinterpret_cast<const int32_t*>(base)[offset]);
    case kI64:
      return static_cast<float>(reinterpret_cast<const int64_t*>(base)[offset]);
    default:
      return reinterpret_cast<const float*>(base)[offset];
  }
}

// Rounds once, to nearest even (f16 overflows to inf; NaN stays NaN).
__device__ __forceinline__ void store_float(uint64_t base, int32_t dtype, int64_t offset, float v) {
  switch (dtype) {
    case kF16:
      reinterpret_cast<__half*>(base)[offset] = __float2half_rn(v);
      break;
    case kBF16:
      reinterpret_cast<__nv_bfloat16*>(base)[offset] = __float2bfloat16_rn(v);
      break;
    default:
      reinterpret_cast<float*>(base)[offset] = v;
      break;
  }
}

__device__ __forceinline__ int64_t load_int(uint64_t base, int32_t dtype, int64_t offset) {
  if (dtype == kI32) return reinterpret_cast<const int32_t*>(base)[offset];
  return reinterpret_cast<const int64_t*>(base)[offset];
}

// Integer store: I32 keeps the low 32 bits (two's complement), I64 stores the value.
__device__ __forceinline__ void store_int(uint64_t base, int32_t dtype, int64_t offset, int64_t v) {
  if (dtype == kI32) {
    reinterpret_cast<int32_t*>(base)[offset] = static_cast<int32_t>(v);
  } else {
    reinterpret_cast<int64_t*>(base)[offset] = v;
  }
}

__device__ __forceinline__ float load(const SyTensorArg& t, int64_t offset) {
  return load_float(t.data, t.dtype, offset);
}
__device__ __forceinline__ void store(const SyTensorArg& t, int64_t offset, float v) {
  store_float(t.data, t.dtype, offset, v);
}

// Element offset of row-major position `linear` of t's shape, using t's strides.
__device__ __forceinline__ int64_t offset_of(const SyTensorArg& t, int64_t linear) {
  int64_t offset = 0;
  for (int d = t.rank - 1; d > 0; --d) {
    const int64_t extent = t.shape[d];
    const int64_t q = linear / extent;
    offset += (linear - q * extent) * t.strides[d];
    linear = q;
  }
  if (t.rank > 0) offset += linear * t.strides[0];
  return offset;
}

// Offsets of position `linear` of the iteration space in each of N operands.
template <int N, typename Index>
__device__ __forceinline__ void operand_offsets(const SyIter& it, const SyOperand* const* ops,
                                                Index linear, int64_t* offsets) {
#pragma unroll
  for (int i = 0; i < N; ++i) offsets[i] = 0;
  for (int d = it.rank - 1; d > 0; --d) {
    const Index extent = static_cast<Index>(it.shape[d]);
    const Index q = linear / extent;
    const int64_t c = static_cast<int64_t>(linear - q * extent);
#pragma unroll
    for (int i = 0; i < N; ++i) offsets[i] += c * ops[i]->strides[d];
    linear = q;
  }
  if (it.rank > 0) {
#pragma unroll
    for (int i = 0; i < N; ++i) offsets[i] += static_cast<int64_t>(linear) * ops[i]->strides[0];
  }
}

__device__ __forceinline__ int64_t grid_stride() {
  return static_cast<int64_t>(blockDim.x) * gridDim.x;
}
__device__ __forceinline__ int64_t global_thread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

// Calls body(offsets) for every position of the iteration space, with 32-bit index arithmetic
// when the host said everything fits.
template <int N, typename Body>
__device__ __forceinline__ void for_each_position(const SyIter& it, const SyOperand* const* ops,
                                                  Body body) {
  int64_t offsets[N];
  if (it.index32) {
    const uint32_t n = static_cast<uint32_t>(it.numel);
    for (int64_t i = global_thread(); i < n; i += grid_stride()) {
      operand_offsets<N, uint32_t>(it, ops, static_cast<uint32_t>(i), offsets);
      body(i, offsets);
    }
  } else {
    for (int64_t i = global_thread(); i < it.numel; i += grid_stride()) {
      operand_offsets<N, int64_t>(it, ops, i, offsets);
      body(i, offsets);
    }
  }
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int s = 16; s > 0; s >>= 1) v += __shfl_xor_sync(0xffffffffu, v, s);
  return v;
}
__device__ __forceinline__ double warp_sum(double v) {
  for (int s = 16; s > 0; s >>= 1) v += __shfl_xor_sync(0xffffffffu, v, s);
  return v;
}
// max that propagates NaN (as torch.max / torch.maximum).
__device__ __forceinline__ float nan_max(float a, float b) {
  return (a > b || a != a) ? a : b;  // b wins when b is NaN or the larger
}
__device__ __forceinline__ float warp_max(float v) {
  for (int s = 16; s > 0; s >>= 1) v = nan_max(v, __shfl_xor_sync(0xffffffffu, v, s));
  return v;
}

// Reduction over a group of `group_size` consecutive threads (a power of two, 32..1024) that
// starts at a multiple of group_size within the block. `scratch` holds one slot per warp of the
// block. Every thread of the group gets the result. All threads of the block must call it.
template <typename T, typename Combine>
__device__ __forceinline__ T group_reduce(T v, int group_size, T* scratch, Combine combine) {
  for (int s = 16; s > 0; s >>= 1) v = combine(v, __shfl_xor_sync(0xffffffffu, v, s));
  if (group_size <= 32) return v;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int warps_per_group = group_size / 32;
  const int first_warp = (warp / warps_per_group) * warps_per_group;
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  T total = scratch[first_warp];
  for (int w = 1; w < warps_per_group; ++w) total = combine(total, scratch[first_warp + w]);
  return total;
}

struct SumOp {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};
struct MaxOp {
  __device__ float operator()(float a, float b) const { return nan_max(a, b); }
};

}  // namespace sy
