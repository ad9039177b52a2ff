// Reductions (section 6 of docs/ops.md): SUM and MEAN accumulate in double, MAX propagates NaN,
// ARGMAX keeps the smallest index among equal maxima and lets the first NaN win.
#include <math.h>

#include "common.cuh"

namespace sy {
namespace {

struct ArgmaxPair {
  float value;
  int64_t index;
};

__device__ __forceinline__ ArgmaxPair better(ArgmaxPair a, ArgmaxPair b) {
  const bool a_nan = a.value != a.value;
  const bool b_nan = b.value != b.value;
  if (a_nan || b_nan) {
    if (a_nan && b_nan) return a.index < b.index ? a : b;
    return a_nan ? a : b;
  }
  if (a.value > b.value) return a;
  if (b.value > a.value) return b;
  return a.index < b.index ? a : b;
}

__device__ ArgmaxPair group_argmax(ArgmaxPair p, int group_size) {
  __shared__ float values[32];
  __shared__ int64_t indices[32];
  for (int s = 16; s > 0; s >>= 1) {
    ArgmaxPair other;
    other.value = __shfl_xor_sync(0xffffffffu, p.value, s);
    other.index = __shfl_xor_sync(0xffffffffu, p.index, s);
    p = better(p, other);
  }
  if (group_size <= 32) return p;
  const int warp = threadIdx.x / 32;
  const int warps_per_group = group_size / 32;
  const int first_warp = (warp / warps_per_group) * warps_per_group;
  __syncthreads();
  if (threadIdx.x % 32 == 0) {
    values[warp] = p.value;
    indices[warp] = p.index;
  }
  __syncthreads();
  ArgmaxPair total{values[first_warp], indices[first_warp]};
  for (int w = 1; w < warps_per_group; ++w)
    total = better(total, {values[first_warp + w], indices[first_warp + w]});
  return total;
}

__device__ void reduce_one(const SyReduceArgs& args, int64_t o, bool active, int lane) {
  __shared__ double sums[32];
  __shared__ float maxima[32];
  const int G = args.group_size;
  const int64_t R = args.reduced_count;
  const int64_t base = active ? offset_of(args.in_kept, o) : 0;
  const uint64_t x = args.in_kept.data;
  const int32_t dtype = args.in_kept.dtype;
  if (args.op == kReduceSum || args.op == kReduceMean) {
    double acc = 0.0;
    if (active) {
      for (int64_t r = lane; r < R; r += G) {
        acc += static_cast<double>(load_float(x, dtype, base + offset_of(args.in_reduced, r)));
      }
    }
    acc = group_reduce(acc, G, sums, SumOp{});
    if (active && lane == 0) {
      const double v = args.op == kReduceSum ? acc : acc / static_cast<double>(R);
      store(args.out_kept, offset_of(args.out_kept, o), static_cast<float>(v));
    }
  } else if (args.op == kReduceMax) {
    float acc = -INFINITY;
    if (active) {
      for (int64_t r = lane; r < R; r += G) {
        acc = nan_max(acc, load_float(x, dtype, base + offset_of(args.in_reduced, r)));
      }
    }
    acc = group_reduce(acc, G, maxima, MaxOp{});
    if (active && lane == 0) store(args.out_kept, offset_of(args.out_kept, o), acc);
  } else {
    ArgmaxPair acc{-INFINITY, INT64_MAX};
    if (active) {
      for (int64_t r = lane; r < R; r += G) {
        acc = better(acc, {load_float(x, dtype, base + offset_of(args.in_reduced, r)), r});
      }
    }
    acc = group_argmax(acc, G);
    if (active && lane == 0) {
      store_int(args.out_kept.data, args.out_kept.dtype, offset_of(args.out_kept, o), acc.index);
    }
  }
}

}  // namespace
}  // namespace sy

// blockDim.x is a multiple of group_size; each group of group_size threads reduces one output.
extern "C" __global__ void __launch_bounds__(1024) sy_reduce(SyReduceArgs args) {
  const int groups_per_block = blockDim.x / args.group_size;
  const int group = threadIdx.x / args.group_size;
  const int lane = threadIdx.x % args.group_size;
  const int64_t step = static_cast<int64_t>(gridDim.x) * groups_per_block;
  // The loop bound is uniform over the block so that every thread reaches group_reduce's
  // barriers the same number of times.
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * groups_per_block; first < args.kept_count;
       first += step) {
    const int64_t o = first + group;
    sy::reduce_one(args, o, o < args.kept_count, lane);
  }
}
