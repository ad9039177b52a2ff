// Softmax family and cross-entropy (sections 7-8 of docs/ops.md). A group of threads handles one
// row: the max, then the sum of exp(x - max), then the outputs, so an input row with +inf or only
// -inf gives NaN as in PyTorch.
#include <math.h>

#include "common.cuh"

namespace sy {
namespace {

struct Row {
  int64_t in0, in1, out;  // offsets of the row's first element in each tensor
};

__device__ __forceinline__ Row row_offsets(const SyRowArgs& a, int64_t row) {
  return {offset_of(a.in0, row), offset_of(a.in1, row), offset_of(a.out, row)};
}

__device__ __forceinline__ float in0_at(const SyRowArgs& a, const Row& r, int64_t j) {
  return load(a.in0, r.in0 + j * a.in0_axis_stride);
}
__device__ __forceinline__ float in1_at(const SyRowArgs& a, const Row& r, int64_t j) {
  return load(a.in1, r.in1 + j * a.in1_axis_stride);
}

// max and sum(exp(x - max)) of in0's row, known to every thread of the group.
__device__ void row_max_and_sum(const SyRowArgs& a, const Row& r, bool active, int lane,
                                float* max_out, float* sum_out) {
  __shared__ float scratch[32];
  const int G = a.group_size;
  float m = -INFINITY;
  if (active) {
    for (int64_t j = lane; j < a.axis_length; j += G) m = nan_max(m, in0_at(a, r, j));
  }
  m = group_reduce(m, G, scratch, MaxOp{});
  float s = 0.0f;
  if (active) {
    for (int64_t j = lane; j < a.axis_length; j += G) s += expf(in0_at(a, r, j) - m);
  }
  s = group_reduce(s, G, scratch, SumOp{});
  *max_out = m;
  *sum_out = s;
}

__device__ void softmax_forward_row(const SyRowArgs& a, const Row& r, bool active, int lane) {
  float m, s;
  row_max_and_sum(a, r, active, lane, &m, &s);
  if (!active) return;
  const float log_s = logf(s);
  for (int64_t j = lane; j < a.axis_length; j += a.group_size) {
    const float x = in0_at(a, r, j);
    const float y = a.op == kSoftmax ? expf(x - m) / s : x - m - log_s;
    store(a.out, r.out + j * a.out_axis_stride, y);
  }
}

// in0 = grad_out, in1 = y.
__device__ void softmax_backward_row(const SyRowArgs& a, const Row& r, bool active, int lane) {
  __shared__ float scratch[32];
  const int G = a.group_size;
  const bool log_form = a.op == kLogSoftmaxBackward;
  float dot = 0.0f;
  if (active) {
    for (int64_t j = lane; j < a.axis_length; j += G) {
      const float g = in0_at(a, r, j);
      dot += log_form ? g : g * in1_at(a, r, j);
    }
  }
  dot = group_reduce(dot, G, scratch, SumOp{});
  if (!active) return;
  for (int64_t j = lane; j < a.axis_length; j += G) {
    const float g = in0_at(a, r, j);
    const float y = in1_at(a, r, j);
    const float gx = log_form ? g - expf(y) * dot : y * (g - dot);
    store(a.out, r.out + j * a.out_axis_stride, gx);
  }
}

}  // namespace
}  // namespace sy

// blockDim.x is a multiple of group_size; the loop bound is uniform over the block (barriers).
extern "C" __global__ void __launch_bounds__(1024) sy_softmax(SyRowArgs args) {
  const int groups_per_block = blockDim.x / args.group_size;
  const int lane = threadIdx.x % args.group_size;
  const int64_t step = static_cast<int64_t>(gridDim.x) * groups_per_block;
  const bool backward = args.op == sy::kSoftmaxBackward || args.op == sy::kLogSoftmaxBackward;
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * groups_per_block; first < args.rows;
       first += step) {
    const int64_t row = first + threadIdx.x / args.group_size;
    const bool active = row < args.rows;
    const sy::Row r = active ? sy::row_offsets(args, row) : sy::Row{0, 0, 0};
    if (backward) {
      sy::softmax_backward_row(args, r, active, lane);
    } else {
      sy::softmax_forward_row(args, r, active, lane);
    }
  }
}

// Forward (op 32): out is an f32 vector of per-row losses, summed or averaged by sy_reduce.
// Backward (op 33): out is grad_logits. A label outside [0, C) gives NaN for that row.
extern "C" __global__ void __launch_bounds__(1024) sy_cross_entropy(SyCrossEntropyArgs args) {
  using namespace sy;
  const SyRowArgs& a = args.rows;
  const int groups_per_block = blockDim.x / a.group_size;
  const int lane = threadIdx.x % a.group_size;
  const int64_t step = static_cast<int64_t>(gridDim.x) * groups_per_block;
  const bool backward = a.op == 33;
  const float grad_loss =
      backward ? load_float(args.grad_loss.data, args.grad_loss.dtype, 0) : 0.0f;
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * groups_per_block; first < a.rows;
       first += step) {
    const int64_t row = first + threadIdx.x / a.group_size;
    const bool active = row < a.rows;
    const Row r = active ? row_offsets(a, row) : Row{0, 0, 0};
    float m, s;
    row_max_and_sum(a, r, active, lane, &m, &s);
    if (!active) continue;
    const int64_t label =
        load_int(args.labels.data, args.labels.dtype, offset_of(args.labels, row));
    const bool valid = label >= 0 && label < a.axis_length;
    if (!backward) {
      if (lane == 0) {
        const float loss = valid ? m + logf(s) - in0_at(a, r, label) : NAN;
        store(a.out, r.out, loss);
      }
      continue;
    }
    for (int64_t j = lane; j < a.axis_length; j += a.group_size) {
      const float p = expf(in0_at(a, r, j) - m) / s;
      const float target = j == label ? 1.0f : 0.0f;
      const float gx = valid ? (p - target) * grad_loss / a.divisor : NAN;
      store(a.out, r.out + j * a.out_axis_stride, gx);
    }
  }
}
