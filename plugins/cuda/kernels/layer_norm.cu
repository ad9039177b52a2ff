// Layer normalisation over the trailing axes (section 11 of docs/ops.md). The forward and the
// grad_x kernels give each row to a group of threads; the parameter gradients give each block 32
// normalised positions and 32 lanes of rows (sy_layer_norm_params below).
#include <math.h>

#include "common.cuh"

namespace sy {
namespace {

__device__ __forceinline__ float at(const SyTensorArg& lead_view, int64_t lead_offset,
                                    const SyTensorArg& norm_view, int64_t d) {
  return load(lead_view, lead_offset + offset_of(norm_view, d));
}

__device__ void forward_row(const SyLayerNormArgs& a, int64_t row, bool active, int lane) {
  __shared__ float scratch[32];
  const int G = a.group_size;
  const int64_t D = a.row_length;
  const int64_t x0 = active ? offset_of(a.x_lead, row) : 0;
  float sum = 0.0f;
  if (active) {
    for (int64_t d = lane; d < D; d += G) sum += at(a.x_lead, x0, a.x_norm, d);
  }
  const float mean = group_reduce(sum, G, scratch, SumOp{}) / static_cast<float>(D);
  float sq = 0.0f;
  if (active) {
    for (int64_t d = lane; d < D; d += G) {
      const float c = at(a.x_lead, x0, a.x_norm, d) - mean;
      sq += c * c;
    }
  }
  const float var = group_reduce(sq, G, scratch, SumOp{}) / static_cast<float>(D);
  const float rstd = 1.0f / sqrtf(var + a.epsilon);
  if (!active) return;
  const int64_t y0 = offset_of(a.out_lead, row);
  for (int64_t d = lane; d < D; d += G) {
    float y = (at(a.x_lead, x0, a.x_norm, d) - mean) * rstd;
    if (a.gamma.data != 0)
      y = y * load(a.gamma, offset_of(a.gamma, d)) + load(a.beta, offset_of(a.beta, d));
    store(a.out_lead, y0 + offset_of(a.out_norm, d), y);
  }
  if (lane == 0) {
    if (a.mean.data != 0) store(a.mean, offset_of(a.mean, row), mean);
    if (a.rstd.data != 0) store(a.rstd, offset_of(a.rstd, row), rstd);
  }
}

// grad_x = rstd * (g - sum(g) / D - xhat * sum(g * xhat) / D), g = grad_y * gamma.
__device__ void backward_row(const SyLayerNormArgs& a, int64_t row, bool active, int lane) {
  __shared__ float scratch[32];
  const int G = a.group_size;
  const int64_t D = a.row_length;
  const int64_t x0 = active ? offset_of(a.x_lead, row) : 0;
  const int64_t g0 = active ? offset_of(a.g_lead, row) : 0;
  const float mean = active ? load(a.mean, offset_of(a.mean, row)) : 0.0f;
  const float rstd = active ? load(a.rstd, offset_of(a.rstd, row)) : 0.0f;
  float sum_g = 0.0f, sum_gx = 0.0f;
  if (active) {
    for (int64_t d = lane; d < D; d += G) {
      const float g = at(a.g_lead, g0, a.g_norm, d) * load(a.gamma, offset_of(a.gamma, d));
      sum_g += g;
      sum_gx += g * (at(a.x_lead, x0, a.x_norm, d) - mean) * rstd;
    }
  }
  sum_g = group_reduce(sum_g, G, scratch, SumOp{});
  sum_gx = group_reduce(sum_gx, G, scratch, SumOp{});
  if (!active) return;
  const int64_t out0 = offset_of(a.out_lead, row);
  const float inv_d = 1.0f / static_cast<float>(D);
  for (int64_t d = lane; d < D; d += G) {
    const float g = at(a.g_lead, g0, a.g_norm, d) * load(a.gamma, offset_of(a.gamma, d));
    const float xhat = (at(a.x_lead, x0, a.x_norm, d) - mean) * rstd;
    store(a.out_lead, out0 + offset_of(a.out_norm, d),
          rstd * (g - sum_g * inv_d - xhat * sum_gx * inv_d));
  }
}

}  // namespace
}  // namespace sy

// Forward when g_lead.data == 0, otherwise grad_x. blockDim.x is a multiple of group_size.
extern "C" __global__ void __launch_bounds__(1024) sy_layer_norm(SyLayerNormArgs args) {
  const int groups_per_block = blockDim.x / args.group_size;
  const int lane = threadIdx.x % args.group_size;
  const int64_t step = static_cast<int64_t>(gridDim.x) * groups_per_block;
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * groups_per_block; first < args.rows;
       first += step) {
    const int64_t row = first + threadIdx.x / args.group_size;
    if (args.g_lead.data == 0) {
      sy::forward_row(args, row, row < args.rows, lane);
    } else {
      sy::backward_row(args, row, row < args.rows, lane);
    }
  }
}

// grad_gamma[d] = sum over rows of grad_y * xhat; grad_beta[d] = sum over rows of grad_y.
// A block of kParamThreads threads takes 32 consecutive positions d (one per lane, so the reads
// along a row are coalesced) and kParamRowLanes row lanes: lane r sums rows r, r + 32, ..., and
// the 32 partial sums of a position are added in a fixed order, so the result does not depend on
// scheduling. (One thread per position walking every row left most of the GPU idle: 2.6 ms for
// 2048 rows of 256 on an H200, against tens of microseconds this way.)
constexpr int kParamRowLanes = 32;
constexpr int kParamThreads = 32 * kParamRowLanes;

extern "C" __global__ void __launch_bounds__(kParamThreads)
    sy_layer_norm_params(SyLayerNormParamArgs a) {
  using namespace sy;
  __shared__ float partial_gamma[kParamRowLanes][33];
  __shared__ float partial_beta[kParamRowLanes][33];
  const int column = threadIdx.x % 32;
  const int row_lane = threadIdx.x / 32;
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * 32; first < a.row_length;
       first += static_cast<int64_t>(gridDim.x) * 32) {
    const int64_t d = first + column;
    float sum_gamma = 0.0f, sum_beta = 0.0f;
    if (d < a.row_length) {
      const int64_t xd = offset_of(a.x_norm, d);
      const int64_t gd = offset_of(a.g_norm, d);
      for (int64_t row = row_lane; row < a.rows; row += kParamRowLanes) {
        const float g = load(a.g_lead, offset_of(a.g_lead, row) + gd);
        const float x = load(a.x_lead, offset_of(a.x_lead, row) + xd);
        const float xhat =
            (x - load(a.mean, offset_of(a.mean, row))) * load(a.rstd, offset_of(a.rstd, row));
        sum_gamma += g * xhat;
        sum_beta += g;
      }
    }
    partial_gamma[row_lane][column] = sum_gamma;
    partial_beta[row_lane][column] = sum_beta;
    __syncthreads();
    if (row_lane == 0 && d < a.row_length) {
      float total_gamma = 0.0f, total_beta = 0.0f;
      for (int r = 0; r < kParamRowLanes; ++r) {
        total_gamma += partial_gamma[r][column];
        total_beta += partial_beta[r][column];
      }
      store(a.grad_gamma, offset_of(a.grad_gamma, d), total_gamma);
      store(a.grad_beta, offset_of(a.grad_beta, d), total_beta);
    }
    __syncthreads();
  }
}
