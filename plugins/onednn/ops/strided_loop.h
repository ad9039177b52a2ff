// StridedLoop: the N-ary elementwise loop under every elementwise op, copy and cast.
//
// Operand 0 is the output; every operand has the output's shape (broadcast inputs carry stride 0,
// see broadcast_view). plan_loop() drops size-1 axes and merges axes that are contiguous in every
// operand, so a dense tensor of any rank becomes one long inner loop. run_loop() walks the flat
// element range in spans of the innermost axis, optionally split across OpenMP threads, and hands
// each span to a body that sees the span's base pointers and inner byte strides, so that it can
// pick a vectorisable path when the strides are the element size (or 0 for a broadcast operand).
#pragma once

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "tensor_view.h"

namespace sy_onednn {

template <int N>
struct StridedLoop {
  int rank = 1;
  int64_t numel = 0;
  int64_t shape[SY_MAX_RANK] = {};
  int64_t byte_strides[N][SY_MAX_RANK] = {};
  char* data[N] = {};
};

// Plans a loop over operands that all have views[0]'s shape.
template <int N>
StridedLoop<N> plan_loop(const std::array<const TensorView*, N>& views) {
  StridedLoop<N> loop;
  const TensorView& out = *views[0];
  loop.numel = out.numel();
  for (int k = 0; k < N; ++k) loop.data[k] = views[k]->data;
  int rank = 0;
  for (int d = 0; d < out.rank; ++d) {
    if (out.shape[d] == 1) continue;
    bool merge = rank > 0;
    for (int k = 0; k < N && merge; ++k) {
      int64_t stride = views[k]->strides[d] * static_cast<int64_t>(views[k]->element_size());
      merge = loop.byte_strides[k][rank - 1] == stride * out.shape[d];
    }
    if (merge) {
      loop.shape[rank - 1] *= out.shape[d];
      for (int k = 0; k < N; ++k) {
        loop.byte_strides[k][rank - 1] =
            views[k]->strides[d] * static_cast<int64_t>(views[k]->element_size());
      }
      continue;
    }
    loop.shape[rank] = out.shape[d];
    for (int k = 0; k < N; ++k) {
      loop.byte_strides[k][rank] =
          views[k]->strides[d] * static_cast<int64_t>(views[k]->element_size());
    }
    ++rank;
  }
  if (rank == 0) {  // a scalar, or all axes of size 1
    loop.shape[0] = 1;
    rank = 1;
  }
  loop.rank = rank;
  return loop;
}

// plan_loop over the operands with their axes ordered as the output's lie in memory (outermost
// first, by decreasing stride; a stable sort, so a row-major output keeps its order). An
// elementwise op gives the same values in any order, and this one makes the inner span dense in
// the output, and in inputs laid out like it: a channels-last [N, C, H, W] output walks C
// innermost instead of W at stride C. Not for loops whose order matters (reductions).
template <int N>
StridedLoop<N> plan_loop_in_memory_order(const std::array<const TensorView*, N>& views) {
  const TensorView& out = *views[0];
  int order[SY_MAX_RANK];
  for (int d = 0; d < out.rank; ++d) order[d] = d;
  std::stable_sort(order, order + out.rank,
                   [&out](int i, int j) { return out.strides[i] > out.strides[j]; });
  bool identity = true;
  for (int d = 0; d < out.rank; ++d) identity = identity && order[d] == d;
  if (identity) return plan_loop<N>(views);
  std::array<TensorView, N> permuted;
  std::array<const TensorView*, N> pointers;
  for (int k = 0; k < N; ++k) {
    permuted[k] = *views[k];
    for (int d = 0; d < out.rank; ++d) {
      permuted[k].shape[d] = views[k]->shape[order[d]];
      permuted[k].strides[d] = views[k]->strides[order[d]];
    }
    pointers[k] = &permuted[k];
  }
  return plan_loop<N>(pointers);
}

// Calls body(ptrs, inner_byte_strides, count) for the spans covering elements [begin, end).
template <int N, typename Body>
void run_loop_range(const StridedLoop<N>& loop, int64_t begin, int64_t end, Body& body) {
  int64_t index[SY_MAX_RANK];
  int64_t rest = begin;
  for (int d = loop.rank - 1; d >= 0; --d) {
    index[d] = rest % loop.shape[d];
    rest /= loop.shape[d];
  }
  const int last = loop.rank - 1;
  int64_t inner_strides[N];
  for (int k = 0; k < N; ++k) inner_strides[k] = loop.byte_strides[k][last];
  for (int64_t position = begin; position < end;) {
    char* ptrs[N];
    for (int k = 0; k < N; ++k) {
      int64_t offset = 0;
      for (int d = 0; d < loop.rank; ++d) offset += index[d] * loop.byte_strides[k][d];
      ptrs[k] = loop.data[k] + offset;
    }
    int64_t count = std::min(loop.shape[last] - index[last], end - position);
    body(ptrs, inner_strides, count);
    position += count;
    index[last] += count;
    for (int d = last; d > 0 && index[d] == loop.shape[d]; --d) {
      index[d] = 0;
      ++index[d - 1];
    }
  }
}

// Runs the whole loop on `threads` threads (the body must not throw).
template <int N, typename Body>
void run_loop(const StridedLoop<N>& loop, int threads, Body&& body) {
  if (loop.numel == 0) return;
  if (threads <= 1) {
    run_loop_range(loop, 0, loop.numel, body);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    int64_t workers = omp_get_num_threads();
    int64_t chunk = (loop.numel + workers - 1) / workers;
    chunk = (chunk + 63) / 64 * 64;
    int64_t begin = std::min(loop.numel, chunk * omp_get_thread_num());
    int64_t end = std::min(loop.numel, begin + chunk);
    if (begin < end) run_loop_range(loop, begin, end, body);
  }
}

// Calls fn(begin, end) over [0, count) split into `threads` contiguous ranges.
template <typename Fn>
void parallel_ranges(int64_t count, int threads, Fn&& fn) {
  if (count <= 0) return;
  if (threads <= 1 || count == 1) {
    fn(int64_t{0}, count);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    int64_t workers = omp_get_num_threads();
    int64_t chunk = (count + workers - 1) / workers;
    int64_t begin = std::min(count, chunk * omp_get_thread_num());
    int64_t end = std::min(count, begin + chunk);
    if (begin < end) fn(begin, end);
  }
}

// Calls fn(part, begin, end) for `parts` contiguous parts of [0, count), part p covering
// [count * p / parts, count * (p + 1) / parts), one thread a part: a part's result can go to slot
// `part` and the slots be combined afterwards in a fixed order, whatever the timing.
template <typename Fn>
void parallel_parts(int64_t count, int parts, Fn&& fn) {
  parallel_ranges(parts, parts, [&](int64_t first, int64_t last) {
    for (int64_t p = first; p < last; ++p) fn(p, count * p / parts, count * (p + 1) / parts);
  });
}

// How many floats an inner loop should span for its per-loop costs (alias checks, a vector
// prologue and tail) to stop mattering: rows shorter than this are read several at a time
// (binary.cpp's per-channel scales, reduce.cpp's narrow-row sums).
constexpr int64_t kLongRowFloats = 512;

// `in` read as a tensor of shape [shape] under numpy broadcasting (aligned on the right, size-1
// axes read with stride 0). Returns false when the shapes are incompatible.
bool broadcast_view(const TensorView& in, const int64_t* shape, int rank, TensorView* out);

}  // namespace sy_onednn
