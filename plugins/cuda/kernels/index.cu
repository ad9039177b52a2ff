// GATHER (index_select) and SCATTER_ADD (index_add_) along one axis (section 12 of docs/ops.md).
// An index outside [0, size) cannot be reported from here (the host cannot read device memory at
// dispatch): GATHER writes NaN (float) or leaves the element (integer); SCATTER_ADD skips it.
#include <math.h>

#include "common.cuh"

namespace sy {
namespace {

// Offsets of `linear` (over iterated's shape) in iterated and, with the axis coordinate j replaced
// by indices[j], in indexed. Returns false for an out-of-range index.
__device__ bool index_offsets(const SyIndexArgs& a, int64_t linear, int64_t* iterated_off,
                              int64_t* indexed_off) {
  int64_t it = 0, ix = 0;
  for (int d = a.iterated.rank - 1; d >= 0; --d) {
    const int64_t extent = a.iterated.shape[d];
    const int64_t c = d == 0 ? linear : linear % extent;
    linear = d == 0 ? 0 : linear / extent;
    it += c * a.iterated.strides[d];
    if (d == a.axis) {
      const int64_t target = load_int(a.indices.data, a.indices.dtype, c * a.indices.strides[0]);
      if (target < 0 || target >= a.indexed_axis_size) return false;
      ix += target * a.indexed.strides[d];
    } else {
      ix += c * a.indexed.strides[d];
    }
  }
  *iterated_off = it;
  *indexed_off = ix;
  return true;
}

__device__ __forceinline__ int element_size(int32_t dtype) {
  return dtype == kI64 ? 8 : (dtype == kF16 || dtype == kBF16 ? 2 : 4);
}

__device__ __forceinline__ void copy_bits(uint64_t dst, int64_t dst_off, uint64_t src,
                                          int64_t src_off, int size) {
  if (size == 8) {
    reinterpret_cast<uint64_t*>(dst)[dst_off] = reinterpret_cast<const uint64_t*>(src)[src_off];
  } else if (size == 4) {
    reinterpret_cast<uint32_t*>(dst)[dst_off] = reinterpret_cast<const uint32_t*>(src)[src_off];
  } else {
    reinterpret_cast<uint16_t*>(dst)[dst_off] = reinterpret_cast<const uint16_t*>(src)[src_off];
  }
}

}  // namespace
}  // namespace sy

// iterated = out, indexed = x.
extern "C" __global__ void sy_gather(SyIndexArgs a) {
  using namespace sy;
  const int size = element_size(a.iterated.dtype);
  const bool is_float = a.iterated.dtype <= kBF16;
  for (int64_t linear = global_thread(); linear < a.numel; linear += grid_stride()) {
    int64_t out_off, x_off;
    if (index_offsets(a, linear, &out_off, &x_off)) {
      copy_bits(a.iterated.data, out_off, a.indexed.data, x_off, size);
    } else if (is_float) {
      store(a.iterated, offset_of(a.iterated, linear), NAN);
    }
  }
}

// iterated = src, indexed = out (F32, I32 or I64; f16/bf16 outputs go through an f32 copy).
extern "C" __global__ void sy_scatter_add(SyIndexArgs a) {
  using namespace sy;
  for (int64_t linear = global_thread(); linear < a.numel; linear += grid_stride()) {
    int64_t src_off, out_off;
    if (!index_offsets(a, linear, &src_off, &out_off)) continue;
    if (a.indexed.dtype == kF32) {
      atomicAdd(reinterpret_cast<float*>(a.indexed.data) + out_off, load(a.iterated, src_off));
    } else if (a.indexed.dtype == kI32) {
      atomicAdd(reinterpret_cast<int*>(a.indexed.data) + out_off,
                static_cast<int>(load_int(a.iterated.data, kI32, src_off)));
    } else {
      // Two's-complement addition is the same for signed and unsigned 64-bit integers.
      atomicAdd(reinterpret_cast<unsigned long long*>(a.indexed.data) + out_off,
                static_cast<unsigned long long>(load_int(a.iterated.data, kI64, src_off)));
    }
  }
}

// SCATTER_ADD for a `deterministic` device, float outputs (F32; f16/bf16 through an f32 copy):
// one thread per out element adds, in index order, every src slice whose index names it, so the
// sum never depends on which thread got there first (sy_scatter_add's atomics do). The same order
// as the reference. Costs a pass over all indices per out element.
// iterated = out (the iteration space), indexed = src; indexed_axis_size = out's extent on axis.
extern "C" __global__ void sy_scatter_add_ordered(SyIndexArgs a) {
  using namespace sy;
  const int64_t count = a.indices.shape[0];
  for (int64_t linear = global_thread(); linear < a.numel; linear += grid_stride()) {
    int64_t rest = linear, out_off = 0, src_base = 0, target = 0;
    for (int d = a.iterated.rank - 1; d >= 0; --d) {
      const int64_t extent = a.iterated.shape[d];
      const int64_t c = d == 0 ? rest : rest % extent;
      rest = d == 0 ? 0 : rest / extent;
      out_off += c * a.iterated.strides[d];
      if (d == a.axis) {
        target = c;
      } else {
        src_base += c * a.indexed.strides[d];
      }
    }
    float acc = load(a.iterated, out_off);
    bool any = false;
    for (int64_t j = 0; j < count; ++j) {
      if (load_int(a.indices.data, a.indices.dtype, j * a.indices.strides[0]) != target) continue;
      acc += load(a.indexed, src_base + j * a.indexed.strides[a.axis]);
      any = true;
    }
    if (any) store(a.iterated, out_off, acc);
  }
}
